//! Liveness and readiness.

use super::error::ApiError;
use super::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;

/// The process is up.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can serve: its database answers. The body's second line says
/// whether it searches by meaning (and if not, why); a third, with a standby, how
/// far behind it is.
pub async fn readyz(State(state): State<AppState>) -> Result<String, ApiError> {
    state.storage.ping().await.map_err(|e| {
        tracing::warn!(error = %e, "database not reachable");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            "the database is not reachable",
        )
    })?;
    let mut body = format!("ready\n{}\n", state.storage.meaning().line());
    if let Some(standby) = state.storage.standby_state() {
        body.push_str(&standby.line());
        body.push('\n');
    }
    Ok(body)
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}
