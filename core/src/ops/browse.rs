//! Browsing the memory as the viewer does: the projects, a project's sessions, a
//! whole session, and the events captured after a point (the live feed).

use super::{MachineNames, OpError, OpResult};
use crate::app::App;
use crate::present::Reader;
use crate::present::browse::{
    HandedPage, HandedRecord, Kept, Live, LiveEvent, LiveSummary, ProjectRow, ProjectsPage,
    SUMMARY_CHARS, SessionsPage,
};
use crate::present::records::TimelinePage;
use crate::store::browse::FeedPosition;
use crate::store::injected::{self, Injection};
use crate::store::views::AnyRecord;
use crate::store::{StoreError, browse, views};
use solaria_shared::render::{knowledge as rk, timeline as rt};
use solaria_shared::{Citation, SessionId, sharing};

/// The most sessions a project's page lists.
pub const MAX_SESSIONS: usize = 200;
/// The most events a session's page shows (the first ones; the rest are counted).
pub const MAX_SESSION_EVENTS: usize = 2_000;
/// The most events (and summaries) the live feed hands over at once.
pub const MAX_FEED_EVENTS: usize = 200;

/// Every project of the memory with its counts, most recently active first.
pub fn projects(app: &App) -> OpResult<ProjectsPage> {
    let store = app.store()?;
    let local_only = &app.config.sync.local_only_projects;
    // What the account shares, as the last sync learned it, while logged in.
    let shared = match app.credentials()? {
        Some(_) => crate::store::sync::shared_projects(store.conn())?,
        None => None,
    };
    let projects = browse::projects(store.conn())?
        .into_iter()
        .map(|counts| {
            let p = &counts.project;
            let kept = if crate::config::is_local_only(local_only, &p.key, &p.name) {
                Kept::LocalOnly
            } else {
                match &shared {
                    Some(patterns) if sharing::shared(patterns, &p.key) => Kept::Shared,
                    Some(_) => Kept::Personal,
                    None => Kept::Unknown,
                }
            };
            ProjectRow { counts, kept }
        })
        .collect();
    Ok(ProjectsPage { projects })
}

/// The sessions of the project whose key is `key`, newest first.
pub fn sessions(app: &App, key: &str) -> OpResult<SessionsPage> {
    let store = app.store()?;
    let project = crate::store::records::resolve_project(store.conn(), key)?
        .filter(|p| p.key == key)
        .ok_or_else(|| OpError::UnknownProject {
            name: key.chars().take(80).collect(),
            suggestions: Vec::new(),
        })?;
    let sessions = views::recent_sessions(store.conn(), &project.key, MAX_SESSIONS, None)?;
    let mut names = MachineNames::new(&store);
    for s in &sessions {
        names.name(s.session.meta.machine_id);
    }
    Ok(SessionsPage {
        project,
        sessions,
        machines: names.labels(),
    })
}

/// A session, [`MAX_SESSION_EVENTS`] events at a time from its event `from` (0:
/// its first): `id` names the session, or any record of it.
pub fn session(app: &App, id: &str, from: usize) -> OpResult<TimelinePage> {
    let store = app.store()?;
    // From its first event, whichever record of it names it.
    let session = views::session_of(store.conn(), id)?;
    let mut timeline = views::timeline(
        store.conn(),
        &session.to_string(),
        0,
        from.saturating_add(MAX_SESSION_EVENTS - 1),
        None,
    )?;
    // The page: the events before `from` are counted, not shown.
    let skipped = from.min(timeline.entries.len());
    timeline.entries.drain(..skipped);
    timeline.hidden_before = skipped;
    Ok(super::records::timeline_page(&store, timeline))
}

/// Where the live feed stands now: a page rendered now follows it from here.
pub fn feed_position(app: &App) -> OpResult<FeedPosition> {
    Ok(browse::feed_position(app.store()?.conn())?)
}

/// The events and summaries stored after `position`, oldest first (events, then
/// summaries), each worded for `reader` and with the position after it.
pub fn live_after(app: &App, position: FeedPosition, reader: Reader) -> OpResult<Vec<Live>> {
    let store = app.store()?;
    let events = browse::events_after(store.conn(), position.events, MAX_FEED_EVENTS)?;
    let summaries = browse::summaries_after(store.conn(), position.summaries, MAX_FEED_EVENTS)?;
    let mut names = MachineNames::new(&store);
    for (_, o) in &events {
        names.name(o.meta.machine_id);
    }
    let machines = names.labels();
    let r = reader.render(&machines);
    let mut at = position;
    let mut out = Vec::with_capacity(events.len() + summaries.len());
    for (row, o) in events {
        at.events = row;
        out.push(Live::Event(LiveEvent {
            position: at,
            id: o.id,
            session: o.session_id,
            line: rt::event_line(&o, r, &machines),
            failed: o.failed(),
            project_key: o.project.key,
        }));
    }
    for (row, s) in summaries {
        at.summaries = row;
        out.push(Live::Summary(LiveSummary {
            position: at,
            session: s.session_id,
            text: solaria_shared::render::field(&s.text, SUMMARY_CHARS),
        }));
    }
    Ok(out)
}

/// The most injections a record's page lists.
pub const MAX_HANDINGS: usize = 50;

/// What session `session` was handed (its context, each prompt's recall), each
/// record as it reads now, for `reader`.
pub fn handed_to(app: &App, session: SessionId, reader: Reader) -> OpResult<HandedPage> {
    let store = app.store()?;
    let injections = injected::of_session(store.conn(), session)?;
    let mut names = MachineNames::new(&store);
    let mut resolved = Vec::with_capacity(injections.len());
    for i in injections {
        let mut records = Vec::with_capacity(i.cited.len());
        for cite in &i.cited {
            records.push(HandedRecord {
                cite: cite.clone(),
                line: line_of(&store, cite, reader, &mut names)?,
            });
        }
        resolved.push((i, records));
    }
    Ok(HandedPage {
        injections: resolved,
    })
}

/// When and where record `cite` was handed to agents, newest first.
pub fn handings(app: &App, cite: &Citation) -> OpResult<Vec<Injection>> {
    Ok(injected::handing(app.store()?.conn(), cite, MAX_HANDINGS)?)
}

/// The line of the record `cite` names, or `None` when it is gone.
fn line_of(
    store: &crate::store::Store,
    cite: &Citation,
    reader: Reader,
    names: &mut MachineNames<'_>,
) -> OpResult<Option<String>> {
    let record = match views::resolve(store.conn(), &cite.to_string()) {
        Ok(record) => record,
        Err(StoreError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    names.name(record.machine_id());
    let labels = names.labels_so_far();
    let r = reader.render(&labels);
    Ok(match record {
        AnyRecord::Observation(o) if !o.meta.deleted => Some(rt::event_line(&o, r, &labels)),
        AnyRecord::Session(s) if !s.meta.deleted => Some(rt::session_heading(&s, r, &labels)),
        // A session's citation names its summary too: the session's line stands for it.
        AnyRecord::Summary(s) if !s.meta.deleted => {
            crate::store::records::get_session(store.conn(), s.session_id)?
                .map(|session| rt::session_heading(&session, r, &labels))
        }
        AnyRecord::Knowledge(k) if !k.meta.deleted => Some(rk::line(&k, r, &labels)),
        _ => None,
    })
}
