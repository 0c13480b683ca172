//! Human-readable times for indexes and context lines, in local time.

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

/// Parses `--since`/`--until`: `2026-11-01`, `2026-11-01T10:00`, an RFC 3339 time,
/// or a span back from now such as `30m`, `12h`, `7d`, `2w`.
pub fn parse_when(text: &str, now: UnixMillis) -> Result<UnixMillis, String> {
    let t = text.trim();
    let err = || {
        format!(
            "`{t}` is not a time: use a date (2026-11-01), a date and time (2026-11-01T10:00) or a span back from now (30m, 12h, 7d, 2w)"
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
        return Ok(UnixMillis(now.0 - n.saturating_mul(ms)));
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(UnixMillis(d.timestamp_millis()));
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(naive) = chrono::NaiveDateTime::parse_from_str(t, fmt) {
            return Local
                .from_local_datetime(&naive)
                .earliest()
                .map(|d| UnixMillis(d.timestamp_millis()))
                .ok_or_else(err);
        }
    }
    if let Ok(date) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        let naive = date.and_hms_opt(0, 0, 0).ok_or_else(err)?;
        return Local
            .from_local_datetime(&naive)
            .earliest()
            .map(|d| UnixMillis(d.timestamp_millis()))
            .ok_or_else(err);
    }
    Err(err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_dates_parse() {
        let now = UnixMillis(10 * 86_400_000);
        assert_eq!(
            parse_when("7d", now).expect("span"),
            UnixMillis(3 * 86_400_000)
        );
        assert_eq!(
            parse_when("2h", now).expect("span"),
            UnixMillis(now.0 - 7_200_000)
        );
        assert!(parse_when("2026-11-01", now).is_ok());
        assert!(parse_when("2026-11-01T10:00", now).is_ok());
        assert!(parse_when("2026-11-01T10:00:00Z", now).is_ok());
        let e = parse_when("yesterday", now).expect_err("refused");
        assert!(e.contains("yesterday") && e.contains("7d"));
        assert!(parse_when("7x", now).is_err());
    }
}
