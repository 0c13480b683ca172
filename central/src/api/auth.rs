//! The authenticated caller of a `/memory` route: a bearer JWT checked for signature
//! and expiry, its machine checked against revocation on every request (so a revoked
//! machine is refused at once), then the per-machine rate limit.

use super::error::ApiError;
use super::state::AppState;
use crate::ops::Caller;
use crate::storage::{AccountId, MachineStatus};
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use governor::clock::{Clock, DefaultClock};
use solaria_shared::MachineId;

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                ApiError::unauthorized("missing `Authorization: Bearer <token>` header")
            })?;
        let token = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .ok_or_else(|| {
                ApiError::unauthorized("the Authorization header must be `Bearer <token>`")
            })?;
        let claims = state
            .jwt
            .verify(token.trim())
            .map_err(|e| ApiError::unauthorized(e.to_string()))?;
        let machine = MachineId::from_uuid(claims.sub);
        let account = AccountId(claims.acc);
        match state.storage.machine_status(machine, account).await? {
            MachineStatus::Active(identity) => {
                check_rate(state, machine)?;
                Ok(Caller {
                    machine,
                    account: identity.viewer.account,
                    person: identity.viewer.person,
                    role: identity.role,
                })
            }
            MachineStatus::Revoked => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "machine_revoked",
                "this machine was revoked by the operator; enroll it again with a new token",
            )),
            MachineStatus::Unknown => Err(ApiError::unauthorized("unknown machine")),
        }
    }
}

fn check_rate(state: &AppState, machine: MachineId) -> Result<(), ApiError> {
    state.limiter.check_key(&machine).map_err(|not_until| {
        ApiError::rate_limited(
            format!(
                "more than {} requests per second from this machine; retry after the time in Retry-After",
                state.settings.rate_limit_per_sec
            ),
            not_until.wait_time_from(DefaultClock::default().now()),
        )
    })
}
