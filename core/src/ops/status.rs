//! Counts and the sync state, read once for every surface: `solaria stats` and
//! `status`, `memory_stats`, `/api/stats` and `/api/status`; and the running
//! daemon's viewer login (`solaria ui`).

use super::{OpError, OpResult};
use crate::app::App;
use crate::present::stats::{RetentionState, StatsReport, SyncState};
use crate::semantic;
use crate::store::Store;
use crate::store::retention;
use crate::store::sync as store_sync;
use crate::store::views;

/// The sync state of this machine.
pub fn sync_state(app: &App) -> OpResult<SyncState> {
    let store = app.store()?;
    let search = semantic::status(&app.config, &app.paths, &store)?;
    read_sync_state(app, &store, &search)
}

/// The sync state, with `search`, this machine's search, read once by the caller.
fn read_sync_state(app: &App, store: &Store, search: &semantic::Status) -> OpResult<SyncState> {
    let conn = store.conn();
    let creds = app.credentials()?;
    let creds_known = creds.is_some();
    Ok(SyncState {
        logged_in: creds.is_some(),
        server: creds
            .map(|c| c.server)
            .or_else(|| app.config.sync.server.clone()),
        machine_id: store.machine_id(),
        machine_name: app.config.machine_name(),
        last: store_sync::last_sync(conn)?,
        pending: store_sync::pending_push(conn, store.machine_id())?,
        conflicts: store_sync::conflicts(conn, false)?.len(),
        clock_offset_ms: store.wall().offset_ms,
        retention: RetentionState::new(app.retention(), retention::pruned_up_to(conn)?),
        local_search: search.describe(),
        central_search: store_sync::state(conn, store_sync::CENTRAL_SEARCH_KEY)?,
        shared_projects: store_sync::shared_projects(conn)?.filter(|_| creds_known),
        foreign_dropped: store_sync::cursor(conn, store_sync::FOREIGN_DROPPED_KEY)?,
    })
}

/// Counts and facts about the memory, its search and its sync.
pub fn stats(app: &App) -> OpResult<StatsReport> {
    let store = app.store()?;
    let store_bytes = ["", "-wal"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", store.path().display())).ok())
        .map(|m| m.len())
        .sum::<u64>();
    let search = semantic::status(&app.config, &app.paths, &store)?;
    Ok(StatsReport {
        counts: views::stats(store.conn(), store.machine_id())?,
        data_dir: app.paths.data_dir.display().to_string(),
        store_bytes,
        machine_id: store.machine_id(),
        machine_name: app.config.machine_name(),
        sync: read_sync_state(app, &store, &search)?,
        search,
        summarizer: super::distill::state(
            &app.config.summarizer,
            &store,
            solaria_shared::UnixMillis::now(),
        )?,
    })
}

/// The viewer's login address (with a one-time code) from the daemon serving this
/// data dir, or why there is none.
pub fn viewer_login(app: &App) -> OpResult<String> {
    // Whoever holds the viewer confirms proposals as a person.
    super::person_only(app, "opening the viewer", "solaria ui")?;
    super::daemon_client::viewer_login(&app.paths)
        .ok_or_else(|| OpError::NoDaemon(app.paths.data_dir.clone()))
}
