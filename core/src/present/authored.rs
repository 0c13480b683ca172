//! Records as a JSON answer carries them: each beside its `author` (the machine
//! that wrote it, and the teammate's handle when it is not the reader's own), so
//! a script never resolves machine ids itself. Every page that holds records
//! serialises them through here.

use super::MachineLabels;
use super::knowledge::{IterationPage, RelatedPage, ReviewPage, WrittenPage};
use super::records::TimelinePage;
use serde::{Serialize, Serializer};
use solaria_shared::wire::{Author, Authored, Written};
use solaria_shared::{Knowledge, Observation, Session, Summary};

impl MachineLabels {
    /// `record` as a JSON answer carries it.
    pub fn authored_one<'a, T: Written>(&self, record: &'a T) -> Authored<'a, T> {
        Authored {
            record,
            author: self.author(record.machine_id()),
        }
    }

    /// `records` as a JSON answer carries them.
    pub fn authored<'a, T: Written>(&self, records: &'a [T]) -> Vec<Authored<'a, T>> {
        records.iter().map(|r| self.authored_one(r)).collect()
    }
}

/// A pair of records with how close they are (a write's proposal, a review's pair).
#[derive(Serialize)]
struct Pair<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    record: Option<Authored<'a, Knowledge>>,
    standing: Authored<'a, Knowledge>,
    closeness: &'a crate::store::close_pairs::Closeness,
}

impl Serialize for WrittenPage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            record: Authored<'a, Knowledge>,
            touched: Vec<Authored<'a, Knowledge>>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            close: Vec<Pair<'a>>,
        }
        let m = &self.machines;
        Json {
            record: m.authored_one(&self.record),
            touched: m.authored(&self.touched),
            close: self
                .close
                .iter()
                .map(|c| Pair {
                    record: None,
                    standing: m.authored_one(&c.standing),
                    closeness: &c.closeness,
                })
                .collect(),
        }
        .serialize(s)
    }
}

impl Serialize for RelatedPage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            record: Authored<'a, Knowledge>,
            /// Kept beside the record too, where `why --json` always had it.
            author: Author,
            links: Vec<Authored<'a, Knowledge>>,
            linked: Vec<Authored<'a, Knowledge>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            changed_since: Option<&'a solaria_shared::anchors::Staleness>,
        }
        let m = &self.machines;
        Json {
            record: m.authored_one(&self.record),
            author: m.author(self.record.meta.machine_id),
            links: m.authored(&self.links),
            linked: m.authored(&self.linked),
            changed_since: self.changed_since.as_ref(),
        }
        .serialize(s)
    }
}

impl Serialize for IterationPage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            iteration: Authored<'a, Knowledge>,
            members: Vec<Authored<'a, Knowledge>>,
            sessions: Vec<Authored<'a, Session>>,
        }
        let m = &self.machines;
        Json {
            iteration: m.authored_one(&self.iteration),
            members: m.authored(&self.members),
            sessions: m.authored(&self.sessions),
        }
        .serialize(s)
    }
}

impl Serialize for ReviewPage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Item<'a> {
            record: Authored<'a, Knowledge>,
            changed: &'a solaria_shared::anchors::Staleness,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            project: &'a Option<solaria_shared::Project>,
            head: &'a Option<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            history_cut: Option<usize>,
            items: Vec<Item<'a>>,
            pairs: Vec<Pair<'a>>,
        }
        let m = &self.machines;
        Json {
            project: &self.project,
            head: &self.head,
            history_cut: self.history_cut,
            items: self
                .items
                .iter()
                .map(|i| Item {
                    record: m.authored_one(&i.record),
                    changed: &i.changed,
                })
                .collect(),
            pairs: self
                .pairs
                .iter()
                .map(|p| Pair {
                    record: Some(m.authored_one(&p.record)),
                    standing: m.authored_one(&p.standing),
                    closeness: &p.closeness,
                })
                .collect(),
        }
        .serialize(s)
    }
}

impl Serialize for TimelinePage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            session: Authored<'a, Session>,
            summary: Option<Authored<'a, Summary>>,
            anchor: &'a Option<String>,
            entries: Vec<Authored<'a, Observation>>,
            hidden_before: usize,
            hidden_after: usize,
            knowledge: Vec<Authored<'a, Knowledge>>,
            machines: &'a MachineLabels,
        }
        let (t, m) = (&self.timeline, &self.machines);
        Json {
            session: m.authored_one(&t.session),
            summary: t.summary.as_ref().map(|s| m.authored_one(s)),
            anchor: &t.anchor,
            entries: m.authored(&t.entries),
            hidden_before: t.hidden_before,
            hidden_after: t.hidden_after,
            knowledge: m.authored(&t.knowledge),
            machines: m,
        }
        .serialize(s)
    }
}
