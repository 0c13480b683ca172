//! `solaria-central account create|delete`: accounts (tenants).

use solaria_central::storage::Storage;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
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

impl Command {
    /// `actor`: who runs it, as the audit log names them.
    pub async fn run(self, storage: &Storage, actor: &str) -> anyhow::Result<()> {
        match self {
            Command::Create { name, admin } => {
                // An account is created on a fresh database too.
                storage.migrate().await?;
                let name = name.trim();
                let admin = admin.unwrap_or_else(|| format!("owner@{name}"));
                let id = storage.create_account(name, &admin, actor).await?;
                println!("created account {name} ({id}), its first admin {admin}");
            }
            Command::Delete { account, yes } => {
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
        }
        Ok(())
    }
}
