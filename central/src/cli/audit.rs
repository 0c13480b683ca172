//! `solaria-central audit`: what was done to an account (people, machines, sharing,
//! erasures), oldest first.

use solaria_central::storage::Storage;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The account's name or id.
    account: String,
}

impl Args {
    pub async fn run(self, storage: &Storage) -> anyhow::Result<()> {
        let account = storage.find_account(&self.account).await?;
        for e in storage.audit_log(account).await? {
            println!("{}  {:<24} {:<18} {}", e.at, e.actor, e.action, e.detail);
        }
        Ok(())
    }
}
