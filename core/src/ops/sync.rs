//! Sync now and restore, as the user or the agent asks for them (`solaria sync`
//! and `restore`, `/memory sync`, `memory_sync_remote`, `memory_restore`,
//! `POST /api/sync`). The scheduled sync is the daemon's (the edge's `daemon`).

use super::{OpError, OpResult};
use crate::app::App;
use crate::present::sync::SyncOutcome;
use crate::store::sync::PULL_CURSOR_KEY;
use crate::sync::{self, Progress, SyncError};

/// Pushes this machine's changes and pulls the others', within the manual
/// deadline; `progress` hears how it goes. The outcome is recorded for the status
/// whatever it is; records the server refused are in the report (the sync is
/// then partial).
pub fn sync_now(app: &App, progress: impl FnMut(Progress)) -> OpResult<SyncOutcome> {
    let creds = app
        .credentials()?
        .ok_or(OpError::NotLoggedIn(SyncError::NotLoggedIn))?;
    let mut store = app.store()?;
    // A model that cannot be loaded only means vectors are not pulled: the sync
    // goes on (the embedding pass reports the model's trouble).
    let _ = crate::semantic::ready_for_pulled_vectors(&app.config, &app.paths, &mut store);
    let report = sync::run_manual(&mut store, &creds, &app.config.sync, progress)?
        .map_err(|e| OpError::remote("sync", &creds.server, e))?;
    Ok(SyncOutcome {
        server: creds.server,
        report,
    })
}

/// Pulls the account's whole memory from the start of the feed (tombstones
/// included, applied with last-write-wins over what is here), then syncs.
pub fn restore(app: &App, progress: impl FnMut(Progress)) -> OpResult<SyncOutcome> {
    app.credentials()?
        .ok_or(OpError::NotLoggedIn(SyncError::NotLoggedIn))?;
    let mut store = app.store()?;
    store.write(|w| w.set_state(PULL_CURSOR_KEY, "0"))?;
    drop(store);
    sync_now(app, progress)
}
