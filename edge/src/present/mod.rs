//! All the wording people and agents read, and the JSON shapes the local API
//! answers: each operation's result is a type of this module, built by
//! `crate::ops` and rendered here. A surface picks a [`Reader`]; it never words a
//! line itself. Nothing here touches the store or the network.
//!
//! Files: `search.rs` (the compact index, local and central), `records.rs`
//! (timelines and full records), `stats.rs` (counts and the sync state),
//! `sync.rs` (what a sync did).

pub mod commits;
pub mod knowledge;
pub mod records;
pub mod search;
pub mod stats;
pub mod sync;

use crate::timefmt;
use serde::{Deserialize, Serialize};
use solaria_shared::{MachineId, UnixMillis};
use std::collections::BTreeMap;

/// Who reads the text, and so how times, machines and next steps are written.
#[derive(Debug, Clone, Copy)]
pub enum Reader {
    /// A person at a terminal: short times relative to `now` (`14:03`, `11-20 14:03`),
    /// a record's machine named only when it is not this one, and next steps as
    /// `solaria` commands.
    Person { now: UnixMillis },
    /// An agent that cites its sources: full times (`2026-11-20 14:03`), every
    /// machine named, and next steps as MCP tools.
    Agent,
}

impl Reader {
    /// A record's time in an index line, as this reader is shown it.
    fn when(self, t: UnixMillis) -> String {
        match self {
            Reader::Person { now } => format!("{:<11}", timefmt::short(t, now)),
            Reader::Agent => timefmt::full(t),
        }
    }

    /// How this reader sees what happened around a record.
    fn timeline_step(self) -> &'static str {
        match self {
            Reader::Person { .. } => "`solaria timeline ID`",
            Reader::Agent => "memory_timeline ID",
        }
    }

    /// How this reader fetches full records.
    fn records_step(self) -> &'static str {
        match self {
            Reader::Person { .. } => "`solaria show ID…`",
            Reader::Agent => "memory_get_observations [ID…]",
        }
    }
}

/// The names of the machines a result mentions, and which one is this machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MachineLabels {
    pub this_machine: Option<MachineId>,
    pub names: BTreeMap<MachineId, String>,
}

impl MachineLabels {
    /// The name of machine `m` (its id when it has none).
    pub fn name(&self, m: MachineId) -> String {
        self.names.get(&m).cloned().unwrap_or_else(|| m.to_string())
    }

    /// ` @name` after a line, or nothing when a person reads about this machine's
    /// own record.
    fn suffix(&self, m: MachineId, reader: Reader) -> String {
        self.placed(m, reader, "")
    }

    /// `{before} @name` (e.g. ` on @desktop`), or nothing when a person reads about
    /// this machine's own record.
    fn placed(&self, m: MachineId, reader: Reader, before: &str) -> String {
        match reader {
            Reader::Person { .. } if Some(m) == self.this_machine => String::new(),
            _ => format!("{before} @{}", self.name(m)),
        }
    }
}

/// What to say about this machine's clock when it is off the server's by
/// `offset_ms` (the correction: positive when it is behind), or nothing when it is
/// close enough (`solaria_shared::hlc::CLOCK_WARNING_MS`).
pub fn clock_note(offset_ms: i64) -> Option<String> {
    if offset_ms.abs() < solaria_shared::hlc::CLOCK_WARNING_MS {
        return None;
    }
    let way = if offset_ms < 0 { "fast" } else { "slow" };
    Some(format!(
        "this machine's clock is {} {way} (by the server's clock); SOLARIA stamps its \
         records with the server's time, so sync and last-write-wins still hold. Fix the \
         system clock (NTP) when you can",
        span(offset_ms.unsigned_abs())
    ))
}

/// A length of time as people say it, rounded to its last unit: `1 d 2 h`,
/// `3 h 5 min`, `4 min 10 s`.
fn span(ms: u64) -> String {
    const MIN: u64 = 60_000;
    const HOUR: u64 = 60 * MIN;
    const DAY: u64 = 24 * HOUR;
    if ms + HOUR / 2 >= DAY {
        let hours = (ms + HOUR / 2) / HOUR;
        format!("{} d {} h", hours / 24, hours % 24)
    } else if ms + MIN / 2 >= HOUR {
        let mins = (ms + MIN / 2) / MIN;
        format!("{} h {} min", mins / 60, mins % 60)
    } else {
        let secs = (ms + 500) / 1000;
        match secs / 60 {
            0 => format!("{secs} s"),
            m => format!("{m} min {} s", secs % 60),
        }
    }
}

/// Pretty-prints JSON text; other text is shown as it is.
fn pretty(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s),
            other => serde_json::to_string_pretty(&other).ok(),
        })
        .unwrap_or_else(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_off_by_a_day_is_said_plainly_and_a_few_seconds_is_not() {
        let fast = clock_note(-86_400_000 - 7_200_000).expect("said");
        assert!(fast.contains("1 d 2 h fast"), "{fast}");
        let slow = clock_note(5 * 60_000).expect("said");
        assert!(slow.contains("5 min 0 s slow"), "{slow}");
        assert_eq!(clock_note(20_000), None);
        let almost = clock_note(86_400_000 - 800).expect("said");
        assert!(almost.contains("1 d 0 h slow"), "rounded: {almost}");
    }
}
