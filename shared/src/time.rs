//! Wall-clock instants as milliseconds since the Unix epoch.

use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since 1970-01-01T00:00:00Z. Used for when something happened
/// (`created_at`, `started_at`); ordering of edits uses [`crate::Hlc`] instead.
#[derive(
    Default, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct UnixMillis(pub i64);

impl UnixMillis {
    /// The current wall-clock time. A clock before 1970 reads as 0.
    pub fn now() -> Self {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        UnixMillis(ms)
    }

    /// This instant moved back by `days` days.
    pub fn minus_days(self, days: i64) -> Self {
        UnixMillis(self.0 - days * 86_400_000)
    }

    /// Whole days from `self` until `later` (0 when `later` is earlier).
    pub fn days_until(self, later: UnixMillis) -> i64 {
        ((later.0 - self.0) / 86_400_000).max(0)
    }
}
