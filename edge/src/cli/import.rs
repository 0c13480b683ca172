//! `solaria import`: memory brought in from a file, through the same rules as
//! what is captured (secrets redacted, private spans stripped, bounds, projects
//! never captured), a second import of the same file adding nothing.

use solaria_edge::app::App;
use solaria_edge::ops::import::{self, Incoming, Progress};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    source: Source,
}

#[derive(Debug, clap::Subcommand)]
enum Source {
    /// A SOLARIA export (`solaria export --format json`): every record as it was,
    /// with its id, so citations still answer.
    Solaria(ExportArgs),
    /// claude-mem's database (default: `$CLAUDE_MEM_DATA_DIR/claude-mem.db`, else
    /// `~/.claude-mem/claude-mem.db`): its sessions, prompts, observations and
    /// summaries, in the projects of the same names. Read only; claude-mem 13.15.3
    /// (schema 49) and older databases with the same columns.
    ClaudeMem(DatabaseArgs),
    /// Claude Code's memory files: `CLAUDE.md` (each bullet, or paragraph under
    /// a heading, a memory) and its auto memory (`~/.claude/projects/<project>/
    /// memory/`, each topic file a memory). Without PATHs, the current project's.
    /// Importing again after an edit supersedes what changed.
    ClaudeMd(MemoryFilesArgs),
    /// engram's memory: its export (`engram export`, a JSON file) or the chunks
    /// its git sync commits (a directory holding `.engram/manifest.json`).
    /// Decisions become decisions; preferences, policies, patterns and facts
    /// memories; the rest notes of their sessions.
    Engram(FileArgs),
}

#[derive(Debug, clap::Args)]
struct MemoryFilesArgs {
    /// Files (`CLAUDE.md`, `MEMORY.md`, a topic file) or auto-memory directories.
    paths: Vec<PathBuf>,
    /// The project the memories belong to (default: the current directory's).
    #[arg(long)]
    project: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct DatabaseArgs {
    /// The database file.
    path: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ExportArgs {
    /// The file to read.
    path: PathBuf,
    /// The file is another person's export: their handle (`ana` for
    /// ana@acme.com), or their email. Their records then read "by @ana", not as
    /// yours.
    #[arg(long, value_name = "HANDLE")]
    from: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct FileArgs {
    /// The file to read.
    path: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        match self.source {
            Source::Solaria(a) => {
                let from_person = a.from.as_deref().map(import::solaria::person).transpose()?;
                let incoming = Incoming {
                    from_person,
                    ..import::solaria::read(&a.path)?
                };
                apply(app, incoming, a.json)
            }
            Source::Engram(a) => {
                let incoming = import::engram::read(app, &a.path)?;
                apply(app, incoming, a.json)
            }
            Source::ClaudeMd(a) => {
                let incoming = import::claude_md::read_for(app, a.project.as_deref(), a.paths)?;
                apply(app, incoming, a.json)
            }
            Source::ClaudeMem(a) => {
                let path = a
                    .path
                    .or_else(import::claude_mem::default_path)
                    .ok_or_else(|| anyhow::anyhow!("no home directory: name the database"))?;
                let incoming = import::claude_mem::read(app, &path)?;
                apply(app, incoming, a.json)
            }
        }
    }
}

/// Applies what a source read, with a progress bar on a terminal, and prints
/// the report.
fn apply(app: &App, incoming: Incoming, json: bool) -> anyhow::Result<()> {
    let bar = (std::io::stderr().is_terminal() && !json).then(|| {
        let bar = indicatif::ProgressBar::new(incoming.records.len() as u64);
        bar.set_message("importing");
        bar
    });
    let mut progress = |p: Progress| {
        if let Some(bar) = &bar {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
        }
    };
    let report = import::apply(app, incoming, &mut progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let report = report?;
    super::print(json, &report, || report.text())
}
