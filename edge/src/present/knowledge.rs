//! The knowledge pages: `decisions`, `memories`, what a write did, `why` and
//! `iteration show`, worded by the shared renderer (`solaria_shared::render::
//! knowledge`). JSON shapes are these types serialised.

use super::{MachineLabels, Reader};
use serde::Serialize;
use solaria_shared::knowledge::{Band, KnowledgeBody};
use solaria_shared::render::{self, DataBlock};
use solaria_shared::{Knowledge, KnowledgeId};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One line: citation, time, machine, the gist, its status when it no longer
/// stands, and who wrote it when not a person (the shared renderer's line).
pub fn line(k: &Knowledge, reader: Reader, machines: &MachineLabels) -> String {
    render::knowledge::line(k, reader.render(machines), machines)
}

/// A list of knowledge records (`decisions`, `memories`, `questions`, `commits`).
#[derive(Debug, Clone, Serialize)]
pub struct KnowledgeList {
    /// What was listed (`decisions`, `memories`…), for the empty answer.
    #[serde(skip)]
    pub what: &'static str,
    pub records: Vec<Knowledge>,
    #[serde(skip)]
    pub machines: MachineLabels,
    /// Each record's links both ways and the records at their other ends, when
    /// asked for (`ops::knowledge::listing_related`): what implements a decision,
    /// what it supersedes.
    #[serde(skip)]
    pub relations: BTreeMap<KnowledgeId, (Vec<Knowledge>, Vec<Knowledge>)>,
}

impl KnowledgeList {
    /// Each record in full (the answer to "what was decided", the same on the
    /// central service).
    pub fn full_text(&self, reader: Reader) -> String {
        render::knowledge::decisions_page(
            &self.records,
            reader.render(&self.machines),
            &self.machines,
        )
    }

    /// Each record in full with its relations, apart (the viewer lays each out with
    /// its actions).
    pub fn each_full(&self, reader: Reader) -> Vec<String> {
        let r = reader.render(&self.machines);
        self.records
            .iter()
            .map(|k| {
                let mut text = render::knowledge::full(k, r, &self.machines);
                if let Some((links, linked)) = self.relations.get(&k.id) {
                    for relation in render::knowledge::relations(k, links, linked) {
                        let _ = writeln!(text, "  {relation}");
                    }
                }
                text
            })
            .collect()
    }

    /// One cited line per record, or a sentence when there is none (inside a data
    /// block for an agent).
    pub fn text(&self, reader: Reader) -> String {
        let empty = format!("No {} in the memory.", self.what);
        let text = render::knowledge::list(
            &self.records,
            reader.render(&self.machines),
            &self.machines,
            &empty,
        );
        framed(reader, self.what, text, !self.records.is_empty())
    }
}

/// `text` inside a data block when an agent reads records in it.
fn framed(reader: Reader, what: &str, text: String, has_records: bool) -> String {
    if reader.is_agent() && has_records {
        DataBlock::new().wrap(what, &text)
    } else {
        text
    }
}

/// What a write did: the record and what changed alongside.
#[derive(Debug, Clone, Serialize)]
pub struct WrittenPage {
    pub record: Knowledge,
    pub touched: Vec<Knowledge>,
    #[serde(skip)]
    pub machines: MachineLabels,
}

impl WrittenPage {
    /// `Recorded [D#…] …`, then the records changed with it.
    pub fn text(&self, reader: Reader) -> String {
        let verb = match &self.record.body {
            KnowledgeBody::Memory(m) if m.confidence.band() == Band::OpenQuestion => {
                "Kept as an open question"
            }
            KnowledgeBody::Memory(m)
                if m.memory_type.guides_behaviour() && !self.record.written_by.is_person() =>
            {
                "Proposed (a person confirms it with `solaria confirm`)"
            }
            _ => "Recorded",
        };
        let m = &self.machines;
        let mut out = format!("{verb} {}\n", line(&self.record, reader, m));
        for t in &self.touched {
            let _ = writeln!(out, "  also: {}", line(t, reader, m));
        }
        framed(reader, "what was recorded", out, true)
    }
}

