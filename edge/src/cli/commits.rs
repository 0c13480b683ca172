//! `solaria commits [import|log|complete]`: the project's commits as the memory
//! knows them, the history imported from git, one logged by hand, and (hidden,
//! for tests and impatient people) the daemon's completion pass run now.

use solaria_edge::app::App;
use solaria_edge::ops::commits::{self, CommitRequest};
use solaria_edge::ops::input;
use solaria_edge::ops::knowledge::Scope;
use solaria_edge::present::commits::list_text;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Only this project (name, key, `owner/repo` or path); every project when absent.
    #[arg(long)]
    project: Option<String>,
    /// How many commits to list (newest first).
    #[arg(long, short = 'n', default_value_t = 20)]
    limit: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Record the history of the current repository from `git log` (a second run
    /// records nothing new).
    Import(ImportArgs),
    /// Record one commit by hand, optionally linked to decisions.
    Log(LogArgs),
    /// Fill in author and file statistics of captured commits now (the daemon
    /// does it in the background).
    #[command(hide = true)]
    Complete(JsonArgs),
}

#[derive(Debug, clap::Args)]
struct ImportArgs {
    /// Only commits made since then: `2026-11-01`, `2026-11-01T10:00`, or back
    /// from now (`30d`, `2w`).
    #[arg(long)]
    since: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct LogArgs {
    /// The commit's sha (full, or abbreviated inside the repository).
    sha: String,
    /// Its message, when git cannot tell (the repository is not here).
    #[arg(long, short)]
    message: Option<String>,
    /// A decision it implements (`D#…`, short or full id); repeatable.
    #[arg(long = "decision", short)]
    decisions: Vec<String>,
    /// The iteration it belongs to (default: the active one, or the branch's).
    #[arg(long)]
    iteration: Option<String>,
    /// The project (default: the current directory's).
    #[arg(long)]
    project: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct JsonArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        match self.command {
            Some(Command::Import(a)) => a.run(app),
            Some(Command::Log(a)) => a.run(app),
            Some(Command::Complete(a)) => {
                let report = commits::complete_pending(app, &mut Default::default())?;
                super::print(a.json, &report, || report.text())
            }
            None => {
                let limit = input::bounded("limit", Some(self.limit), 20, 1..=10_000)?;
                let lines = commits::list(app, self.project, limit)?;
                super::print(self.json, &lines, || list_text(&lines))
            }
        }
    }
}

impl ImportArgs {
    fn run(self, app: &App) -> anyhow::Result<()> {
        let since = input::when("since", self.since, UnixMillis::now())?;
        let dir = std::env::current_dir()?;
        let report = commits::import(app, since, &dir)?;
        super::print(self.json, &report, || report.text())
    }
}

impl LogArgs {
    fn run(self, app: &App) -> anyhow::Result<()> {
        let request = CommitRequest {
            scope: Scope {
                project: self.project,
            },
            sha: self.sha,
            message: self.message,
            decisions: self.decisions,
            iteration: self.iteration,
            branch: None,
        };
        let logged = commits::log_commit(app, &request)?;
        super::print(self.json, &logged, || logged.text())
    }
}
