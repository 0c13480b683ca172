//! Enrollment (a token and a name → a machine and its credential) and the exchange
//! of a machine credential for a short-lived JWT.

use super::error::ApiError;
use super::json::ApiJson;
use super::state::AppState;
use crate::storage::{EnrollmentError, MachineStatus};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use solaria_shared::wire::{
    EnrollRequest, EnrollResponse, KNOWLEDGE_TYPE, TokenRequest, TokenResponse,
};

const MAX_NAME: usize = 100;

/// The one answer to an enrollment request that cannot be taken as it is: a bad
/// name, or a machine id some machine is enrolled with already, in this account
/// or another. One answer for both, so that it tells no one whether an id is
/// enrolled anywhere (no `409 machine_taken`); the token is not spent.
fn not_valid() -> ApiError {
    ApiError::bad_request(format!(
        "the enrollment request is not valid: the machine name must be 1 to {MAX_NAME} \
         printable characters, and the machine id one no machine is enrolled with; the \
         token was not spent"
    ))
}

pub async fn enroll(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<EnrollRequest>,
) -> Result<(StatusCode, Json<EnrollResponse>), ApiError> {
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(not_valid());
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
        Err(EnrollmentError::MachineTaken) => {
            // The operator may want to know; the caller learns nothing more.
            tracing::info!(machine = ?req.machine_id, "enrollment refused: {}", EnrollmentError::MachineTaken);
            Err(not_valid())
        }
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
        MachineStatus::Active(identity) => {
            let (token, expires_at) = state
                .jwt
                .issue(req.machine_id, identity.viewer.account.0)
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
                vector_models: Some(state.storage.vector_models().fingerprints()),
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
