//! The endpoints about the daemon and its sync: `/api/health`, `/api/stats`,
//! `/api/status` and the sync trigger `POST /api/sync`.

use super::ApiState;
use super::error::ApiError;
use crate::cli::App;
use crate::cli::status::SyncState;
use crate::semantic;
use crate::store::sync as store_sync;
use crate::store::views;
use crate::sync::{self, SyncError, SyncReport};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// `GET /api/health`: whether the API answers. No token needed, nothing private.
pub(super) async fn health() -> Json<Value> {
    Json(json!({
        "status": "ok",
        "service": "solaria",
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

/// `GET /api/stats`: counts, the search status and the sync state (what
/// `solaria stats --json` and the MCP `memory_stats` tool report).
pub(super) async fn stats(State(s): State<ApiState>) -> Result<Json<Value>, ApiError> {
    s.blocking(|app| {
        let store = app.store()?;
        let conn = store.conn();
        let me = store.machine_id();
        let stats = views::stats(conn, me)?;
        let creds = app.credentials()?;
        let store_bytes = ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", store.path().display())).ok())
            .map(|m| m.len())
            .sum::<u64>();
        let mut v = serde_json::to_value(&stats).map_err(anyhow::Error::from)?;
        v["data_dir"] = app.paths.data_dir.display().to_string().into();
        v["store_bytes"] = store_bytes.into();
        v["machine_id"] = me.to_string().into();
        v["machine_name"] = app.config.machine_name().into();
        v["search"] = serde_json::to_value(semantic::status(&app.config, &app.paths, &store)?)
            .map_err(anyhow::Error::from)?;
        v["sync"] = json!({
            "logged_in": creds.is_some(),
            "server": creds.map(|c| c.server).or_else(|| app.config.sync.server.clone()),
            "pending_push": stats.pending_push,
            "last_sync_at": store_sync::state(conn, "last_sync_at")?
                .and_then(|t| t.parse::<i64>().ok()),
            "last_sync_status": store_sync::state(conn, "last_sync_status")?,
            "last_sync_detail": store_sync::state(conn, "last_sync_detail")?,
        });
        Ok(v)
    })
    .await
}

/// `GET /api/status`: the sync state, as `solaria status --json` reports it.
pub(super) async fn status(State(s): State<ApiState>) -> Result<Json<Value>, ApiError> {
    s.blocking(|app| Ok(SyncState::read(app, "POST /api/sync to resume")?.to_json()))
        .await
}

/// `POST /api/sync`'s answer: the server and what moved.
#[derive(Debug, Serialize)]
pub(super) struct SyncAnswer {
    server: String,
    #[serde(flatten)]
    report: SyncReport,
}

/// `POST /api/sync`: push and pull now, like `solaria sync`.
pub(super) async fn sync_now(State(s): State<ApiState>) -> Result<Json<SyncAnswer>, ApiError> {
    let Ok(running) = Arc::clone(&s.syncing).try_lock_owned() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "sync_running",
            "a sync started through this API is still running: wait for its answer",
        ));
    };
    let log = Arc::clone(&s.log);
    s.blocking(move |app| {
        let _running = running;
        sync_json(app, &*log)
    })
    .await
}

fn sync_json(app: &App, log: &dyn Fn(&str)) -> Result<SyncAnswer, ApiError> {
    let creds = app.credentials()?.ok_or_else(|| {
        ApiError::new(
            StatusCode::CONFLICT,
            "not_logged_in",
            SyncError::NotLoggedIn.to_string(),
        )
    })?;
    let mut store = app.store()?;
    let local_only = app.config.sync.local_only_projects.clone();
    let report = sync::run_manual(&mut store, &creds, local_only, |_| {})?.map_err(|e| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "sync_failed",
            format!("sync with {} failed: {e}", creds.server),
        )
    })?;
    log(&format!(
        "sync (local API): pushed {}, pulled {}, conflicts {}",
        report.pushed, report.pulled, report.conflicts
    ));
    Ok(SyncAnswer {
        server: creds.server,
        report,
    })
}
