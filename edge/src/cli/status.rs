//! `solaria status`: the sync state of this machine.

use super::App;
use crate::store::sync as store_sync;
use crate::timefmt;

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let store = app.store()?;
        let creds = app.credentials()?;
        let conn = store.conn();
        let pending = store_sync::pending_push(conn, store.machine_id())?;
        let conflicts = store_sync::conflicts(conn, false)?.len();
        let last = store_sync::last_sync(conn, "run `solaria sync` to resume")?;
        if self.json {
            let v = serde_json::json!({
                "server": creds.as_ref().map(|c| c.server.clone()),
                "machine_id": store.machine_id().to_string(),
                "machine_name": app.config.machine_name(),
                "last_sync_at": last.at.map(|t| t.0),
                "last_sync_status": last.status,
                "last_sync_detail": last.detail,
                "pending": pending,
                "conflicts": conflicts,
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(());
        }
        match &creds {
            Some(c) => println!("server:     {}", c.server),
            None => println!("server:     none (run `solaria login SERVER --token TOKEN` to sync)"),
        }
        println!(
            "machine:    {} ({})",
            app.config.machine_name(),
            store.machine_id()
        );
        match (last.at, last.status) {
            (Some(t), Some(s)) => println!(
                "last sync:  {} — {s}: {}",
                timefmt::full(t),
                last.detail.unwrap_or_default()
            ),
            _ => println!("last sync:  never"),
        }
        println!("pending:    {pending} local change(s) not yet pushed");
        println!("conflicts:  {conflicts} unacknowledged (see `solaria conflicts`)");
        Ok(())
    }
}
