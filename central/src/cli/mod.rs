//! The command line: one file per subcommand, each with its arguments and `run`.
//! Every subcommand but `serve` is an operator's act on the database, written to
//! standard output; errors end as one line on standard error and a failing exit.

mod account;
mod audit;
mod enroll_token;
mod machines;
mod migrate;
mod person;
mod project;
mod serve;

use anyhow::Context;
use clap::{Parser, Subcommand};
use solaria_central::config::{self, Settings};
use solaria_central::storage::Storage;
use std::path::PathBuf;
use std::process::ExitCode;

/// The SOLARIA Memory central service.
#[derive(Debug, Parser)]
#[command(name = "solaria-central", version, about)]
pub struct Cli {
    /// The TOML config file; every key may also come from `SOLARIA_<KEY>`.
    #[arg(long, short, env = "SOLARIA_CONFIG", global = true)]
    config: Option<PathBuf>,
    /// Log format.
    #[arg(long, value_enum, default_value = "text", global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply the database migrations.
    Migrate,
    /// Serve the API (migrations are applied first).
    Serve,
    /// Accounts (tenants).
    #[command(subcommand)]
    Account(account::Command),
    /// Create a single-use enrollment token for a machine of one person.
    EnrollToken(enroll_token::Args),
    /// Machines.
    #[command(subcommand)]
    Machines(machines::Command),
    /// The people of an account: each machine belongs to one of them.
    #[command(subcommand)]
    Person(person::Command),
    /// Projects shared with the whole account; every other project is personal.
    #[command(subcommand)]
    Project(project::Command),
    /// What was done to an account (people, machines, sharing, erasures), oldest first.
    Audit(audit::Args),
}

impl Cli {
    /// Runs the command on its own runtime; an error is printed as one line.
    pub fn run(self) -> ExitCode {
        init_logs(self.log_format);
        let runtime = match tokio::runtime::Runtime::new() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("solaria-central: cannot start the runtime: {e}");
                return ExitCode::FAILURE;
            }
        };
        match runtime.block_on(self.dispatch()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("solaria-central: {e:#}");
                ExitCode::FAILURE
            }
        }
    }

    /// Every subcommand works on the database the configuration names: it is
    /// connected first, whichever runs.
    async fn dispatch(self) -> anyhow::Result<()> {
        let settings = config::load(self.config.as_deref())?;
        let storage = connect(&settings).await?;
        match self.command {
            Command::Migrate => migrate::run(&storage).await,
            Command::Serve => serve::run(storage, settings).await,
            Command::Account(c) => c.run(&storage, &actor()).await,
            Command::EnrollToken(a) => a.run(&storage).await,
            Command::Machines(c) => c.run(&storage, &actor()).await,
            Command::Person(c) => c.run(&storage, &actor()).await,
            Command::Project(c) => c.run(&storage, &actor()).await,
            Command::Audit(a) => a.run(&storage).await,
        }
    }
}

/// Logs go to standard error, so that what a subcommand prints stays its answer.
fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

async fn connect(settings: &Settings) -> anyhow::Result<Storage> {
    let storage = Storage::connect_to(settings.databases()).await.context(
        "cannot connect to PostgreSQL (check database_url, and pooled_database_url and \
             read_database_url when set; or their SOLARIA_* variables)",
    )?;
    storage.set_vector_models(settings.vector_models()?);
    Ok(storage)
}

/// Who runs an administrative command, for the audit log: the operator's login.
fn actor() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    format!("operator {user}")
}
