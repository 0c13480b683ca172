//! Wall-clock instants as milliseconds since the Unix epoch, and how a time a
//! person or an agent types (`since`, `until`, `expires`) is read: one rule for the
//! edge (in its machine's local time) and the central service (in UTC).

use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};
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

/// The clock a typed date or time without an offset is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// This machine's local time (the edge: what its user sees on the wall).
    Local,
    /// Coordinated universal time (the central service, which has no user's wall).
    Utc,
}

impl Zone {
    /// The instant `naive` names in this zone (the earlier one when a clock change
    /// makes it ambiguous).
    fn instant(self, naive: &NaiveDateTime) -> Option<UnixMillis> {
        let ms = match self {
            Zone::Local => Local
                .from_local_datetime(naive)
                .earliest()?
                .timestamp_millis(),
            Zone::Utc => naive.and_utc().timestamp_millis(),
        };
        Some(UnixMillis(ms))
    }
}

/// Reads a typed time (`since`, `until`): a date (`2026-11-01`, its midnight), a
/// date and time (`2026-11-01T10:00`, `2026-11-01 10:00`, with seconds or not),
/// both read in `zone`; an RFC 3339 time with its own offset; or a span back from
/// `now` (`30m`, `12h`, `7d`, `2w`). The error says what was typed and the forms
/// that work.
pub fn parse_when(text: &str, now: UnixMillis, zone: Zone) -> Result<UnixMillis, String> {
    let t = text.trim();
    let err = || {
        let shown: String = t.chars().take(60).collect();
        format!(
            "`{shown}` is not a time: use a date (2026-11-01), a date and time (2026-11-01T10:00) or a span back from now (30m, 12h, 7d, 2w)"
        )
    };
    if let Some((num, unit)) = t
        .char_indices()
        .last()
        .map(|(i, c)| (&t[..i], c))
        .filter(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    {
        let n: i64 = num.parse().map_err(|_| err())?;
        let ms = match unit {
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            'w' => 7 * 86_400_000,
            _ => return Err(err()),
        };
        return Ok(UnixMillis(now.0.saturating_sub(n.saturating_mul(ms))));
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(UnixMillis(d.with_timezone(&Utc).timestamp_millis()));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(t, fmt) {
            return zone.instant(&naive).ok_or_else(err);
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        let naive = date.and_hms_opt(0, 0, 0).ok_or_else(err)?;
        return zone.instant(&naive).ok_or_else(err);
    }
    Err(err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_dates_and_times_parse_in_the_zone_named() {
        let now = UnixMillis(10 * 86_400_000);
        let utc = |t| parse_when(t, now, Zone::Utc);
        assert_eq!(utc("7d"), Ok(UnixMillis(3 * 86_400_000)));
        assert_eq!(utc("2h"), Ok(UnixMillis(now.0 - 7_200_000)));
        assert_eq!(utc("2023-11-14"), Ok(UnixMillis(1_699_920_000_000)));
        assert_eq!(utc("2023-11-14T22:13"), Ok(UnixMillis(1_699_999_980_000)));
        assert_eq!(
            utc("2023-11-14 22:13:20"),
            Ok(UnixMillis(1_700_000_000_000))
        );
        assert_eq!(
            utc("2023-11-15T00:13:20+02:00"),
            Ok(UnixMillis(1_700_000_000_000)),
            "an offset given wins over the zone"
        );
        assert!(parse_when("2026-11-01T10:00", now, Zone::Local).is_ok());
        let e = utc("yesterday").expect_err("refused");
        assert!(e.contains("yesterday") && e.contains("7d"), "{e}");
        assert!(utc("7x").is_err());
    }
}
