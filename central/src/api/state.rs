//! What every handler shares (`AppState`): the storage, the JWT keys, the rate
//! limiters and the settings. Its own file, below the routes and the handlers, so
//! that handlers read it without importing the router that calls them.

use crate::auth::JwtKeys;
use crate::config::Settings;
use crate::storage::Storage;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use solaria_shared::MachineId;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub storage: Storage,
    pub jwt: Arc<JwtKeys>,
    /// Per machine, on the authenticated routes.
    pub limiter: Arc<DefaultKeyedRateLimiter<MachineId>>,
    /// Per IP address, on the routes that take no token.
    pub address_limiter: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    pub settings: Arc<Settings>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl AppState {
    pub fn new(storage: Storage, settings: Settings) -> AppState {
        let per_sec = NonZeroU32::new(settings.rate_limit_per_sec).unwrap_or(NonZeroU32::MIN);
        let per_min = NonZeroU32::new(settings.auth_rate_limit_per_min).unwrap_or(NonZeroU32::MIN);
        AppState {
            storage,
            jwt: Arc::new(JwtKeys::new(
                settings.jwt_secret.expose(),
                settings.jwt_ttl_secs,
            )),
            limiter: Arc::new(RateLimiter::keyed(Quota::per_second(per_sec))),
            address_limiter: Arc::new(RateLimiter::keyed(Quota::per_minute(per_min))),
            settings: Arc::new(settings),
        }
    }
}
