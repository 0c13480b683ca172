//! `solaria-central migrate`: apply the database migrations.

use solaria_central::storage::Storage;

pub async fn run(storage: &Storage) -> anyhow::Result<()> {
    storage.migrate().await?;
    println!("database is up to date");
    Ok(())
}
