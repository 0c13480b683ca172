//! What `solaria export` and `solaria import` did, and how a person reads it:
//! records counted by type, the files written, what was left out and why.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Records counted by their type on the wire (`session`, `observation`,
/// `summary`, and each knowledge kind: `decision`, `memory`, `commit`…).
pub type Counts = BTreeMap<String, usize>;

fn counted(counts: &Counts) -> String {
    if counts.is_empty() {
        return "nothing".to_string();
    }
    counts
        .iter()
        .map(|(kind, n)| match (*n, kind.strip_suffix('y')) {
            (1, _) => format!("1 {kind}"),
            (n, Some(stem)) => format!("{n} {stem}ies"),
            (n, None) => format!("{n} {kind}s"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What an export wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExportReport {
    /// `json` or `markdown`.
    pub format: String,
    /// The file (JSON) or the directory (Markdown) written; `-` for standard output.
    pub written: String,
    /// Records written, by type.
    pub records: Counts,
    /// Vectors written beside them (`--vectors`).
    pub vectors: usize,
    /// The projects written, by name.
    pub projects: Vec<String>,
    /// Projects left out because `[sync] local_only_projects` keeps them on this
    /// machine (name one with `--project` to export it all the same).
    pub local_only_left_out: Vec<String>,
    /// Markdown only: the files written, one per project and an index.
    pub files: Vec<String>,
}

impl ExportReport {
    pub fn text(&self) -> String {
        let total: usize = self.records.values().sum();
        let mut out = format!(
            "Exported {total} record(s) of {} project(s) as {} to {}: {}.\n",
            self.projects.len(),
            self.format,
            self.written,
            counted(&self.records)
        );
        if self.vectors > 0 {
            let _ = writeln!(
                out,
                "With {} vector(s): the records need no embedding again.",
                self.vectors
            );
        }
        if !self.local_only_left_out.is_empty() {
            let _ = writeln!(
                out,
                "Left out, local only by your config: {} (name one with --project to export it).",
                self.local_only_left_out.join(", ")
            );
        }
        out
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    /// What was imported: `solaria`, `claude-mem`…
    pub source: String,
    /// The file read.
    pub path: String,
    /// Records stored: new, or (from a SOLARIA export) newer versions of records
    /// held.
    pub stored: Counts,
    /// Records of another tool imported before whose source changed since: a new
    /// version stored.
    pub updated: Counts,
    /// Records already held as they are (a second import of the same file adds
    /// nothing).
    pub unchanged: Counts,
    /// Records not stored, each `id: why`.
    pub skipped: Vec<String>,
    /// Local changes not yet synced that an imported version replaced; kept as
    /// conflicts (`solaria conflicts`).
    pub conflicts: usize,
    /// Vectors stored beside their records (a SOLARIA export made with
    /// `--vectors`, by the model this machine's index uses).
    pub vectors_stored: usize,
    /// Vectors not stored, and why (another model's; no model installed here).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vectors_not_stored: Vec<String>,
    /// Machines new here whose records now read as this person's own (a file
    /// names them without a person, and no `--from` said whose they are).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labelled_as_yours: Vec<String>,
    /// Machines `--from` named as the file's writer's that the account named
    /// (this machine among them): what the account says of them stands.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_as_the_account_says: Vec<String>,
}

/// The most skipped records named one by one in the text.
const SKIPPED_SHOWN: usize = 10;

impl ImportReport {
    pub fn text(&self) -> String {
        let stored: usize = self.stored.values().sum();
        let unchanged: usize = self.unchanged.values().sum();
        let mut out = format!(
            "Imported from {} ({}): {stored} record(s) stored ({}); {unchanged} already held.\n",
            self.source,
            self.path,
            counted(&self.stored)
        );
        let updated: usize = self.updated.values().sum();
        if updated > 0 {
            let _ = writeln!(
                out,
                "{updated} changed at the source since the last import, updated: {}.",
                counted(&self.updated)
            );
        }
        if self.vectors_stored > 0 {
            let _ = writeln!(
                out,
                "{} vector(s) stored: those records need no embedding.",
                self.vectors_stored
            );
        }
        for why in &self.vectors_not_stored {
            let _ = writeln!(out, "{why}");
        }
        if self.conflicts > 0 {
            let _ = writeln!(
                out,
                "{} local change(s) not yet synced were replaced by imported versions: see `solaria conflicts`.",
                self.conflicts
            );
        }
        if !self.labelled_as_yours.is_empty() {
            let _ = writeln!(
                out,
                "Records written on {} read as yours: if the file is another person's, import it again with `--from HANDLE`.",
                self.labelled_as_yours.join(", ")
            );
        }
        if !self.kept_as_the_account_says.is_empty() {
            let _ = writeln!(
                out,
                "Not relabelled by --from: {} (your account names them, and what it says stands over a file).",
                self.kept_as_the_account_says.join(", ")
            );
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(out, "Skipped {}:", self.skipped.len());
            for line in self.skipped.iter().take(SKIPPED_SHOWN) {
                let _ = writeln!(out, "  {line}");
            }
            if self.skipped.len() > SKIPPED_SHOWN {
                let _ = writeln!(
                    out,
                    "  … and {} more (--json lists them all)",
                    self.skipped.len() - SKIPPED_SHOWN
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_words() {
        let counts: Counts = [
            ("memory", 2),
            ("session", 1),
            ("summary", 3),
            ("decision", 2),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
        assert_eq!(
            counted(&counts),
            "2 decisions, 2 memories, 1 session, 3 summaries"
        );
    }
}
