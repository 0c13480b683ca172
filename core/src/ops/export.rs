//! `solaria export`: the memory taken out whole. JSON is the complete, versioned
//! document `solaria import solaria` reads back (every record as it travels in a
//! sync, each on a line of its own); Markdown is a page per project for people.
//! Either way every record leaves as it would leave in a push: `<private>` spans
//! stripped and secrets redacted (`WireRecord::cleaned`).

use super::{OpError, OpResult};
use crate::app::App;
use crate::present::portable::ExportReport;
use crate::store::export::{self as store_export, Selection};
use crate::store::{Store, vectors_wire};
use serde::{Deserialize, Serialize};
use solaria_hook::files::{Access, write_atomic};
use solaria_shared::knowledge::Knowledge;
use solaria_shared::render::markdown::{ProjectPage, project_page};
use solaria_shared::render::{NameOf, TimeStyle};
use solaria_shared::wire::{MachineName, WireRecord};
use solaria_shared::{MachineId, Summary, UnixMillis};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Write;
use std::path::Path;

/// What the header of an export says it is.
pub const FORMAT: &str = "solaria-export";
/// The newest version of the document this SOLARIA writes and reads. A reader
/// refuses a newer one; a change that an older reader would misread is a new
/// version.
pub const FORMAT_VERSION: u32 = 1;

/// The first line of an export: what it is, where and when it was made, what it
/// holds, and the names of the machines its records name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    pub exported_at: UnixMillis,
    /// The machine that wrote the file.
    pub machine: MachineName,
    /// The projects asked for (`--project`), by key; every project when absent.
    #[serde(default)]
    pub projects: Option<Vec<String>>,
    /// Only what was written or changed since then.
    #[serde(default)]
    pub since: Option<UnixMillis>,
    /// Whether erased and forgotten records are in it, as tombstones.
    #[serde(default)]
    pub tombstones: bool,
    /// Whether the records' vectors follow them (`vectors`, after `records`).
    #[serde(default)]
    pub vectors: bool,
    /// Every machine the store knew by name, with whose each is when a teammate's.
    #[serde(default)]
    pub machines: Vec<MachineName>,
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    /// Projects by name, key, slug or path; every project when empty.
    pub projects: Vec<String>,
    pub since: Option<UnixMillis>,
    pub tombstones: bool,
    /// JSON only: each record's vector too, so that the machine importing it
    /// need not embed the records again (when it runs the same model).
    pub vectors: bool,
}

/// A record's type as counted in reports: its wire type, a knowledge record's kind.
pub fn kind_name(record: &WireRecord) -> String {
    match record {
        WireRecord::Knowledge(k) => k.kind().as_str().to_string(),
        other => other.type_name().to_string(),
    }
}

/// The selection a request makes, and the local-only projects it leaves out.
fn selection(
    app: &App,
    store: &Store,
    request: &ExportRequest,
) -> OpResult<(Selection, Vec<String>)> {
    let mut selection = Selection {
        since: request.since,
        tombstones: request.tombstones,
        ..Selection::default()
    };
    if request.projects.is_empty() {
        let local_only = app.config.sync.local_only_projects.clone();
        let left_out = store_export::left_out(store.conn(), &local_only)?;
        selection.except = local_only;
        return Ok((selection, left_out));
    }
    // Named on purpose: exported even when local only.
    let mut keys = BTreeSet::new();
    for text in &request.projects {
        keys.extend(
            super::project::resolve(store, text)?
                .into_iter()
                .map(|p| p.key),
        );
    }
    selection.projects = Some(keys.into_iter().collect());
    Ok((selection, Vec::new()))
}

fn this_machine(store: &Store, app: &App) -> MachineName {
    MachineName {
        id: store.machine_id(),
        name: app.config.machine_name(),
        person: None,
    }
}

/// `value` as JSON on one line.
fn json_line(value: &impl Serialize) -> OpResult<String> {
    serde_json::to_string(value).map_err(|e| OpError::BadInput(format!("cannot write JSON: {e}")))
}

