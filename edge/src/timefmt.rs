//! Human-readable times for a person's terminal, in local time. (Typed times are
//! read by the shared rule, `solaria_shared::time::parse_when`.)

use chrono::{DateTime, Local, TimeZone};
use solaria_shared::UnixMillis;

fn local(t: UnixMillis) -> Option<DateTime<Local>> {
    Local.timestamp_millis_opt(t.0).single()
}

/// `2026-11-20 14:03`.
pub fn full(t: UnixMillis) -> String {
    local(t).map_or_else(
        || t.0.to_string(),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}

/// `14:03` today, `11-20 14:03` this year, `2025-11-20` before.
pub fn short(t: UnixMillis, now: UnixMillis) -> String {
    let (Some(d), Some(n)) = (local(t), local(now)) else {
        return t.0.to_string();
    };
    if d.date_naive() == n.date_naive() {
        d.format("%H:%M").to_string()
    } else if d.format("%Y").to_string() == n.format("%Y").to_string() {
        d.format("%m-%d %H:%M").to_string()
    } else {
        d.format("%Y-%m-%d").to_string()
    }
}
