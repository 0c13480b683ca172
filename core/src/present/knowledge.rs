//! The knowledge pages: `decisions`, `memories`, what a write did, `why` and
//! `iteration show`, worded by the shared renderer (`solaria_shared::render::
//! knowledge`). JSON shapes are these types serialised; the pages that hold
//! records serialise them beside their authors (`super::authored`).

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
#[derive(Debug, Clone)]
pub struct WrittenPage {
    pub record: Knowledge,
    pub touched: Vec<Knowledge>,
    /// Standing records close to the new one in subject, proposed as pairs; nothing
    /// was done to them.
    pub close: Vec<crate::store::close_pairs::Close>,
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
        for c in &self.close {
            let _ = writeln!(
                out,
                "  close to: {}\n    ({})",
                line(&c.standing, reader, m),
                closeness(&c.closeness)
            );
        }
        let mut out = framed(reader, "what was recorded", out, true);
        if !self.close.is_empty() {
            out.push_str(&pairs_intro(reader, self.close.len()));
            for c in &self.close {
                out.push_str(&pair_actions(reader, &self.record, &c.standing));
            }
        }
        out
    }
}

/// What a write says before the pairs' actions.
fn pairs_intro(reader: Reader, n: usize) -> String {
    let what = if n == 1 {
        "A standing record of its project is".to_string()
    } else {
        format!("{n} standing records of its project are")
    };
    match reader {
        Reader::Person { .. } => format!(
            "\n{what} close to it in subject; nothing changed. Choose for each, now or \
             in `solaria review`:\n"
        ),
        Reader::Agent => format!(
            "\n{what} close to it in subject; nothing was superseded. For each, if the \
             new record replaces the old one, supersede it; if both hold and bear on each \
             other, link them; otherwise leave both (the user settles the pair in `solaria \
             review`):\n"
        ),
    }
}

/// The three things to do with a pair (`new` written after `standing`), as the
/// reader does them: `solaria` commands, or MCP tool calls for an agent.
fn pair_actions(reader: Reader, new: &Knowledge, standing: &Knowledge) -> String {
    let (n, o) = (new.id.short(), standing.id.short());
    match reader {
        Reader::Person { .. } => format!(
            "  {}:\n    the new one replaces it:  solaria supersede {o} --by {n}\n    \
             both hold:                solaria keep-both {n} {o}\n    \
             both hold and relate:     solaria link {n} related {o}\n",
            standing.citation()
        ),
        Reader::Agent => format!(
            "- {}: memory_supersede {{\"id\": \"{o}\", \"by\": \"{n}\"}} · \
             memory_link {{\"from\": \"{n}\", \"relation\": \"related\", \"to\": \"{o}\"}}\n",
            standing.citation()
        ),
    }
}

/// Why two records were set side by side, in a few words.
pub fn closeness(c: &crate::store::close_pairs::Closeness) -> String {
    let mut out = format!(
        "{:.0}% of the new one's weighed words in it",
        c.words.clamp(0.0, 1.0) * 100.0
    );
    if let Some(m) = c.meaning {
        let _ = write!(out, ", {m:.2} alike in meaning");
    }
    if let Some(option) = &c.names_option {
        let _ = write!(
            out,
            "; one names {:?}, an option the other set aside",
            render::field(option, 120)
        );
    }
    out
}

/// A record with its links both ways (`solaria show`, `why`).
#[derive(Debug, Clone)]
pub struct RelatedPage {
    pub record: Knowledge,
    pub links: Vec<Knowledge>,
    pub linked: Vec<Knowledge>,
    /// What changed in the code it speaks of since it was written or confirmed,
    /// as this machine's git last saw it.
    pub changed_since: Option<solaria_shared::anchors::Staleness>,
    /// Who wrote the record and each one at the other end of a link.
    pub machines: MachineLabels,
}

