//! Times a person reads at the terminal (stats, prune, doctor, conflicts), in the
//! one time style of the shared renderer (`solaria_shared::render::TimeStyle`), so a
//! time reads the same wherever it is printed. (Typed times are read by the shared
//! rule, `solaria_shared::time::parse_when`.)

use solaria_shared::UnixMillis;
use solaria_shared::render::TimeStyle;

/// `2026-11-20 14:03 +01:00`: local time with its zone.
pub fn full(t: UnixMillis) -> String {
    TimeStyle::Local.format(t)
}

/// `14:03` today, `11-20 14:03` this year, `2025-11-20` before.
pub fn short(t: UnixMillis, now: UnixMillis) -> String {
    TimeStyle::Short { now }.format(t)
}
