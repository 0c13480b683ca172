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

/// The sync state of this machine, as `solaria status` and `/api/status` report it.
#[derive(Debug)]
pub struct SyncState {
    pub server: Option<String>,
    pub machine_id: String,
    pub machine_name: String,
    pub last: store_sync::LastSync,
    pub pending: i64,
    pub conflicts: usize,
}

impl SyncState {
    /// Reads it; `resume` tells the reader how to resume an interrupted sync.
    pub fn read(app: &App, resume: &str) -> anyhow::Result<SyncState> {
        let store = app.store()?;
        let conn = store.conn();
        Ok(SyncState {
            server: app.credentials()?.map(|c| c.server),
            machine_id: store.machine_id().to_string(),
            machine_name: app.config.machine_name(),
            last: store_sync::last_sync(conn, resume)?,
            pending: store_sync::pending_push(conn, store.machine_id())?,
            conflicts: store_sync::conflicts(conn, false)?.len(),
        })
    }

    /// `solaria status --json`, and the body of `/api/status`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "server": self.server,
            "machine_id": self.machine_id,
            "machine_name": self.machine_name,
            "last_sync_at": self.last.at.map(|t| t.0),
            "last_sync_status": self.last.status,
            "last_sync_detail": self.last.detail,
            "pending": self.pending,
            "conflicts": self.conflicts,
        })
    }
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let state = SyncState::read(app, "run `solaria sync` to resume")?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&state.to_json())?);
            return Ok(());
        }
        match &state.server {
            Some(server) => println!("server:     {server}"),
            None => println!("server:     none (run `solaria login SERVER --token TOKEN` to sync)"),
        }
        println!("machine:    {} ({})", state.machine_name, state.machine_id);
        match (state.last.at, state.last.status) {
            (Some(t), Some(s)) => println!(
                "last sync:  {} — {s}: {}",
                timefmt::full(t),
                state.last.detail.unwrap_or_default()
            ),
            _ => println!("last sync:  never"),
        }
        println!(
            "pending:    {} local change(s) not yet pushed",
            state.pending
        );
        println!(
            "conflicts:  {} unacknowledged (see `solaria conflicts`)",
            state.conflicts
        );
        Ok(())
    }
}
