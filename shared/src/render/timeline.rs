//! A session's timeline: the session, its summary, the events around the record
//! asked about (marked `>`), and the knowledge recorded in it.

use super::{DataBlock, NAME_CHARS, NameOf, Reader, TITLE_CHARS, field, knowledge};
use crate::citation::Citation;
use crate::knowledge::Knowledge;
use crate::record::{Observation, Session, Summary};
use serde::Serialize;

/// The longest summary shown on a timeline, in characters.
const SUMMARY_CHARS: usize = 1_000;

/// Which of a session's `len` events a timeline shows, `start..end`: `before` and
/// `after` around the anchor's position (`Some(at)`), or the first
/// `before + after + 1` when it has no anchor among them. The one window rule of
/// both sides.
pub fn window(len: usize, anchor: Option<usize>, before: usize, after: usize) -> (usize, usize) {
    match anchor {
        Some(at) => (at.saturating_sub(before), (at + after + 1).min(len)),
        None => (0, (before + after + 1).min(len)),
    }
}

/// A session's first line: its citation, agent, project and directory, machine, and
/// when it started and ended.
pub fn session_heading(s: &Session, reader: Reader, names: &impl NameOf) -> String {
    format!(
        "{} {} session in {} ({}){}, started {}{}",
        Citation::session(s.id),
        field(&s.agent, NAME_CHARS),
        field(&s.project.name, NAME_CHARS),
        field(&s.cwd, 300),
        reader.written_at(s.meta.machine_id, names),
        reader.time.format(s.started_at),
        s.ended_at
            .map(|e| format!(", ended {}", reader.time.format(e)))
            .unwrap_or_default()
    )
}

/// One event of a timeline: citation, time, kind, title, `[error]` when it failed,
/// and its machine.
pub fn event_line(o: &Observation, reader: Reader, names: &impl NameOf) -> String {
    format!(
        "{} {} {:<8} {}{}{}",
        Citation::observation(o.id),
        reader.time.format(o.created_at),
        o.kind.as_str(),
        field(&o.title, TITLE_CHARS),
        if o.failed() { "  [error]" } else { "" },
        reader.machine(o.meta.machine_id, names),
    )
}

/// What happened around a record: its session, its summary, the events of the
/// window (oldest first) and the knowledge recorded in the session. Both sides
/// answer with it (the edge's local API as JSON).
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub session: Session,
    pub summary: Option<Summary>,
    /// The id of the record asked about (an observation or the summary), marked `>`.
    pub anchor: Option<String>,
    /// The events shown, oldest first.
    pub entries: Vec<Observation>,
    /// Events of the session not shown before and after the window.
    pub hidden_before: usize,
    pub hidden_after: usize,
    /// Knowledge recorded in the session, oldest first.
    pub knowledge: Vec<Knowledge>,
}

impl Timeline {
    /// The session, its summary, and the events around the anchor.
    pub fn text(&self, reader: Reader, names: &impl NameOf) -> String {
        let mut out = format!("{}\n", session_heading(&self.session, reader, names));
        let mark = |id: String| {
            if self.anchor.as_deref() == Some(id.as_str()) {
                ">"
            } else {
                " "
            }
        };
        if let Some(summary) = &self.summary {
            out.push_str(&format!(
                "{} summary: {}\n",
                mark(summary.id.to_string()),
                field(&summary.text, SUMMARY_CHARS)
            ));
        }
        if self.hidden_before > 0 {
            out.push_str(&format!("  … {} earlier event(s)\n", self.hidden_before));
        }
        for o in &self.entries {
            out.push_str(&format!(
                "{} {}\n",
                mark(o.id.to_string()),
                event_line(o, reader, names)
            ));
        }
        if self.hidden_after > 0 {
            out.push_str(&format!("  … {} later event(s)\n", self.hidden_after));
        }
        if !self.knowledge.is_empty() {
            out.push_str("  recorded in this session:\n");
        }
        for k in &self.knowledge {
            out.push_str(&format!("  {}\n", knowledge::line(k, reader, names)));
        }
        if reader.is_agent() {
            let block = DataBlock::new().wrap("a session's timeline", &out);
            format!("{block}{} gives the full records.\n", reader.records_step())
        } else {
            out
        }
    }
}