/// An iteration with its decisions, commits and events.
#[derive(Debug, Clone)]
pub struct IterationPage {
    pub iteration: Knowledge,
    pub members: Vec<Knowledge>,
    /// The sessions of its project while it was active.
    pub sessions: Vec<solaria_shared::Session>,
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
#[derive(Debug, Clone)]
pub struct ToReview {
    pub record: Knowledge,
    pub changed: solaria_shared::anchors::Staleness,
}

/// `solaria review`: what to re-confirm, supersede or forget, and the pairs a
/// write proposed.
#[derive(Debug, Clone)]
pub struct ReviewPage {
    /// The project reviewed; `None` for every project (the viewer's list).
    pub project: Option<solaria_shared::Project>,
    /// The commit the check just ran at; `None` when the list is what the daemon
    /// last found (the project's repository is not the current directory's).
    pub head: Option<String>,
    /// When the history since the oldest anchored record was longer than one
    /// check reads: how many of its newest commits were read.
    pub history_cut: Option<usize>,
    pub items: Vec<ToReview>,
    /// New records close in subject to standing ones, waiting for a person.
    pub pairs: Vec<crate::store::close_pairs::PendingPair>,
    pub machines: MachineLabels,
}

impl ReviewPage {
    /// Whether nothing waits for a person.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.pairs.is_empty()
    }

    /// Where the review looked.
    fn place(&self) -> String {
        match &self.project {
            Some(p) => render::field(&p.key, 300),
            None => "every project".into(),
        }
    }

    /// Each changed record's line, what changed, and the three things a person
    /// can do; then each pair, with the three things a person can do.
    pub fn text(&self, reader: Reader) -> String {
        let mut when = match &self.head {
            Some(head) => format!("at {}", render::knowledge::short_sha(head)),
            None => "as the daemon last checked (run this in the repository to check now)".into(),
        };
        if let Some(read) = self.history_cut {
            when.push_str(&format!(
                "; the history since the oldest anchored record is longer than {read} \
                 commits, so only the newest were read and older changes are judged by their \
                 dates"
            ));
        }
        if self.is_empty() {
            return format!(
                "Nothing to review in {}: no decision or memory speaks of code changed since \
                 it was written or confirmed ({when}), and no new one waits beside a close \
                 standing one.\n",
                self.place()
            );
        }
        let mut out = self.changed_text(reader, &when);
        out.push_str(&self.pairs_text(reader));
        out
    }

    /// One entry per record whose code changed (`each_changed`), under a heading.
    fn changed_text(&self, reader: Reader, when: &str) -> String {
        if self.items.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "To review in {}: {} record(s) speak of code changed since ({when}).\n\n",
            self.place(),
            self.items.len()
        );
        for entry in self.each_changed(reader) {
            out.push_str(&entry);
            out.push('\n');
        }
        framed(reader, "what to review", out, true)
    }

    /// Each record whose code changed: its line, what changed, what to do.
    pub fn each_changed(&self, reader: Reader) -> Vec<String> {
        let r = reader.render(&self.machines);
        self.items
            .iter()
            .map(|item| {
                let id = item.record.id.short();
                format!(
                    "{}\n  changed since: {}\n  still holds: solaria confirm {id}   \
                     replaced: solaria supersede {id} …   wrong: solaria forget {id}\n",
                    render::knowledge::line(&item.record, r, &self.machines),
                    render::knowledge::changed_since(&item.changed)
                )
            })
            .collect()
    }

    /// One entry per pair (`each_pair`), under a heading.
    fn pairs_text(&self, reader: Reader) -> String {
        if self.pairs.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "{}Close pairs in {}: {} new record(s) close in subject to a standing one; \
             nothing changes until you choose.\n\n",
            if self.items.is_empty() { "" } else { "\n" },
            self.place(),
            self.pairs.len()
        );
        for entry in self.each_pair(reader) {
            out.push_str(&entry);
            out.push('\n');
        }
        framed(reader, "close pairs to settle", out, true)
    }

    /// Each pair: the new record, the standing one, how close, what to do.
    pub fn each_pair(&self, reader: Reader) -> Vec<String> {
        let r = reader.render(&self.machines);
        self.pairs
            .iter()
            .map(|p| {
                format!(
                    "{}\n  close to: {}\n    ({})\n{}",
                    render::knowledge::line(&p.record, r, &self.machines),
                    render::knowledge::line(&p.standing, r, &self.machines),
                    closeness(&p.closeness),
                    pair_actions(reader, &p.record, &p.standing)
                )
            })
            .collect()
    }
}
