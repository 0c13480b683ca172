//! The limit on the routes that take no token (`/memory/enroll`, `/memory/token`):
//! requests per minute from one IP address, beyond which the answer is 429 with
//! Retry-After. Authenticated routes are limited per machine instead (`auth.rs`).
//!
//! Behind a reverse proxy every client has the proxy's address, so they share one
//! allowance: raise the limit there, or limit at the proxy.

use super::error::ApiError;
use super::state::AppState;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use std::net::SocketAddr;

/// Addresses remembered before the limiter forgets those whose allowance is whole
/// again (so many addresses cannot grow it without bound).
const MAX_TRACKED: usize = 10_000;

/// Refuses a request once its address has used up its allowance.
pub async fn by_address(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // Present whenever the server runs; a router driven without a socket (no
    // address) is not limited.
    let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() else {
        return next.run(request).await;
    };
    let ip = peer.ip();
    let checked = state.address_limiter.check_key(&ip);
    if state.address_limiter.len() > MAX_TRACKED {
        state.address_limiter.retain_recent();
    }
    match checked {
        Ok(()) => next.run(request).await,
        Err(not_until) => {
            tracing::info!(address = %ip, path = %request.uri().path(), "rate limited");
            ApiError::rate_limited(
                format!(
                    "more than {} requests per minute from this address to enroll or fetch tokens; \
                     retry after the time in Retry-After",
                    state.settings.auth_rate_limit_per_min
                ),
                not_until.wait_time_from(DefaultClock::default().now()),
            )
            .into_response()
        }
    }
}
