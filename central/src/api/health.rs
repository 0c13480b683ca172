//! Liveness and readiness.

use super::AppState;
use super::error::ApiError;
use axum::extract::State;
use axum::http::StatusCode;

/// The process is up.
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can serve: its database answers.
pub async fn readyz(State(state): State<AppState>) -> Result<&'static str, ApiError> {
    state.storage.ping().await.map_err(|e| {
        tracing::warn!(error = %e, "database not reachable");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            "the database is not reachable",
        )
    })?;
    Ok("ready")
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}
