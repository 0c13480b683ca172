//! How knowledge reads: one cited line per record for lists and answers, the
//! whole record for `show`, and the pages of `decisions`, `memories`, `why` and
//! `iteration show`. JSON shapes are these types serialised.

use super::{MachineLabels, Reader};
use crate::timefmt;
use serde::Serialize;
use solaria_shared::knowledge::{Band, KnowledgeBody};
use solaria_shared::text::clip_line;
use solaria_shared::{Knowledge, KnowledgeId, UnixMillis};
use std::fmt::Write;

/// Characters of a rationale or content shown on one line.
const LINE_CHARS: usize = 160;

fn when(t: UnixMillis, reader: Reader) -> String {
    match reader {
        Reader::Person { now } => timefmt::short(t, now),
        Reader::Agent => timefmt::full(t),
    }
}

/// One line: citation, time, kind, the gist, and its status when it no longer stands.
pub fn line(k: &Knowledge, reader: Reader) -> String {
    let head = format!("{} {}", k.citation(), when(k.created_at, reader));
    let status = match k.status() {
        "active" => String::new(),
        other => format!(" [{other}]"),
    };
    let gist = k.gist();
    format!("{head} {gist}{status}")
}

/// The whole record, field by field.
pub fn full(k: &Knowledge, machines: &MachineLabels, out: &mut String) {
    let mut put = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    put(format!(
        "{} {} in {} ({}), written {} on @{}{}",
        k.citation(),
        k.kind(),
        k.project.name,
        k.project.key,
        timefmt::full(k.created_at),
        machines.name(k.meta.machine_id),
        match k.status() {
            "active" => String::new(),
            other => format!(" — {other}"),
        }
    ));
    let list = |items: &[String]| items.join("; ");
    let cite = |id: &Option<KnowledgeId>, letter: char| {
        id.map(|i| format!("[{letter}#{i}]")).unwrap_or_default()
    };
    match &k.body {
        KnowledgeBody::Decision(d) => {
            put(format!("  title: {}", d.title));
            if !d.context.is_empty() {
                put(format!("  context: {}", d.context));
            }
            put(format!("  chosen: {}", d.chosen));
            if !d.alternatives.is_empty() {
                put(format!("  alternatives: {}", list(&d.alternatives)));
            }
            if !d.rationale.is_empty() {
                put(format!("  rationale: {}", d.rationale));
            }
            put(format!(
                "  impact: {}{}   decided: {}",
                d.impact,
                if d.phase.is_empty() {
                    String::new()
                } else {
                    format!("   phase: {}", d.phase)
                },
                timefmt::full(d.decided_at)
            ));
            if d.iteration.is_some() {
                put(format!("  iteration: {}", cite(&d.iteration, 'I')));
            }
            if !d.tags.is_empty() {
                put(format!("  tags: {}", d.tags.join(", ")));
            }
            if d.supersedes.is_some() {
                put(format!("  supersedes: {}", cite(&d.supersedes, 'D')));
            }
            if d.superseded_by.is_some() {
                put(format!("  superseded by: {}", cite(&d.superseded_by, 'D')));
            }
        }
        KnowledgeBody::Memory(m) => {
            put(format!("  {}: {}", m.memory_type, m.content));
            put(format!(
                "  confidence: {:.2}{}",
                m.confidence.value(),
                m.confidence.band().note()
            ));
            if !m.tags.is_empty() {
                put(format!("  tags: {}", m.tags.join(", ")));
            }
            if let Some(at) = m.expires_at {
                put(format!("  expires: {}", timefmt::full(at)));
            }
            if m.supersedes.is_some() {
                put(format!("  supersedes: {}", cite(&m.supersedes, 'M')));
            }
            if m.superseded_by.is_some() {
                put(format!("  superseded by: {}", cite(&m.superseded_by, 'M')));
            }
        }
        KnowledgeBody::Commit(c) => {
            put(format!("  sha: {}   branch: {}", c.sha, c.branch));
            put(format!("  message: {}", c.message.trim()));
            if c.complete {
                put(format!(
                    "  author: {}   committed: {}   +{} −{} in {} files",
                    c.author,
                    timefmt::full(c.committed_at),
                    c.insertions,
                    c.deletions,
                    c.files.len()
                ));
            }
            for d in &c.decisions {
                put(format!("  implements: [D#{d}]"));
            }
        }
        KnowledgeBody::Iteration(i) => {
            put(format!(
                "  {} ({}): {}",
                i.title, i.iteration_kind, i.status
            ));
            if !i.description.is_empty() {
                put(format!("  {}", i.description));
            }
            put(format!(
                "  started: {}   completed: {}",
                timefmt::full(i.started_at),
                i.completed_at
                    .map(timefmt::full)
                    .unwrap_or_else(|| "-".into())
            ));
        }
        KnowledgeBody::Event(e) => {
            put(format!(
                "  {} {}   at: {}",
                e.event,
                e.detail,
                timefmt::full(e.at)
            ));
            if e.iteration.is_some() {
                put(format!("  iteration: {}", cite(&e.iteration, 'I')));
            }
        }
        KnowledgeBody::Link(l) => put(format!(
            "  {} {} {}{}",
            l.from.map(|i| i.to_string()).unwrap_or_default(),
            l.relation,
            l.to.map(|i| i.to_string()).unwrap_or_default(),
            if l.note.is_empty() {
                String::new()
            } else {
                format!(" — {}", l.note)
            }
        )),
    }
}

