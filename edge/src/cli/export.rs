//! `solaria export`: the memory written out, as a JSON document `solaria import
//! solaria` reads back, or as Markdown pages for people.

use solaria_edge::app::App;
use solaria_edge::ops::export::{self, ExportRequest};
use solaria_edge::ops::input;
use solaria_hook::files::{Access, write_atomic_with};
use solaria_shared::UnixMillis;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Every record, complete and versioned: `solaria import solaria` reads it.
    Json,
    /// A page per project for people (decisions, memories by type, summaries by
    /// day) and an index, in the directory OUT.
    Markdown,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write: a file for JSON (`-` for standard output), a directory
    /// for Markdown.
    out: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Only this project (name, key, `owner/repo` or path); repeatable. Every
    /// project but the local-only ones when absent.
    #[arg(long)]
    project: Vec<String>,
    /// Only what was written or changed since then: `2026-11-01`, or back from
    /// now (`30d`, `2w`).
    #[arg(long)]
    since: Option<String>,
    /// JSON only: erased and forgotten records too, as tombstones, so that an
    /// import forgets them as well.
    #[arg(long)]
    tombstones: bool,
    /// JSON only: each record's vector too (those of text with no private span
    /// or secret), so that a machine with the same model need not embed again.
    #[arg(long)]
    vectors: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Why a JSON export to a file failed: the export's own error (said as it is), or
/// the file's.
enum Failed {
    Export(solaria_edge::ops::OpError),
    File(std::io::Error),
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Self {
        Failed::File(e)
    }
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let request = ExportRequest {
            projects: self.project,
            since: input::when("since", self.since, UnixMillis::now())?,
            tombstones: self.tombstones,
            vectors: self.vectors,
        };
        let report = match self.format {
            Format::Markdown => export::markdown(app, &request, &self.out)?,
            Format::Json if self.out.as_os_str() == "-" => {
                let mut stdout = std::io::stdout().lock();
                let report = export::json(app, &request, &mut stdout, "-")?;
                stdout.flush()?;
                // Standard output is the document: the report goes to stderr.
                eprint!("{}", report.text());
                return Ok(());
            }
            Format::Json => {
                // Whole or not at all: streamed into a temporary file beside OUT,
                // which becomes OUT only once complete, so neither a failure nor a
                // kill leaves a file that stops halfway, and a large store is
                // never held in memory.
                let written = self.out.display().to_string();
                let streamed = write_atomic_with(&self.out, Access::Private, |file| {
                    export::json(app, &request, file, &written).map_err(Failed::Export)
                });
                match streamed {
                    Ok(report) => report,
                    Err(Failed::Export(e)) => return Err(e.into()),
                    Err(Failed::File(e)) => anyhow::bail!("cannot write {written}: {e}"),
                }
            }
        };
        super::print(self.json, &report, || report.text())
    }
}
