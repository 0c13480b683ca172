//! Read-side views: resolving an id, a session's timeline, statistics, and the
//! recent records SessionStart draws its context from.

use super::StoreError;
use super::records::{
    self, OBSERVATION_COLUMNS, SUMMARY_COLUMNS, observation_from_row, summary_from_row,
};
use rusqlite::{Connection, params};
use serde::Serialize;
use solaria_shared::{Observation, ObservationId, Session, SessionId, Summary, SummaryId};

/// A record found by id.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnyRecord {
    Observation(Observation),
    Session(Session),
    Summary(Summary),
    Knowledge(solaria_shared::Knowledge),
}

/// Finds a record of any kind by its id, or a knowledge record by its citation,
/// short id or (a commit) sha.
pub fn resolve(conn: &Connection, id: &str) -> Result<AnyRecord, StoreError> {
    let not_found = || StoreError::NotFound(id.chars().take(80).collect());
    // Accept citations as printed ([O#id], [S#id]) as well as bare ids.
    let cited = solaria_shared::Citation::parse_lenient(id).map_err(|_| not_found())?;
    let bare = cited.as_ref().map_or(id.trim(), |c| c.id.as_str());
    if let Ok(oid) = bare.parse::<ObservationId>() {
        if let Some(o) = records::get_observation(conn, oid)? {
            return Ok(AnyRecord::Observation(o));
        }
        if let Some(s) = records::get_session(conn, SessionId::from_uuid(*oid.as_uuid()))? {
            return Ok(AnyRecord::Session(s));
        }
        if let Some(s) = records::get_summary(conn, SummaryId::from_uuid(*oid.as_uuid()))? {
            return Ok(AnyRecord::Summary(s));
        }
    }
    let kind = cited.as_ref().and_then(|c| knowledge_kind_of(c.kind));
    let mut found = super::knowledge::find_knowledge(conn, bare, kind)?;
    if found.len() == 1 {
        return Ok(AnyRecord::Knowledge(found.remove(0)));
    }
    Err(not_found())
}

/// The knowledge kind a citation letter names (`None` for observations and sessions).
fn knowledge_kind_of(kind: solaria_shared::CitedKind) -> Option<solaria_shared::KnowledgeKind> {
    use solaria_shared::{CitedKind, KnowledgeKind};
    match kind {
        CitedKind::Decision => Some(KnowledgeKind::Decision),
        CitedKind::Memory => Some(KnowledgeKind::Memory),
        CitedKind::Commit => Some(KnowledgeKind::Commit),
        CitedKind::Iteration => Some(KnowledgeKind::Iteration),
        CitedKind::Event => Some(KnowledgeKind::Event),
        CitedKind::Link => Some(KnowledgeKind::Link),
        CitedKind::Observation | CitedKind::Session => None,
    }
}

/// What happened around a record: its session, the observations before and after
/// the anchor, and the session's summary.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub session: Session,
    pub summary: Option<Summary>,
    pub anchor: Option<String>,
    pub entries: Vec<Observation>,
    /// Observations of the session not shown before / after the window.
    pub hidden_before: usize,
    pub hidden_after: usize,
}

/// The timeline around `id` (an observation, a session or a summary).
pub fn timeline(
    conn: &Connection,
    id: &str,
    before: usize,
    after: usize,
) -> Result<Timeline, StoreError> {
    let (session_id, anchor) = match resolve(conn, id)? {
        AnyRecord::Observation(o) => (o.session_id, Some(o.id)),
        AnyRecord::Session(s) => (s.id, None),
        AnyRecord::Summary(s) => (s.session_id, None),
        AnyRecord::Knowledge(k) => match k.session_id {
            Some(s) => (s, None),
            None => return Err(StoreError::NotFound(id.chars().take(80).collect())),
        },
    };
    let session = records::get_session(conn, session_id)?
        .ok_or_else(|| StoreError::NotFound(session_id.to_string()))?;
    let summary = records::summary_of_session(conn, session_id)?.filter(|s| !s.meta.deleted);
    let all = records::observations_of_session(conn, session_id)?;
    let center = anchor
        .and_then(|a| all.iter().position(|o| o.id == a))
        .unwrap_or(0);
    let (start, end) = match anchor {
        Some(_) => (
            center.saturating_sub(before),
            (center + after + 1).min(all.len()),
        ),
        None => (0, (before + after + 1).min(all.len())),
    };
    let hidden_before = start;
    let hidden_after = all.len() - end;
    Ok(Timeline {
        session,
        summary,
        anchor: anchor.map(|a| a.to_string()),
        entries: all[start..end].to_vec(),
        hidden_before,
        hidden_after,
    })
}