fn write_error(what: &str, e: std::io::Error) -> OpError {
    OpError::BadInput(format!("cannot write {what}: {e}"))
}

/// Writes the JSON export to `out` (`written` names it in the report).
pub fn json(
    app: &App,
    request: &ExportRequest,
    out: &mut dyn Write,
    written: &str,
) -> OpResult<ExportReport> {
    let store = app.store()?;
    let (selection, left_out) = selection(app, &store, request)?;
    let header = Header {
        format: FORMAT.to_string(),
        version: FORMAT_VERSION,
        exported_at: UnixMillis::now(),
        machine: this_machine(&store, app),
        projects: selection
            .projects
            .clone()
            .filter(|_| !request.projects.is_empty()),
        since: selection.since,
        tombstones: selection.tombstones,
        vectors: request.vectors,
        machines: store_export::machines(store.conn())?,
    };
    let mut report = ExportReport {
        format: "json".into(),
        written: written.to_string(),
        local_only_left_out: left_out,
        ..ExportReport::default()
    };
    let mut projects = BTreeSet::new();
    // One record a line, so that an error reading it back names its line: the
    // header is line 1, the record i (from 0) line i + 2.
    write!(
        out,
        "{{\"solaria_export\":{},\"records\":[",
        json_line(&header)?
    )
    .map_err(|e| write_error(written, e))?;
    let mut first = true;
    // A snapshot, so the file holds one moment of the store.
    let snapshot = store.snapshot()?;
    let conn = snapshot.as_deref().unwrap_or(store.conn());
    let mut ids = HashSet::new();
    store_export::each_record(conn, &selection, |record: WireRecord| {
        let record = record.cleaned();
        *report.records.entry(kind_name(&record)).or_default() += 1;
        projects.insert(record.project().name.clone());
        if request.vectors {
            ids.insert(record.id());
        }
        let line = json_line(&record)?;
        let sep = if first { "\n" } else { ",\n" };
        first = false;
        write!(out, "{sep}{line}").map_err(|e| write_error(written, e))
    })?;
    write!(out, "\n]").map_err(|e| write_error(written, e))?;
    if request.vectors {
        write!(out, ",\"vectors\":[").map_err(|e| write_error(written, e))?;
        let mut first = true;
        report.vectors = vectors_wire::each_current_of(conn, &ids, |v| {
            let sep = if first { "\n" } else { ",\n" };
            first = false;
            write!(out, "{sep}{}", json_line(&v)?).map_err(|e| write_error(written, e))
        })?;
        write!(out, "\n]").map_err(|e| write_error(written, e))?;
    }
    writeln!(out, "}}").map_err(|e| write_error(written, e))?;
    out.flush().map_err(|e| write_error(written, e))?;
    report.projects = projects.into_iter().collect();
    Ok(report)
}

/// Machine names as the export knows them, for the Markdown pages.
struct Known(BTreeMap<MachineId, MachineName>);

impl NameOf for Known {
    fn name_of(&self, m: MachineId) -> String {
        self.0
            .get(&m)
            .map_or_else(|| m.to_string(), |n| n.name.clone())
    }

    fn teammate_of(&self, m: MachineId) -> Option<String> {
        self.0.get(&m).and_then(|n| n.person.clone())
    }
}

/// One project's records on their way to its page.
#[derive(Default)]
struct PageRecords {
    key: String,
    knowledge: Vec<Knowledge>,
    summaries: Vec<Summary>,
}

