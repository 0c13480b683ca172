//! Enrollment (a token and a name → a machine and its credential) and the exchange
//! of a machine credential for a short-lived JWT.

use super::AppState;
use super::error::ApiError;
use super::json::ApiJson;
use crate::storage::{EnrollmentError, MachineStatus};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use solaria_shared::wire::{
    EnrollRequest, EnrollResponse, KNOWLEDGE_TYPE, TokenRequest, TokenResponse,
};

const MAX_NAME: usize = 100;

pub async fn enroll(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<EnrollRequest>,
) -> Result<(StatusCode, Json<EnrollResponse>), ApiError> {
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(ApiError::bad_request(format!(
            "the machine name must be 1 to {MAX_NAME} printable characters"
        )));
    }
    match state
        .storage
        .enroll(req.token.trim(), name, req.machine_id)
        .await
    {
        Ok(done) => {
            tracing::info!(machine = %done.machine_id, account = %done.account_id, "machine enrolled");
            Ok((StatusCode::CREATED, Json(done)))
        }
        Err(EnrollmentError::BadToken) => Err(ApiError::unauthorized(
            EnrollmentError::BadToken.to_string(),
        )),
        Err(EnrollmentError::MachineTaken) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "machine_taken",
            EnrollmentError::MachineTaken.to_string(),
        )),
        Err(EnrollmentError::Storage(e)) => Err(e.into()),
    }
}

pub async fn token(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<TokenRequest>,
) -> Result<Json<TokenResponse>, ApiError> {
    match state
        .storage
        .authenticate_machine(req.machine_id, &req.credential)
        .await?
    {
        MachineStatus::Active(account) => {
            let (token, expires_at) = state
                .jwt
                .issue(req.machine_id, account.0)
                .map_err(ApiError::internal)?;
            Ok(Json(TokenResponse {
                token,
                expires_at,
                // The types this server stores beyond the first release's: an
                // edge pushes its knowledge records only to a server that lists it.
                types: vec![
                    KNOWLEDGE_TYPE.into(),
                    solaria_shared::embedding::EMBEDDINGS_CAPABILITY.into(),
                    solaria_shared::embedding::EMBEDDINGS_I8_CAPABILITY.into(),
                ],
            }))
        }
        MachineStatus::Revoked => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "machine_revoked",
            "this machine was revoked by the operator; enroll it again with a new token",
        )),
        MachineStatus::Unknown => Err(ApiError::unauthorized(
            "unknown machine or wrong credential",
        )),
    }
}
