//! Read-side views: resolving an id, a session's timeline, statistics, and the
//! recent records SessionStart draws its context from.

use super::StoreError;
use super::records;
use rusqlite::{Connection, OptionalExtension, params};
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

impl solaria_shared::wire::Written for AnyRecord {
    fn machine_id(&self) -> solaria_shared::MachineId {
        AnyRecord::machine_id(self)
    }
}

impl AnyRecord {
    /// The machine that last wrote it.
    pub fn machine_id(&self) -> solaria_shared::MachineId {
        match self {
            AnyRecord::Observation(o) => o.meta.machine_id,
            AnyRecord::Session(s) => s.meta.machine_id,
            AnyRecord::Summary(s) => s.meta.machine_id,
            AnyRecord::Knowledge(k) => k.meta.machine_id,
        }
    }

    /// How it is cited (a summary as its session: `[S#…]`).
    pub fn citation(&self) -> solaria_shared::Citation {
        use solaria_shared::Citation;
        match self {
            AnyRecord::Observation(o) => Citation::observation(o.id),
            AnyRecord::Session(s) => Citation::session(s.id),
            AnyRecord::Summary(s) => Citation::session(s.session_id),
            AnyRecord::Knowledge(k) => k.citation(),
        }
    }

    /// The session it belongs to (`None` for knowledge recorded outside any).
    pub fn session_id(&self) -> Option<SessionId> {
        match self {
            AnyRecord::Observation(o) => Some(o.session_id),
            AnyRecord::Session(s) => Some(s.id),
            AnyRecord::Summary(s) => Some(s.session_id),
            AnyRecord::Knowledge(k) => k.session_id,
        }
    }
}

/// The session `id` names: that session, or the one a record of it belongs to.
pub fn session_of(conn: &Connection, id: &str) -> Result<SessionId, StoreError> {
    resolve(conn, id)?
        .session_id()
        .ok_or_else(|| StoreError::NotFound(id.chars().take(80).collect()))
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

/// What happened around a record (the one type both sides answer with).
pub use solaria_shared::render::timeline::Timeline;

/// The timeline around `id` (an observation, a session, a summary, or knowledge
/// recorded in a session), with only records of `kind` when given.
pub fn timeline(
    conn: &Connection,
    id: &str,
    before: usize,
    after: usize,
    kind: Option<solaria_shared::RecordType>,
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
    let mut all = records::observations_of_session(conn, session_id)?;
    all.retain(|o| kind.is_none_or(|k| k.observation_kind() == Some(o.kind)));
    let mut knowledge = super::knowledge::knowledge_of_session(conn, session_id)?;
    knowledge.retain(|k| {
        solaria_shared::RecordType::of_knowledge(k.kind())
            .is_some_and(|t| kind.is_none_or(|want| want == t))
    });
    // The shared window rule (the central service's timeline keeps it too).
    let at = anchor.map(|a| all.iter().position(|o| o.id == a).unwrap_or(0));
    let (start, end) = solaria_shared::render::timeline::window(all.len(), at, before, after);
    let hidden_before = start;
    let hidden_after = all.len() - end;
    Ok(Timeline {
        session,
        summary,
        anchor: anchor.map(|a| a.to_string()),
        entries: all[start..end].to_vec(),
        hidden_before,
        hidden_after,
        knowledge,
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
    let count = |sql: &str| -> Result<i64, StoreError> {
        Ok(conn.prepare_cached(sql)?.query_row([], |r| r.get(0))?)
    };
    let mut by_kind = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
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
        oldest: conn
            .prepare_cached("SELECT min(created_at) FROM observations WHERE deleted = 0")?
            .query_row([], |r| r.get(0))?,
        newest: conn
            .prepare_cached("SELECT max(created_at) FROM observations WHERE deleted = 0")?
            .query_row([], |r| r.get(0))?,
        by_kind,
        pending_push,
    })
}

/// What the context reads of an observation to list it: no input, response or
/// files, which can be large and which a list never shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservationHead {
    pub id: ObservationId,
    pub machine_id: solaria_shared::MachineId,
    pub session_id: SessionId,
    pub tool_name: Option<String>,
    pub title: String,
    pub created_at: solaria_shared::UnixMillis,
    /// The capture marked it failed (`metadata.error`).
    pub error: bool,
}

