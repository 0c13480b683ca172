//! The results people and agents read, and the JSON shapes the local API answers:
//! each operation's result is a type of this module, built by `crate::ops` and
//! rendered here. Records are worded by the one renderer both sides share
//! (`solaria_shared::render`: sanitized fields, one data block for an agent); this
//! module words what only the edge has (stats, sync reports, recall). A surface
//! picks a [`Reader`]; it never words a line itself. Nothing here touches the store
//! or the network.
//!
//! Files: `authored.rs` (records in JSON, each beside its author), `browse.rs` (the viewer's projects, sessions and live feed), `search.rs` (the compact index, local and central), `records.rs`
//! (timelines and full records), `knowledge.rs` (knowledge pages), `stats.rs`
//! (counts and the sync state), `sync.rs` (what a sync did), `commits.rs`,
//! `maintenance.rs` (conflicts, prune, embed).

pub mod authored;
pub mod browse;
pub mod commits;
pub mod knowledge;
pub mod maintenance;
pub mod portable;
pub mod records;
pub mod search;
pub mod stats;
pub mod sync;

use serde::{Deserialize, Serialize};
use solaria_shared::render::{self, Audience, NameOf, TimeStyle};
use solaria_shared::wire::Author;
use solaria_shared::{MachineId, UnixMillis};
use std::collections::BTreeMap;

/// Who reads the text, and so how times, machines and next steps are written (the
/// words themselves are `solaria_shared::render`'s, the same on the central service).
#[derive(Debug, Clone, Copy)]
pub enum Reader {
    /// A person at a terminal: short times relative to `now` (`14:03`, `11-20 14:03`),
    /// a record's machine named only when it is not this one, and next steps as
    /// `solaria` commands.
    Person { now: UnixMillis },
    /// An agent that cites its sources: full local times with their zone
    /// (`2026-11-20 14:03 +01:00`), every machine named, next steps as MCP tools,
    /// and the records inside one data block.
    Agent,
}

impl Reader {
    /// The shared renderer's reader, for records of `machines`.
    pub fn render(self, machines: &MachineLabels) -> render::Reader {
        match self {
            Reader::Person { now } => render::Reader {
                time: TimeStyle::Short { now },
                audience: Audience::Person {
                    this_machine: machines.this_machine,
                },
            },
            Reader::Agent => render::Reader::agent(TimeStyle::Local),
        }
    }

    /// A time as this reader reads it.
    pub fn when(self, t: UnixMillis) -> String {
        self.render(&MachineLabels::default()).time.format(t)
    }

    /// Whether an agent reads.
    pub fn is_agent(self) -> bool {
        matches!(self, Reader::Agent)
    }
}

/// The names of the machines a result mentions, and which one is this machine.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MachineLabels {
    pub this_machine: Option<MachineId>,
    pub names: BTreeMap<MachineId, String>,
    /// Who writes on each of them: the machine, and a teammate's handle.
    #[serde(default)]
    pub authors: BTreeMap<MachineId, Author>,
}

impl MachineLabels {
    /// The name of machine `m` (its id when it has none).
    pub fn name(&self, m: MachineId) -> String {
        self.names.get(&m).cloned().unwrap_or_else(|| m.to_string())
    }

    /// Who wrote on machine `m` (its id for a name when it has none).
    pub fn author(&self, m: MachineId) -> Author {
        self.authors
            .get(&m)
            .cloned()
            .unwrap_or_else(|| Author::unnamed(m))
    }
}

impl NameOf for MachineLabels {
    fn name_of(&self, m: MachineId) -> String {
        self.name(m)
    }

    fn teammate_of(&self, m: MachineId) -> Option<String> {
        self.authors.get(&m).and_then(|a| a.handle.clone())
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
