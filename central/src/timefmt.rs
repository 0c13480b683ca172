//! How times read in the text the service writes (contexts, MCP answers): UTC to the
//! minute, marked `Z`, the same everywhere so a cited time can be matched by eye.

use solaria_shared::UnixMillis;

/// `2026-11-01 10:00Z`; the raw milliseconds if the time cannot be shown.
pub fn utc(t: UnixMillis) -> String {
    chrono::DateTime::from_timestamp_millis(t.0)
        .map(|d| d.format("%Y-%m-%d %H:%MZ").to_string())
        .unwrap_or_else(|| t.0.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_to_the_minute() {
        assert_eq!(utc(UnixMillis(1_700_000_000_000)), "2023-11-14 22:13Z");
    }
}
