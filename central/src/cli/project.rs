//! `solaria-central project share|unshare|list`: projects shared with the whole
//! account; every other project is personal.

use solaria_central::storage::Storage;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
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

impl Command {
    /// `actor`: who runs it, as the audit log names them.
    pub async fn run(self, storage: &Storage, actor: &str) -> anyhow::Result<()> {
        match self {
            Command::Share { account, pattern } => {
                let account = storage.find_account(&account).await?;
                let done = storage.share_projects(account, &pattern, actor).await?;
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
            Command::Unshare { account, pattern } => {
                let account = storage.find_account(&account).await?;
                if storage.unshare_projects(account, &pattern, actor).await? {
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
            Command::List { account } => {
                let account = storage.find_account(&account).await?;
                for p in storage.shared_projects(account).await? {
                    println!(
                        "{:<40} shared {} by {}",
                        p.pattern, p.shared_at, p.shared_by
                    );
                }
            }
        }
        Ok(())
    }
}