/// How a record relates to others, each way: `implements [D#…]`, `implemented by
/// [C#…]`, `supports [M#…]`, `supported by …`.
pub fn relations(record: &Knowledge, links: &[Knowledge], others: &[Knowledge]) -> Vec<String> {
    let find = |id: KnowledgeId| others.iter().find(|o| o.id == id);
    let mut out = Vec::new();
    for l in links {
        match &l.body {
            KnowledgeBody::Link(link) => {
                let (Some(from), Some(to)) = (link.from, link.to) else {
                    continue;
                };
                let (verb, other) = if from == record.id {
                    (link.relation.as_str().replace('_', " "), to)
                } else {
                    (
                        format!("{} (by)", link.relation.as_str().replace('_', " ")),
                        from,
                    )
                };
                if let Some(o) = find(other) {
                    out.push(format!("{verb} {} {}", o.citation(), o.title()));
                }
            }
            KnowledgeBody::Commit(_) if l.id != record.id => {
                out.push(format!("implemented by {} {}", l.citation(), l.title()));
            }
            _ => {}
        }
    }
    out
}

/// A list of knowledge records (`decisions`, `memories`, `questions`, `commits`).
#[derive(Debug, Clone, Serialize)]
pub struct KnowledgeList {
    /// What was listed (`decisions`, `memories`…), for the empty answer.
    #[serde(skip)]
    pub what: &'static str,
    pub records: Vec<Knowledge>,
}

impl KnowledgeList {
    /// One cited line per record, or a sentence when there is none.
    pub fn text(&self, reader: Reader) -> String {
        if self.records.is_empty() {
            return format!("No {} in the memory.\n", self.what);
        }
        let mut out = String::new();
        for k in &self.records {
            out.push_str(&line(k, reader));
            out.push('\n');
        }
        out
    }
}

/// What a write did: the record and what changed alongside.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenPage {
    pub record: Knowledge,
    pub touched: Vec<Knowledge>,
}

impl WrittenPage {
    /// `Recorded [D#…] …`, then the records changed with it.
    pub fn text(&self, reader: Reader) -> String {
        let verb = match (&self.record.body, self.record.status()) {
            (KnowledgeBody::Memory(m), _) if m.confidence.band() == Band::OpenQuestion => {
                "Kept as an open question"
            }
            _ => "Recorded",
        };
        let mut out = format!("{verb} {}\n", line(&self.record, reader));
        for t in &self.touched {
            let _ = writeln!(out, "  also: {}", line(t, reader));
        }
        out
    }
}

/// A record with its links both ways (`solaria show`, `why`).
#[derive(Debug, Clone, Serialize)]
pub struct RelatedPage {
    pub record: Knowledge,
    pub links: Vec<Knowledge>,
    pub linked: Vec<Knowledge>,
}

/// An iteration with its decisions, commits and events.
#[derive(Debug, Clone, Serialize)]
pub struct IterationPage {
    pub iteration: Knowledge,
    pub members: Vec<Knowledge>,
    /// The sessions of its project while it was active.
    pub sessions: Vec<solaria_shared::Session>,
}

impl IterationPage {
    /// The iteration, then its timeline (decisions, commits, events), oldest first.
    pub fn text(&self, reader: Reader) -> String {
        let mut out = format!("{}\n", line(&self.iteration, reader));
        if let KnowledgeBody::Iteration(i) = &self.iteration.body
            && !i.description.is_empty()
        {
            let _ = writeln!(out, "  {}", clip_line(&i.description, LINE_CHARS));
        }
        if self.members.is_empty() {
            out.push_str("  nothing recorded in it yet\n");
        }
        for m in &self.members {
            let _ = writeln!(out, "  {}", line(m, reader));
        }
        if !self.sessions.is_empty() {
            let cited: Vec<String> = self
                .sessions
                .iter()
                .map(|s| solaria_shared::Citation::session(s.id).to_string())
                .collect();
            let _ = writeln!(out, "  sessions ({}): {}", cited.len(), cited.join(" "));
        }
        out
    }
}

/// The answer to `why QUERY`: knowledge first (decisions, memories), each with
/// what implements or relates to it, then the events that mention the words.
#[derive(Debug, Clone, Serialize)]
pub struct WhyAnswer {
    pub query: String,
    pub knowledge: Vec<RelatedPage>,
    /// Other records (events, summaries) matching the words, best first.
    pub history: Vec<super::search::CitedHit>,
}

impl WhyAnswer {
    /// Each decision or memory in full (rationale, alternatives) with its
    /// relations, then the history lines; a plain sentence when nothing matches.
    pub fn text(&self, reader: Reader, machines: &MachineLabels) -> String {
        let mut out = String::new();
        if self.knowledge.is_empty() && self.history.is_empty() {
            return format!(
                "The memory holds nothing about {:?}: no decision, memory or event matches.\n",
                self.query
            );
        }
        if self.knowledge.is_empty() {
            let _ = writeln!(
                out,
                "No decision or memory matches {:?}; events that mention it:",
                self.query
            );
        }
        for r in &self.knowledge {
            full(&r.record, machines, &mut out);
            for rel in relations(&r.record, &r.links, &r.linked) {
                let _ = writeln!(out, "  {rel}");
            }
            out.push('\n');
        }
        if !self.history.is_empty() && !self.knowledge.is_empty() {
            out.push_str("Related events:\n");
        }
        for h in &self.history {
            out.push_str(&super::search::index_line(h, reader));
            out.push('\n');
        }
        out
    }
}
