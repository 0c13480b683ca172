//! Records as people and agents read them: a session's timeline around a record
//! ([`TimelinePage`]) and full records by id ([`RecordsPage`]).

use super::{MachineLabels, Reader, pretty};
use crate::store::views::{AnyRecord, Timeline};
use crate::timefmt;
use serde::Serialize;
use solaria_shared::{Citation, Knowledge, KnowledgeId, Observation, SessionId};
use std::collections::BTreeMap;
use std::fmt::Write;

/// What happened around a record, with the names of the machines it mentions.
#[derive(Debug, Clone, Serialize)]
pub struct TimelinePage {
    #[serde(flatten)]
    pub timeline: Timeline,
    pub machines: MachineLabels,
}

impl TimelinePage {
    /// The session, its summary, and the events around the anchor (marked `>`).
    pub fn text(&self, reader: Reader) -> String {
        let (t, m) = (&self.timeline, &self.machines);
        let s = &t.session;
        let mut out = format!(
            "{} {} session in {} ({}){}, started {}{}\n",
            Citation::session(s.id),
            s.agent,
            s.project.name,
            s.cwd,
            m.placed(s.meta.machine_id, reader, " on"),
            timefmt::full(s.started_at),
            s.ended_at
                .map(|e| format!(", ended {}", timefmt::full(e)))
                .unwrap_or_default()
        );
        if let Some(summary) = &t.summary {
            let _ = writeln!(out, "  summary: {}", summary.text);
        }
        if t.hidden_before > 0 {
            let _ = writeln!(out, "  … {} earlier event(s)", t.hidden_before);
        }
        for o in &t.entries {
            let here = if t.anchor.as_deref() == Some(&o.id.to_string()) {
                ">"
            } else {
                " "
            };
            let err = if o.metadata.get("error").and_then(|v| v.as_bool()) == Some(true) {
                "  [error]"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "{here} {} {} {:<8} {}{err}{}",
                Citation::observation(o.id),
                reader.when(o.created_at).trim_end(),
                o.kind.as_str(),
                o.title,
                m.suffix(o.meta.machine_id, reader),
            );
        }
        if t.hidden_after > 0 {
            let _ = writeln!(out, "  … {} later event(s)", t.hidden_after);
        }
        out
    }
}

/// Full records by id, the ids that matched none, and what the text needs to
/// show them (a session's summary points, machine names).
#[derive(Debug, Clone, Serialize)]
pub struct RecordsPage {
    pub records: Vec<AnyRecord>,
    pub missing: Vec<String>,
    /// The key points of the summaries of the sessions among `records`.
    #[serde(skip)]
    pub session_points: BTreeMap<SessionId, Vec<String>>,
    /// The links of the knowledge records among `records` (both ways), and the
    /// records at their other ends.
    #[serde(skip)]
    pub knowledge_links: BTreeMap<KnowledgeId, (Vec<Knowledge>, Vec<Knowledge>)>,
    pub machines: MachineLabels,
}

impl RecordsPage {
    /// Each record in full, one after the other, then the ids not found.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for r in &self.records {
            self.record_text(r, &mut out);
            out.push('\n');
        }
        out
    }

    fn record_text(&self, r: &AnyRecord, out: &mut String) {
        let m = &self.machines;
        let mut line = |s: String| {
            out.push_str(&s);
            out.push('\n');
        };
        match r {
            AnyRecord::Observation(o) => observation_text(o, m, &mut line),
            AnyRecord::Session(s) => {
                line(format!(
                    "{} {} session ({})",
                    Citation::session(s.id),
                    s.agent,
                    s.source
                ));
                line(format!(
                    "  project: {} ({})   cwd: {}   machine: @{}",
                    s.project.name,
                    s.project.key,
                    s.cwd,
                    m.name(s.meta.machine_id)
                ));
                line(format!(
                    "  started: {}   ended: {}",
                    timefmt::full(s.started_at),
                    s.ended_at.map(timefmt::full).unwrap_or_else(|| "-".into())
                ));
                for point in self.session_points.get(&s.id).into_iter().flatten() {
                    line(format!("  - {point}"));
                }
            }
            AnyRecord::Summary(s) => {
                line(format!(
                    "{} summary of {} observations, written {} on @{}",
                    Citation::session(s.session_id),
                    s.observation_count,
                    timefmt::full(s.created_at),
                    m.name(s.meta.machine_id)
                ));
                line(format!("  summary id: {}", s.id));
                for point in &s.key_points {
                    line(format!("  - {point}"));
                }
            }
            AnyRecord::Knowledge(k) => {
                let mut text = String::new();
                super::knowledge::full(k, m, &mut text);
                if let Some((links, linked)) = self.knowledge_links.get(&k.id) {
                    for rel in super::knowledge::relations(k, links, linked) {
                        text.push_str(&format!("  {rel}\n"));
                    }
                }
                out_text(text, &mut line);
            }
        }
    }
}

fn out_text(text: String, line: &mut impl FnMut(String)) {
    for l in text.lines() {
        line(l.to_string());
    }
}

fn observation_text(o: &Observation, m: &MachineLabels, line: &mut impl FnMut(String)) {
    line(format!(
        "{} {} {}",
        Citation::observation(o.id),
        o.kind,
        o.title
    ));
    line(format!(
        "  when: {}   machine: @{}   project: {} ({})",
        timefmt::full(o.created_at),
        m.name(o.meta.machine_id),
        o.project.name,
        o.project.key
    ));
    line(format!("  session: {}", Citation::session(o.session_id)));
    if o.meta.deleted {
        line("  (forgotten: content erased)".into());
        return;
    }
    if let Some(tool) = &o.tool_name {
        line(format!("  tool: {tool}"));
    }
    if !o.files.is_empty() {
        line(format!("  files: {}", o.files.join(", ")));
    }
    if !o.tags.is_empty() {
        line(format!("  tags: {}", o.tags.join(", ")));
    }
    line(format!("  metadata: {}", o.metadata));
    line(format!("--- input\n{}", pretty(&o.input)));
    if !o.response.is_empty() {
        line(format!("--- response\n{}", pretty(&o.response)));
    }
}
