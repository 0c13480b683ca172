//! `solaria status`: the sync state of this machine.

use super::App;
use crate::store::sync::{self as store_sync, PUSH_CURSOR_KEY};
use crate::timefmt;
use solaria_shared::UnixMillis;

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
        let pending = store_sync::pending_count(
            conn,
            store.machine_id(),
            store_sync::cursor(conn, PUSH_CURSOR_KEY)?,
        )?;
        let conflicts = store_sync::conflicts(conn, false)?.len();
        let last_at = store_sync::state(conn, "last_sync_at")?
            .and_then(|v| v.parse().ok())
            .map(UnixMillis);
        let started_at: Option<i64> =
            store_sync::state(conn, "last_sync_started_at")?.and_then(|v| v.parse().ok());
        let interrupted = started_at.is_some_and(|s| last_at.is_none_or(|l| s > l.0));
        let status = if interrupted {
            Some("interrupted".to_string())
        } else {
            store_sync::state(conn, "last_sync_status")?
        };
        let (last_at, detail) = if interrupted {
            (
                started_at.map(UnixMillis),
                Some(
                    "started but did not finish (killed or crashed); run `solaria sync` to resume"
                        .to_string(),
                ),
            )
        } else {
            (last_at, store_sync::state(conn, "last_sync_detail")?)
        };
        if self.json {
            let v = serde_json::json!({
                "server": creds.as_ref().map(|c| c.server.clone()),
                "machine_id": store.machine_id().to_string(),
                "machine_name": app.config.machine_name(),
                "last_sync_at": last_at.map(|t| t.0),
                "last_sync_status": status,
                "last_sync_detail": detail,
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
        match (last_at, status) {
            (Some(t), Some(s)) => println!(
                "last sync:  {} — {s}: {}",
                timefmt::full(t),
                detail.unwrap_or_default()
            ),
            _ => println!("last sync:  never"),
        }
        println!("pending:    {pending} local change(s) not yet pushed");
        println!("conflicts:  {conflicts} unacknowledged (see `solaria conflicts`)");
        Ok(())
    }
}
