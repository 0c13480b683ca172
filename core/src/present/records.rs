//! Records as people and agents read them: a session's timeline around a record
//! ([`TimelinePage`]) and full records by id ([`RecordsPage`]), worded by the shared
//! renderer (`solaria_shared::render::{timeline, records, knowledge}`).

use super::{MachineLabels, Reader};
use crate::store::views::{AnyRecord, Timeline};
use serde::Serialize;
use solaria_shared::render::records::Full;
use solaria_shared::render::{self, TimeStyle};
use solaria_shared::{Knowledge, KnowledgeId, SessionId};
use std::collections::BTreeMap;

/// What happened around a record, with the names of the machines it mentions
/// (serialised with each record's author, `super::authored`).
#[derive(Debug, Clone)]
pub struct TimelinePage {
    pub timeline: Timeline,
    pub machines: MachineLabels,
}

impl TimelinePage {
    /// The session, its summary, and the events around the anchor (marked `>`).
    pub fn text(&self, reader: Reader) -> String {
        self.timeline
            .text(reader.render(&self.machines), &self.machines)
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
    /// Each record in full, one after the other, with full times (inside a data
    /// block for an agent).
    pub fn text(&self, reader: Reader) -> String {
        let r = render::Reader {
            time: TimeStyle::Local,
            ..reader.render(&self.machines)
        };
        let full: Vec<Full<'_>> = self
            .records
            .iter()
            .map(|record| match record {
                AnyRecord::Observation(o) => Full::Observation(o),
                AnyRecord::Session(s) => Full::Session(
                    s,
                    self.session_points
                        .get(&s.id)
                        .map_or(&[][..], Vec::as_slice),
                ),
                AnyRecord::Summary(s) => Full::Summary(s),
                AnyRecord::Knowledge(k) => Full::Knowledge(
                    k,
                    self.knowledge_links
                        .get(&k.id)
                        .map(|(links, linked)| render::knowledge::relations(k, links, linked))
                        .unwrap_or_default(),
                ),
            })
            .collect();
        render::records::page(&full, r, &self.machines)
    }
}
