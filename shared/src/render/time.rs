//! How times read in rendered text: one style named by the caller. An agent reads
//! full times with their zone's offset, the edge's in its machine's local time
//! (`2026-11-20 15:03 +01:00`), the central service's in UTC (`2026-11-20 14:03
//! +00:00`): the same layout on both sides, and never a time without its zone. A
//! person at a terminal reads short local times (`14:03` today).

use crate::time::UnixMillis;
use chrono::{DateTime, Local, TimeZone, Utc};

/// Which clock times are written in, and how fully.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeStyle {
    /// This machine's local time, to the minute, with its offset from UTC.
    Local,
    /// Coordinated universal time, to the minute, with its offset (`+00:00`).
    Utc,
    /// What a person at a terminal reads, relative to `now`: `14:03` today,
    /// `11-20 14:03` this year, `2025-11-20` before (local time).
    Short { now: UnixMillis },
}

impl TimeStyle {
    /// `t` in this style.
    pub fn format(self, t: UnixMillis) -> String {
        const FULL: &str = "%Y-%m-%d %H:%M %:z";
        let Some(utc) = DateTime::<Utc>::from_timestamp_millis(t.0) else {
            return format!("@{}ms", t.0);
        };
        match self {
            TimeStyle::Utc => utc.format(FULL).to_string(),
            TimeStyle::Local => utc.with_timezone(&Local).format(FULL).to_string(),
            TimeStyle::Short { now } => short(t, now),
        }
    }
}

/// `14:03` today, `11-20 14:03` this year, `2025-11-20` before, in local time.
fn short(t: UnixMillis, now: UnixMillis) -> String {
    let local = |t: UnixMillis| Local.timestamp_millis_opt(t.0).single();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_times_name_their_zone_and_share_one_layout() {
        let t = UnixMillis(1_700_000_000_000);
        assert_eq!(TimeStyle::Utc.format(t), "2023-11-14 22:13 +00:00");
        let local = TimeStyle::Local.format(t);
        assert_eq!(local.len(), "2023-11-14 22:13 +00:00".len(), "{local}");
        let offset = local.rsplit(' ').next().expect("an offset");
        assert!(
            offset.starts_with('+') || offset.starts_with('-'),
            "{local}"
        );
    }

    #[test]
    fn a_person_reads_short_times() {
        let t = UnixMillis(1_700_000_000_000);
        assert_eq!(TimeStyle::Short { now: t }.format(t).len(), 5);
        let year_later = UnixMillis(t.0 + 400 * 86_400_000);
        assert_eq!(TimeStyle::Short { now: year_later }.format(t).len(), 10);
    }
}