/// A record with its links both ways (`solaria show`, `why`).
#[derive(Debug, Clone, Serialize)]
pub struct RelatedPage {
    pub record: Knowledge,
    /// Who wrote `record`.
    pub author: solaria_shared::wire::Author,
    pub links: Vec<Knowledge>,
    pub linked: Vec<Knowledge>,
    /// What changed in the code it speaks of since it was written or confirmed,
    /// as this machine's git last saw it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_since: Option<solaria_shared::anchors::Staleness>,
}

/// An iteration with its decisions, commits and events.
#[derive(Debug, Clone, Serialize)]
pub struct IterationPage {
    pub iteration: Knowledge,
    pub members: Vec<Knowledge>,
    /// The sessions of its project while it was active.
    pub sessions: Vec<solaria_shared::Session>,
    #[serde(skip)]
    pub machines: MachineLabels,
}

impl IterationPage {
    /// The iteration, then its timeline (decisions, commits, events), oldest first.
    pub fn text(&self, reader: Reader) -> String {
        render::knowledge::iteration_page(
            &self.iteration,
            &self.members,
            &self.sessions,
            reader.render(&self.machines),
            &self.machines,
        )
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
                render::field(&self.query, 200)
            );
        }
        if self.knowledge.is_empty() {
            let _ = writeln!(
                out,
                "No decision or memory matches {:?}; events that mention it:",
                render::field(&self.query, 200)
            );
        }
        let r = reader.render(machines);
        for k in &self.knowledge {
            out.push_str(&render::knowledge::full(&k.record, r, machines));
            if let Some(s) = &k.changed_since {
                let _ = writeln!(
                    out,
                    "  changed since: {} (`solaria review` to confirm, supersede or forget it)",
                    render::knowledge::changed_since(s)
                );
            }
            for rel in render::knowledge::relations(&k.record, &k.links, &k.linked) {
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
        framed(
            reader,
            "decisions, memories and events that answer why",
            out,
            true,
        )
    }
}

/// A standing record whose code changed since it was written or confirmed.
#[derive(Debug, Clone, Serialize)]
pub struct ToReview {
    pub record: Knowledge,
    pub changed: solaria_shared::anchors::Staleness,
}

/// `solaria review`: what to re-confirm, supersede or forget.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewPage {
    pub project: solaria_shared::Project,
    /// The commit the check just ran at; `None` when the list is what the daemon
    /// last found (the project's repository is not the current directory's).
    pub head: Option<String>,
    pub items: Vec<ToReview>,
    #[serde(skip)]
    pub machines: MachineLabels,
}

impl ReviewPage {
    /// Each record's line, what changed, and the three things a person can do.
    pub fn text(&self, reader: Reader) -> String {
        let r = reader.render(&self.machines);
        let mut out = String::new();
        let when = match &self.head {
            Some(head) => format!("at {}", render::knowledge::short_sha(head)),
            None => "as the daemon last checked (run this in the repository to check now)".into(),
        };
        if self.items.is_empty() {
            let _ = writeln!(
                out,
                "Nothing to review in {}: no decision or memory speaks of code changed since \
                 it was written or confirmed ({when}).",
                render::field(&self.project.key, 300)
            );
            return out;
        }
        let _ = writeln!(
            out,
            "To review in {}: {} record(s) speak of code changed since ({when}).\n",
            render::field(&self.project.key, 300),
            self.items.len()
        );
        for item in &self.items {
            let id = item.record.id.short();
            let _ = writeln!(
                out,
                "{}",
                render::knowledge::line(&item.record, r, &self.machines)
            );
            let _ = writeln!(
                out,
                "  changed since: {}",
                render::knowledge::changed_since(&item.changed)
            );
            let _ = writeln!(
                out,
                "  still holds: solaria confirm {id}   replaced: solaria supersede {id} …   \
                 wrong: solaria forget {id}\n"
            );
        }
        framed(reader, "what to review", out, true)
    }
}
