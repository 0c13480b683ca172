//! `solaria-central`: run and administer the central service.

use anyhow::Context;
use clap::{Parser, Subcommand};
use solaria_central::config::{self, Settings};
use solaria_central::server::{Listeners, launch_with_listener};
use solaria_central::storage::{Role, Storage};
use std::path::PathBuf;
use std::process::ExitCode;

/// The SOLARIA Memory central service.
#[derive(Debug, Parser)]
#[command(name = "solaria-central", version, about)]
struct Cli {
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
    Account(AccountCommand),
    /// Create a single-use enrollment token for a machine of one person.
    EnrollToken {
        /// The account's name or id.
        account: String,
        /// Whose machine it will be (their email); may be left out when the
        /// account has one person.
        #[arg(long)]
        person: Option<String>,
        /// How long the token stays valid: 30m, 12h, 7d.
        #[arg(long, default_value = "24h")]
        ttl: String,
    },
    /// Machines.
    #[command(subcommand)]
    Machines(MachinesCommand),
    /// The people of an account: each machine belongs to one of them.
    #[command(subcommand)]
    Person(PersonCommand),
    /// Projects shared with the whole account; every other project is personal.
    #[command(subcommand)]
    Project(ProjectCommand),
    /// What was done to an account (people, machines, sharing, erasures), oldest first.
    Audit {
        /// The account's name or id.
        account: String,
    },
}

