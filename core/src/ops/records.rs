//! Reading records by id: a session's timeline around one
//! (`solaria timeline`, `memory_timeline`, `/api/timeline/{id}`) and full records
//! (`solaria show`, `memory_get_observations`).

use super::{MachineNames, OpError, OpResult, input};
use crate::app::App;
use crate::present::records::{RecordsPage, TimelinePage};
use crate::store::records;
use crate::store::views::{self, AnyRecord};
use crate::store::{Store, StoreError};
use std::collections::BTreeMap;

/// The most events shown on either side of a timeline's anchor.
pub const MAX_WINDOW: usize = solaria_shared::mcp::TIMELINE_MAX_WINDOW;
/// Events shown on either side unless asked otherwise.
pub const DEFAULT_WINDOW: usize = solaria_shared::mcp::TIMELINE_DEFAULT_WINDOW;
/// The most records fetched at once.
pub const MAX_IDS: usize = solaria_shared::mcp::MAX_IDS;

/// A timeline: the anchor (an id or a citation) and how many events around it.
#[derive(Debug, Clone)]
pub struct TimelineRequest {
    pub id: String,
    pub before: usize,
    pub after: usize,
    /// Only records of this type (an observation kind or a knowledge kind).
    pub kind: Option<solaria_shared::RecordType>,
}

/// What happened around a record in its session.
pub fn timeline(app: &App, request: &TimelineRequest) -> OpResult<TimelinePage> {
    let before = input::bounded(
        "before",
        Some(request.before),
        DEFAULT_WINDOW,
        0..=MAX_WINDOW,
    )?;
    let after = input::bounded("after", Some(request.after), DEFAULT_WINDOW, 0..=MAX_WINDOW)?;
    let store = app.store()?;
    let timeline = views::timeline(store.conn(), &request.id, before, after, request.kind)?;
    Ok(timeline_page(&store, timeline))
}

/// `timeline` with the names of the machines it shows.
pub(crate) fn timeline_page(store: &Store, timeline: views::Timeline) -> TimelinePage {
    let mut names = MachineNames::new(store);
    names.name(timeline.session.meta.machine_id);
    for o in &timeline.entries {
        names.name(o.meta.machine_id);
    }
    for k in &timeline.knowledge {
        names.name(k.meta.machine_id);
    }
    TimelinePage {
        timeline,
        machines: names.labels(),
    }
}

/// Full records by id (or citation). Ids that match nothing are listed in the
/// page; when none matches, it is an error.
pub fn get(app: &App, ids: &[String]) -> OpResult<RecordsPage> {
    if ids.is_empty() {
        return Err(OpError::BadInput(
            "no ids given: give the ids (or citations) of the records to fetch".into(),
        ));
    }
    if ids.len() > MAX_IDS {
        return Err(OpError::BadInput(format!(
            "{} ids asked for, at most {MAX_IDS} at once",
            ids.len()
        )));
    }
    let store = app.store()?;
    let conn = store.conn();
    let mut names = MachineNames::new(&store);
    let mut page = RecordsPage {
        records: Vec::new(),
        missing: Vec::new(),
        session_points: BTreeMap::new(),
        knowledge_links: BTreeMap::new(),
        machines: Default::default(),
    };
    for id in ids {
        let record = match views::resolve(conn, id) {
            Ok(r) => r,
            Err(StoreError::NotFound(_)) => {
                page.missing.push(id.clone());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        names.name(record.machine_id());
        match &record {
            AnyRecord::Observation(_) | AnyRecord::Summary(_) => {}
            AnyRecord::Session(s) => {
                if let Some(summary) = records::summary_of_session(conn, s.id)? {
                    page.session_points.insert(s.id, summary.key_points);
                }
            }
            AnyRecord::Knowledge(k) => {
                let related = super::knowledge::related(&store, k.clone())?;
                page.knowledge_links
                    .insert(k.id, (related.links, related.others));
            }
        }
        page.records.push(record);
    }
    if page.records.is_empty() {
        return Err(OpError::NotFound(page.missing));
    }
    page.machines = names.labels();
    Ok(page)
}
