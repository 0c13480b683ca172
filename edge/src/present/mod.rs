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

/// A stored input or response as a person reads it. Tool calls are kept as the
/// agent's JSON, where a test run's output is one string with escaped line breaks:
/// shown as `key: value` lines, a string of several lines as an indented block
/// under its key (so the output reads line by line), nested fields indented, empty
/// strings and nulls left out. Other text is shown as it is (`--json` gives the
/// record as stored).
fn pretty(text: &str) -> String {
    use serde_json::Value;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => s,
        Ok(value @ (Value::Object(_) | Value::Array(_))) => {
            let mut out = String::new();
            fields(&value, 0, &mut out);
            out.truncate(out.trim_end().len());
            out
        }
        _ => text.to_string(),
    }
}

/// Appends `value`'s fields (or items) to `out`, each line indented by `indent`.
fn fields(value: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    let entries: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (format!("{k}:"), v)).collect(),
        Value::Array(items) => items.iter().map(|v| ("-".to_string(), v)).collect(),
        _ => return,
    };
    let pad = " ".repeat(indent);
    for (label, v) in entries {
        match v {
            Value::Null => {}
            Value::String(s) if s.is_empty() => {}
            Value::String(s) if s.contains('\n') => {
                out.push_str(&format!("{pad}{label}\n"));
                for line in s.lines() {
                    out.push_str(&format!("{pad}  {line}\n"));
                }
            }
            Value::String(s) => out.push_str(&format!("{pad}{label} {s}\n")),
            Value::Object(m) if m.is_empty() => {}
            Value::Array(a) if a.is_empty() => {}
            Value::Object(_) | Value::Array(_) => {
                out.push_str(&format!("{pad}{label}\n"));
                fields(v, indent + 2, out);
            }
            other => out.push_str(&format!("{pad}{label} {other}\n")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_reads_line_by_line_and_plain_text_as_it_is() {
        let response = serde_json::json!({
            "stdout": "running 2 tests\ntest a ... ok\ntest b ... FAILED",
            "stderr": "",
            "interrupted": false,
            "file": {"filePath": "src/a.rs", "numLines": 2},
            "lines": ["-a", "+b"],
        });
        assert_eq!(
            pretty(&response.to_string()),
            "file:\n  filePath: src/a.rs\n  numLines: 2\ninterrupted: false\nlines:\n  - -a\n  - +b\n\
             stdout:\n  running 2 tests\n  test a ... ok\n  test b ... FAILED"
        );
        assert_eq!(pretty("fix the \\n bug"), "fix the \\n bug");
        assert_eq!(pretty("\"quoted\""), "quoted");
        assert_eq!(pretty("{not json"), "{not json");
    }

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
