//! `solaria-central machines list|revoke`: an account's machines.

use anyhow::Context;
use solaria_central::storage::Storage;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// List an account's machines.
    List { account: String },
    /// Revoke a machine: refused from its next request on.
    Revoke { machine: String },
}

impl Command {
    /// `actor`: who runs it, as the audit log names them.
    pub async fn run(self, storage: &Storage, actor: &str) -> anyhow::Result<()> {
        match self {
            Command::List { account } => {
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
            Command::Revoke { machine } => {
                let id = machine
                    .parse()
                    .context("a machine id is a UUID, as listed by `machines list`")?;
                storage.revoke_machine(id, actor).await?;
                println!("machine {machine} revoked");
            }
        }
        Ok(())
    }
}