/// Writes a Markdown page per project into `dir` (made if missing), and an
/// `index.md` listing them; each file readable by this user only, as the store is.
pub fn markdown(app: &App, request: &ExportRequest, dir: &Path) -> OpResult<ExportReport> {
    let store = app.store()?;
    let (mut selection, left_out) = selection(app, &store, request)?;
    // Pages are for people: nothing erased or forgotten is shown.
    selection.tombstones = false;
    let mut machines: BTreeMap<MachineId, MachineName> = store_export::machines(store.conn())?
        .into_iter()
        .map(|m| (m.id, m))
        .collect();
    let me = this_machine(&store, app);
    machines.insert(me.id, me);
    let mut report = ExportReport {
        format: "markdown".into(),
        written: dir.display().to_string(),
        local_only_left_out: left_out,
        ..ExportReport::default()
    };
    let mut pages: BTreeMap<String, PageRecords> = BTreeMap::new();
    let snapshot = store.snapshot()?;
    let conn = snapshot.as_deref().unwrap_or(store.conn());
    store_export::each_record(conn, &selection, |record: WireRecord| {
        let record = record.cleaned();
        let project = record.project().clone();
        let page = pages.entry(project.name.clone()).or_default();
        page.key = project.key;
        match record {
            WireRecord::Knowledge(k) if matches!(k.kind().as_str(), "decision" | "memory") => {
                *report
                    .records
                    .entry(k.kind().as_str().to_string())
                    .or_default() += 1;
                page.knowledge.push(k);
            }
            WireRecord::Summary(s) => {
                *report.records.entry("summary".to_string()).or_default() += 1;
                page.summaries.push(s);
            }
            _ => {}
        }
        Ok::<(), OpError>(())
    })?;
    std::fs::create_dir_all(dir).map_err(|e| write_error(&dir.display().to_string(), e))?;
    let names = Known(machines);
    let mut index = String::from("# Memory exported by SOLARIA\n\n");
    let mut taken = BTreeSet::new();
    for (name, page) in &pages {
        let file = file_name(name, &page.key, &mut taken);
        let text = project_page(
            &ProjectPage {
                name,
                key: &page.key,
                knowledge: &page.knowledge,
                summaries: &page.summaries,
            },
            TimeStyle::Local,
            &names,
        );
        let path = dir.join(&file);
        write_atomic(&path, text.as_bytes(), Access::Private)
            .map_err(|e| write_error(&path.display().to_string(), e))?;
        let count = |kind: &str| {
            page.knowledge
                .iter()
                .filter(|k| k.kind().as_str() == kind)
                .count()
        };
        index.push_str(&format!(
            "- [{}]({file}): {}, {}, {}\n",
            name.replace(['[', ']'], ""),
            counted(count("decision"), "decision", "decisions"),
            counted(count("memory"), "memory", "memories"),
            counted(page.summaries.len(), "session summary", "session summaries"),
        ));
        report.files.push(file);
        report.projects.push(name.clone());
    }
    let path = dir.join("index.md");
    write_atomic(&path, index.as_bytes(), Access::Private)
        .map_err(|e| write_error(&path.display().to_string(), e))?;
    report.files.push("index.md".into());
    Ok(report)
}

/// `1 decision`, `2 decisions`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A file name for a project's page: its name in letters, digits, `-`, `_` and
/// `.`, made unique among the pages of this export by its key's hash.
fn file_name(name: &str, key: &str, taken: &mut BTreeSet<String>) -> String {
    let mut base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    base = base.trim_matches(|c| c == '.' || c == '-').to_string();
    if base.is_empty() || base == "index" {
        base = format!("project-{base}");
    }
    let mut file = format!("{base}.md");
    if !taken.insert(file.clone()) {
        let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        file = format!("{base}-{:08x}.md", hash as u32);
        taken.insert(file.clone());
    }
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_plain_and_never_collide() {
        let mut taken = BTreeSet::new();
        assert_eq!(file_name("billing-api", "k1", &mut taken), "billing-api.md");
        assert_eq!(file_name("../../etc", "k2", &mut taken), "etc.md");
        let again = file_name("billing api", "k3", &mut taken);
        assert!(
            again.starts_with("billing-api-") && again.ends_with(".md"),
            "{again}"
        );
        assert_eq!(file_name("index", "k4", &mut taken), "project-index.md");
    }
}