/// The heads of a project's `limit` most recent live observations, newest first.
pub fn recent_observation_heads(
    conn: &Connection,
    project_key: &str,
    limit: usize,
) -> Result<Vec<ObservationHead>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, machine_id, session_id, tool_name, title, created_at,
                json_valid(metadata) AND coalesce(json_type(metadata, '$.error'), '') = 'true'
         FROM observations
         WHERE project_key = ?1 AND deleted = 0 ORDER BY created_at DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![project_key, limit as i64], |r| {
        Ok(ObservationHead {
            id: records::id_col(r, 0)?,
            machine_id: records::id_col(r, 1)?,
            session_id: records::id_col(r, 2)?,
            tool_name: r.get(3)?,
            title: r.get(4)?,
            created_at: solaria_shared::UnixMillis(r.get(5)?),
            error: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Unacknowledged sync conflicts.
pub fn open_conflicts(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM conflicts WHERE acknowledged_at IS NULL")?
        .query_row([], |r| r.get(0))?)
}

/// One recent session of a project as the context lists it: its summary when it
/// has one, else its first prompt (a session still going, or one whose agent
/// stopped before its summary was written).
#[derive(Debug, Clone)]
pub struct RecentSession {
    pub session: Session,
    pub summary: Option<Summary>,
    pub first_prompt: Option<String>,
    /// Its live observations.
    pub events: i64,
}

impl RecentSession {
    /// What the shared renderer's session line reads of it.
    pub fn line(&self) -> solaria_shared::render::context::SessionLine<'_> {
        solaria_shared::render::context::SessionLine {
            session: self.session.id,
            started_at: self.session.started_at,
            machine: self.session.meta.machine_id,
            agent: &self.session.agent,
            summary: self.summary.as_ref().map(|s| s.text.as_str()),
            first_prompt: self.first_prompt.as_deref(),
            events: u64::try_from(self.events).unwrap_or_default(),
        }
    }
}

/// How many times the sessions wanted are read when a branch is preferred: a
/// session of the branch older than that many is not brought forward.
const BRANCH_LOOKBACK: usize = 4;

/// The most recent sessions of a project in which something was captured in that
/// project, newest first (empty sessions are never listed). Only the project's own
/// events count and are quoted: a session that moved into another project has
/// those events under that project, and they stay out of this one's context. With
/// `branch`, the recent sessions last seen on that branch come first.
pub fn recent_sessions(
    conn: &Connection,
    project_key: &str,
    limit: usize,
    branch: Option<&str>,
) -> Result<Vec<RecentSession>, StoreError> {
    let sql = format!(
        "SELECT {} FROM sessions s
         WHERE s.project_key = ?1 AND s.deleted = 0
           AND EXISTS (SELECT 1 FROM observations o
                       WHERE o.session_id = s.id AND o.project_key = ?1 AND o.deleted = 0
                         AND {})
         ORDER BY s.started_at DESC LIMIT ?2",
        records::SESSION_COLUMNS
            .split(", ")
            .map(|c| format!("s.{c}"))
            .collect::<Vec<_>>()
            .join(", "),
        records::same_person_sql("o.machine_id", "s.machine_id")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    // On a branch, the newest few times as many, those on the branch first.
    let read = if branch.is_some() {
        limit.saturating_mul(BRANCH_LOOKBACK)
    } else {
        limit
    };
    let mut sessions: Vec<Session> = stmt
        .query_map(params![project_key, read as i64], records::session_from_row)?
        .collect::<Result<_, _>>()?;
    if let Some(branch) = branch {
        // The branch a session was last seen on: its newest event's (one row read
        // from the session's index, however long the session).
        let mut last_branch = conn.prepare_cached(
            "SELECT json_extract(metadata, '$.branch') FROM observations
             WHERE session_id = ?1 AND project_key = ?2 AND deleted = 0
             ORDER BY created_at DESC LIMIT 1",
        )?;
        let mut keyed = Vec::with_capacity(sessions.len());
        for s in sessions {
            let seen: Option<String> = last_branch
                .query_row(params![s.id.to_string(), project_key], |r| r.get(0))
                .optional()?
                .flatten();
            keyed.push((seen.as_deref() != Some(branch), s));
        }
        // Stable: each group keeps its newest-first order.
        keyed.sort_by_key(|(elsewhere, _)| *elsewhere);
        sessions = keyed.into_iter().map(|(_, s)| s).take(limit).collect();
    }
    let mut out = Vec::with_capacity(sessions.len());
    for session in sessions {
        let id = session.id.to_string();
        let summary = records::summary_of_session(conn, session.id)?.filter(|s| !s.meta.deleted);
        // The session's line: only what its own person wrote in this project.
        let own = records::by_the_sessions_person("observations");
        let first_prompt: Option<String> = conn
            .prepare_cached(&format!(
                "SELECT title FROM observations WHERE session_id = ?1 AND project_key = ?2
                 AND deleted = 0 AND kind = 'prompt' AND {own} ORDER BY created_at, rowid LIMIT 1"
            ))?
            .query_row([&id, project_key], |r| r.get(0))
            .optional()?;
        let events: i64 = conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM observations WHERE session_id = ?1 AND project_key = ?2
                 AND deleted = 0 AND {own}"
            ))?
            .query_row([&id, project_key], |r| r.get(0))?;
        out.push(RecentSession {
            session,
            summary,
            first_prompt,
            events,
        });
    }
    Ok(out)
}

/// When each agent last captured something on this machine (`machine`): its
/// newest session start or observation, per agent name, in name order.
pub fn last_capture_by_agent(
    conn: &Connection,
    machine: solaria_shared::MachineId,
) -> Result<Vec<(String, solaria_shared::UnixMillis)>, StoreError> {
    let mut stmt = conn.prepare_cached(
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
