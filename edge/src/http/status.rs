//! The endpoints about the daemon and its sync: `/api/health`, `/api/stats`,
//! `/api/status`, the sync trigger `POST /api/sync`, and `POST /api/ui/login`,
//! which makes a login code for the viewer (`solaria ui`).

use super::ApiState;
use super::error::ApiError;
use crate::api_proof;
use crate::ops::{self, OpError};
use crate::present::stats::{StatsReport, SyncState};
use crate::present::sync::SyncOutcome;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// `GET /api/health` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HealthParams {
    /// A client's random challenge: the answer proves this daemon holds the token
    /// (`crate::api_proof`), before the client sends it.
    challenge: Option<String>,
}

/// `GET /api/health`: whether the API answers. No token needed, nothing private;
/// with `?challenge=…`, also the proof that this daemon holds the token.
pub(super) async fn health(
    State(s): State<ApiState>,
    params: Result<Query<HealthParams>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let Query(p) = params?;
    let mut answer = json!({
        "status": "ok",
        "service": "solaria",
        "version": env!("CARGO_PKG_VERSION"),
    });
    if let Some(challenge) = p.challenge {
        if !api_proof::valid_challenge(&challenge) {
            return Err(ApiError::bad_request(
                "`challenge` must be 32 to 128 letters and digits",
            ));
        }
        answer["proof"] = s.token.prove(&challenge).into();
    }
    Ok(Json(answer))
}

/// `GET /api/stats`: counts, the search status and the sync state (what
/// `solaria stats --json` and the MCP `memory_stats` tool report).
pub(super) async fn stats(State(s): State<ApiState>) -> Result<Json<StatsReport>, ApiError> {
    s.blocking(ops::status::stats).await
}

/// `GET /api/status`: the sync state, as `solaria status --json` reports it.
pub(super) async fn status(State(s): State<ApiState>) -> Result<Json<SyncState>, ApiError> {
    s.blocking(ops::status::sync_state).await
}

/// `POST /api/sync`: push and pull now, like `solaria sync`.
pub(super) async fn sync_now(State(s): State<ApiState>) -> Result<Json<SyncOutcome>, ApiError> {
    let Ok(running) = Arc::clone(&s.syncing).try_lock_owned() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "sync_running",
            "a sync started through this API is still running: wait for its answer",
        ));
    };
    let log = Arc::clone(&s.log);
    s.blocking(move |app| -> Result<SyncOutcome, OpError> {
        let _running = running;
        let outcome = ops::sync::sync_now(app, |_| {})?;
        log(&format!("sync (local API): {}", outcome.report.counts()));
        Ok(outcome)
    })
    .await
}

/// `POST /api/ui/login`: a one-time code that logs a browser into the viewer
/// (`solaria ui` asks for it and prints the page's address with it).
pub(super) async fn viewer_login(State(s): State<ApiState>) -> Json<Value> {
    let code = s.logins.issue(&s.token);
    Json(json!({
        "path": format!("/ui/login?code={code}"),
        "valid_seconds": super::ui::login::CODE_LIFETIME.as_secs(),
    }))
}