/// Counts and facts about the store.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub sessions: i64,
    pub observations: i64,
    pub summaries: i64,
    pub tombstones: i64,
    pub projects: i64,
    pub machines: i64,
    pub oldest: Option<i64>,
    pub newest: Option<i64>,
    pub by_kind: Vec<(String, i64)>,
    /// Local changes not yet acknowledged by a server.
    pub pending_push: i64,
}

/// Gathers [`Stats`].
pub fn stats(conn: &Connection, me: solaria_shared::MachineId) -> Result<Stats, StoreError> {
    let count =
        |sql: &str| -> Result<i64, StoreError> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    let mut by_kind = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT kind, count(*) FROM observations WHERE deleted = 0 GROUP BY kind ORDER BY 2 DESC",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        for row in rows {
            by_kind.push(row?);
        }
    }
    let pending_push = super::sync::pending_push(conn, me)?;
    Ok(Stats {
        sessions: count("SELECT count(*) FROM sessions WHERE deleted = 0")?,
        observations: count("SELECT count(*) FROM observations WHERE deleted = 0")?,
        summaries: count("SELECT count(*) FROM summaries WHERE deleted = 0")?,
        tombstones: count(
            "SELECT (SELECT count(*) FROM sessions WHERE deleted = 1)
                  + (SELECT count(*) FROM observations WHERE deleted = 1)
                  + (SELECT count(*) FROM summaries WHERE deleted = 1)",
        )?,
        projects: count("SELECT count(DISTINCT project_key) FROM sessions WHERE deleted = 0")?,
        machines: count("SELECT count(*) FROM machines")?,
        oldest: conn.query_row(
            "SELECT min(created_at) FROM observations WHERE deleted = 0",
            [],
            |r| r.get(0),
        )?,
        newest: conn.query_row(
            "SELECT max(created_at) FROM observations WHERE deleted = 0",
            [],
            |r| r.get(0),
        )?,
        by_kind,
        pending_push,
    })
}

/// The most recent live summaries of a project, newest first; a session in
/// which nothing was captured has nothing to say and is left out.
pub fn recent_summaries(
    conn: &Connection,
    project_key: &str,
    limit: usize,
) -> Result<Vec<Summary>, StoreError> {
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM summaries
         WHERE project_key = ?1 AND deleted = 0 AND observation_count > 0
         ORDER BY created_at DESC LIMIT ?2"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![project_key, limit as i64], summary_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The most recent live observations of a project, newest first, skipping the
/// sessions listed in `exclude_sessions` (already represented by their summary).
pub fn recent_observations(
    conn: &Connection,
    project_key: &str,
    limit: usize,
) -> Result<Vec<Observation>, StoreError> {
    let sql = format!(
        "SELECT {OBSERVATION_COLUMNS} FROM observations
         WHERE project_key = ?1 AND deleted = 0 ORDER BY created_at DESC LIMIT ?2"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![project_key, limit as i64], observation_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Unacknowledged sync conflicts.
pub fn open_conflicts(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "SELECT count(*) FROM conflicts WHERE acknowledged_at IS NULL",
        [],
        |r| r.get(0),
    )?)
}

/// When each agent last captured something on this machine (`machine`): its
/// newest session start or observation, per agent name, in name order.
pub fn last_capture_by_agent(
    conn: &Connection,
    machine: solaria_shared::MachineId,
) -> Result<Vec<(String, solaria_shared::UnixMillis)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT agent, MAX(t) FROM (
             SELECT agent, started_at AS t FROM sessions
              WHERE deleted = 0 AND machine_id = ?1
             UNION ALL
             SELECT s.agent, o.created_at FROM observations o
               JOIN sessions s ON s.id = o.session_id
              WHERE o.deleted = 0 AND o.machine_id = ?1
         ) GROUP BY agent ORDER BY agent",
    )?;
    let rows = stmt.query_map(params![machine.to_string()], |r| {
        Ok((
            r.get::<_, String>(0)?,
            solaria_shared::UnixMillis(r.get(1)?),
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
