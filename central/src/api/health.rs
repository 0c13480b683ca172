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
/// whether it searches by meaning (and if not, why).
pub async fn readyz(State(state): State<AppState>) -> Result<String, ApiError> {
    state.storage.ping().await.map_err(|e| {
        tracing::warn!(error = %e, "database not reachable");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            "the database is not reachable",
        )
    })?;
    Ok(format!("ready\n{}\n", state.storage.meaning().line()))
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}