#[derive(Debug, Subcommand)]
enum PersonCommand {
    /// Add a person to an account.
    Add {
        /// The account's name or id.
        account: String,
        /// Their email: how they are named from now on.
        email: String,
        /// admin (manages people, machines and sharing) or member.
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// List the people of an account, removed ones too.
    List { account: String },
    /// Remove a person: their machines are refused from their next request on.
    Remove {
        account: String,
        email: String,
        /// Also erase what they wrote (tombstones, which reach every machine of the
        /// account at its next sync).
        #[arg(long)]
        erase: bool,
    },
}

#[derive(Debug, Subcommand)]
enum ProjectCommand {
    /// Share the projects whose keys match PATTERN (`*` matches anything) with
    /// every person of the account.
    Share {
        /// The account's name or id.
        account: String,
        /// A project key (`github.com/acme/api`) or a pattern (`github.com/acme/*`).
        pattern: String,
    },
    /// Make a shared pattern's projects personal again (from now on).
    Unshare { account: String, pattern: String },
    /// List the shared patterns.
    List { account: String },
}

#[derive(Debug, Subcommand)]
enum AccountCommand {
    /// Create an account with its first admin.
    Create {
        name: String,
        /// The first admin's email (default: owner@NAME).
        #[arg(long)]
        admin: Option<String>,
    },
    /// Erase an account for good: every record, machine, token and log of it. Its
    /// machines are refused from their next request on.
    Delete {
        /// The account's name or id.
        account: String,
        /// Confirm: nothing of the account can be recovered afterwards.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
enum MachinesCommand {
    /// List an account's machines.
    List { account: String },
    /// Revoke a machine: refused from its next request on.
    Revoke { machine: String },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("solaria-central: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("solaria-central: {e:#}");
            ExitCode::FAILURE
        }
    }
}

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
    let storage = Storage::connect(settings.database_url.expose(), settings.max_db_connections)
        .await
        .context("cannot connect to PostgreSQL (check database_url / SOLARIA_DATABASE_URL)")?;
    storage.set_vector_models(settings.vector_models()?);
    Ok(storage)
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = config::load(cli.config.as_deref())?;
    let storage = connect(&settings).await?;
    match cli.command {
        Command::Migrate => {
            storage.migrate().await?;
            println!("database is up to date");
        }
        Command::Serve => serve(storage, settings).await?,
        Command::Account(AccountCommand::Create { name, admin }) => {
            storage.migrate().await?;
            let name = name.trim();
            let admin = admin.unwrap_or_else(|| format!("owner@{name}"));
            let id = storage.create_account(name, &admin, &actor()).await?;
            println!("created account {name} ({id}), its first admin {admin}");
        }
        Command::Account(AccountCommand::Delete { account, yes }) => {
            let id = storage.find_account(account.trim()).await?;
            if !yes {
                anyhow::bail!(
                    "this erases account {account} ({id}) for good: every record, machine, token and log of it; \
                     run again with --yes to confirm"
                );
            }
            let held = storage.erase_account(id).await?;
            println!(
                "erased account {account} ({id}): {} sessions, {} observations, {} summaries, {} machines",
                held.sessions, held.observations, held.summaries, held.machines
            );
        }
        Command::EnrollToken {
            account,
            person,
            ttl,
        } => {
            let ttl = parse_duration(&ttl)?;
            let account = storage.find_account(&account).await?;
            let person = match &person {
                Some(email) => storage.find_person(account, email).await?,
                None => storage.sole_person(account).await?,
            };
            let token = storage.enrollment_token_for(account, person, ttl).await?;
            println!("{token}");
            eprintln!(
                "single use, valid for {}s: on the machine, run `solaria login SERVER --token {token}`",
                ttl.as_secs()
            );
        }
        Command::Machines(MachinesCommand::List { account }) => {
            let account = storage.find_account(&account).await?;
            for m in storage.list_machines(account).await? {
                let status = match m.revoked_at {
                    Some(t) => format!("revoked {t}"),
                    None => "active".to_string(),
                };
                let last = m
                    .last_sync_at
                    .map_or("never".to_string(), |t| t.to_string());
                println!(
                    "{}  {:<20} {:<28} {status:<30} last sync {last}",
                    m.id, m.name, m.person
                );
            }
        }
        Command::Machines(MachinesCommand::Revoke { machine }) => {
            let id = machine
                .parse()
                .context("a machine id is a UUID, as listed by `machines list`")?;
            storage.revoke_machine(id, &actor()).await?;
            println!("machine {machine} revoked");
        }
        Command::Person(PersonCommand::Add {
            account,
            email,
            role,
        }) => {
            let role: Role = role.parse().map_err(anyhow::Error::msg)?;
            let account = storage.find_account(&account).await?;
            storage.add_person(account, &email, role, &actor()).await?;
            println!(
                "added {} as {}; `enroll-token ACCOUNT --person {}` enrolls a machine of theirs",
                email.trim(),
                role.as_str(),
                email.trim()
            );
        }
        Command::Person(PersonCommand::List { account }) => {
            let account = storage.find_account(&account).await?;
            for p in storage.list_people(account).await? {
                let status = match p.removed_at {
                    Some(t) => format!("removed {t}"),
                    None => format!("{} active machine(s)", p.active_machines),
                };
                println!("{:<32} {:<7} {status}", p.email, p.role.as_str());
            }
        }
        Command::Person(PersonCommand::Remove {
            account,
            email,
            erase,
        }) => {
            let account = storage.find_account(&account).await?;
            let done = storage
                .remove_person(account, &email, erase, &actor())
                .await?;
            if done.already_removed {
                println!(
                    "{} had been removed already: {} record(s) erased",
                    email.trim(),
                    done.records_erased
                );
                return Ok(());
            }
            println!(
                "removed {}: {} machine(s) revoked, {} unused enrollment token(s) spent{}",
                email.trim(),
                done.machines_revoked,
                done.tokens_spent,
                if erase {
                    format!(", {} record(s) erased", done.records_erased)
                } else {
                    String::new()
                }
            );
        }
        Command::Project(ProjectCommand::Share { account, pattern }) => {
            let account = storage.find_account(&account).await?;
            let done = storage.share_projects(account, &pattern, &actor()).await?;
            if done.already {
                println!("{} was shared already", pattern.trim());
            } else {
                println!(
                    "shared {} with the whole account: {} record(s) reach every machine at its next sync",
                    pattern.trim(),
                    done.records
                );
            }
        }
        Command::Project(ProjectCommand::Unshare { account, pattern }) => {
            let account = storage.find_account(&account).await?;
            if storage
                .unshare_projects(account, &pattern, &actor())
                .await?
            {
                println!(
                    "{} is personal again: its records are seen by their authors only from now on",
                    pattern.trim()
                );
            } else {
                anyhow::bail!(
                    "{} is not shared (`project list` shows what is)",
                    pattern.trim()
                );
            }
        }
        Command::Project(ProjectCommand::List { account }) => {
            let account = storage.find_account(&account).await?;
            for p in storage.shared_projects(account).await? {
                println!(
                    "{:<40} shared {} by {}",
                    p.pattern, p.shared_at, p.shared_by
                );
            }
        }
        Command::Audit { account } => {
            let account = storage.find_account(&account).await?;
            for e in storage.audit_log(account).await? {
                println!("{}  {:<24} {:<18} {}", e.at, e.actor, e.action, e.detail);
            }
        }
    }
    Ok(())
}

async fn serve(storage: Storage, settings: Settings) -> anyhow::Result<()> {
    storage.migrate().await?;
    let listeners = Listeners::bind(&settings)?;
    launch_with_listener(settings, storage, listeners, shutdown_signal()).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

/// Who runs an administrative command, for the audit log: the operator's login.
fn actor() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    format!("operator {user}")
}

fn parse_duration(text: &str) -> anyhow::Result<std::time::Duration> {
    let t = text.trim();
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = num
        .parse()
        .with_context(|| format!("`{t}` is not a duration like 30m, 12h or 7d"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" | "" => 3600,
        "d" => 86_400,
        _ => anyhow::bail!("`{t}` is not a duration like 30m, 12h or 7d"),
    };
    Ok(std::time::Duration::from_secs(n * secs))
}
