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
    Solaria(FileArgs),
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
                let incoming = import::solaria::read(&a.path)?;
                a.apply(app, incoming)
            }
        }
    }
}

impl FileArgs {
    fn apply(&self, app: &App, incoming: Incoming) -> anyhow::Result<()> {
        let bar = (std::io::stderr().is_terminal() && !self.json).then(|| {
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
        super::print(self.json, &report, || report.text())
    }
}
