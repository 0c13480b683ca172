//! Reading and writing the three record kinds, and mapping rows to the shared types.

use super::{StoreError, Writer, scope};
use rusqlite::{Connection, OptionalExtension, Row, params};
use solaria_shared::wire::MachineName;
use solaria_shared::{
    Hlc, MachineId, Observation, ObservationId, Project, RecordMeta, Session, SessionId, Summary,
    SummaryId, UnixMillis,
};

pub(crate) const SESSION_COLUMNS: &str = "id, machine_id, updated, deleted, project_key, \
    project_name, agent, agent_session_id, cwd, source, started_at, ended_at";

pub(crate) const OBSERVATION_COLUMNS: &str = "id, machine_id, updated, deleted, session_id, \
    project_key, project_name, kind, tool_name, title, input, response, files, metadata, tags, \
    created_at";

pub(crate) const SUMMARY_COLUMNS: &str = "id, machine_id, updated, deleted, session_id, \
    project_key, project_name, text, key_points, tags, observation_count, created_at";

/// Reads a UUID-typed column, failing the row (not panicking) on damage.
pub(crate) fn id_col<T: std::str::FromStr>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    text.parse().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Text,
            format!("bad id {text:?}").into(),
        )
    })
}

fn json_col<T: serde::de::DeserializeOwned + Default>(
    row: &Row<'_>,
    idx: usize,
) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    Ok(serde_json::from_str(&text).unwrap_or_default())
}

pub(crate) fn meta(row: &Row<'_>) -> rusqlite::Result<RecordMeta> {
    Ok(RecordMeta {
        machine_id: id_col::<MachineId>(row, 1)?,
        updated: Hlc::from_i64(row.get(2)?),
        deleted: row.get::<_, i64>(3)? != 0,
    })
}

/// Maps a row selected with [`SESSION_COLUMNS`].
pub(crate) fn session_from_row(row: &Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: id_col(row, 0)?,
        meta: meta(row)?,
        project: Project {
            key: row.get(4)?,
            name: row.get(5)?,
        },
        agent: row.get(6)?,
        agent_session_id: row.get(7)?,
        cwd: row.get(8)?,
        source: row.get(9)?,
        started_at: UnixMillis(row.get(10)?),
        ended_at: row.get::<_, Option<i64>>(11)?.map(UnixMillis),
    })
}

/// Maps a row selected with [`OBSERVATION_COLUMNS`].
pub(crate) fn observation_from_row(row: &Row<'_>) -> rusqlite::Result<Observation> {
    let kind: String = row.get(7)?;
    Ok(Observation {
        id: id_col(row, 0)?,
        meta: meta(row)?,
        session_id: id_col(row, 4)?,
        project: Project {
            key: row.get(5)?,
            name: row.get(6)?,
        },
        kind: kind
            .parse()
            .map_err(|e: solaria_shared::record::ParseKindError| {
                rusqlite::Error::FromSqlConversionFailure(
                    7,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })?,
        tool_name: row.get(8)?,
        title: row.get(9)?,
        input: row.get(10)?,
        response: row.get(11)?,
        files: json_col(row, 12)?,
        metadata: {
            let text: String = row.get(13)?;
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
        },
        tags: json_col(row, 14)?,
        created_at: UnixMillis(row.get(15)?),
    })
}

/// Maps a row selected with [`SUMMARY_COLUMNS`].
pub(crate) fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<Summary> {
    Ok(Summary {
        id: id_col(row, 0)?,
        meta: meta(row)?,
        session_id: id_col(row, 4)?,
        project: Project {
            key: row.get(5)?,
            name: row.get(6)?,
        },
        text: row.get(7)?,
        key_points: json_col(row, 8)?,
        tags: json_col(row, 9)?,
        observation_count: row.get(10)?,
        created_at: UnixMillis(row.get(11)?),
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// The live session an agent knows by `agent_session_id`, if any.
pub fn find_session_by_agent(
    conn: &Connection,
    agent: &str,
    agent_session_id: &str,
) -> Result<Option<Session>, StoreError> {
    let sql = format!(
        "SELECT {SESSION_COLUMNS} FROM sessions
         WHERE agent = ?1 AND agent_session_id = ?2 AND deleted = 0
         ORDER BY started_at DESC LIMIT 1"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![agent, agent_session_id], session_from_row)
        .optional()?)
}

/// One session by id (tombstones included).
pub fn get_session(conn: &Connection, id: SessionId) -> Result<Option<Session>, StoreError> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id.to_string()], session_from_row)
        .optional()?)
}

/// One observation by id (tombstones included).
pub fn get_observation(
    conn: &Connection,
    id: ObservationId,
) -> Result<Option<Observation>, StoreError> {
    let sql = format!("SELECT {OBSERVATION_COLUMNS} FROM observations WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id.to_string()], observation_from_row)
        .optional()?)
}

/// One summary by id (tombstones included).
pub fn get_summary(conn: &Connection, id: SummaryId) -> Result<Option<Summary>, StoreError> {
    let sql = format!("SELECT {SUMMARY_COLUMNS} FROM summaries WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id.to_string()], summary_from_row)
        .optional()?)
}

/// The summary of a session, if written: the newest its own person wrote (the
/// session rule, `solaria_shared::sharing::may_name_session`), a tombstone
/// included (an erased summary stays erased). A summary someone else's machine
/// wrote naming the session is never read as the session's.
pub fn summary_of_session(
    conn: &Connection,
    session: SessionId,
) -> Result<Option<Summary>, StoreError> {
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM summaries
         WHERE session_id = ?1 AND {}
         ORDER BY created_at DESC, rowid DESC LIMIT 1",
        by_the_sessions_person("summaries")
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([session.to_string()], summary_from_row)
        .optional()?)
}

/// SQL: the machines `a` and `b` (columns or expressions) are one person's: the
/// same teammate's (`machines.person`), or both this machine's person's (no
/// teammate named, as for a machine of ours or one not known). How the edge
/// applies the session rule.
pub(crate) fn same_person_sql(a: &str, b: &str) -> String {
    format!(
        "coalesce((SELECT person FROM machines WHERE id = {a}), '') \
         = coalesce((SELECT person FROM machines WHERE id = {b}), '')"
    )
}

/// SQL: the row of `table` was written by the person of the session `?1` (the
/// session rule): what a session shows of the records that name it.
pub(crate) fn by_the_sessions_person(table: &str) -> String {
    same_person_sql(
        &format!("{table}.machine_id"),
        "(SELECT machine_id FROM sessions WHERE id = ?1)",
    )
}

/// Every live observation of a session its own person wrote, oldest first.
pub fn observations_of_session(
    conn: &Connection,
    session: SessionId,
) -> Result<Vec<Observation>, StoreError> {
    let sql = format!(
        "SELECT {OBSERVATION_COLUMNS} FROM observations
         WHERE session_id = ?1 AND deleted = 0 AND {}
         ORDER BY created_at, rowid",
        by_the_sessions_person("observations")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([session.to_string()], observation_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// What a session's summary is made from: its live observations in the session's
/// own project, oldest first. The summary is a record of that project (it syncs,
/// is shown in its context and may be sent to the summarizer with it); what the
/// session did in another project is stored under that project, and stays out of
/// the summary, so a local-only project's text never leaves in one.
pub fn observations_summarized(
    conn: &Connection,
    session: SessionId,
) -> Result<Vec<Observation>, StoreError> {
    let sql = format!(
        "SELECT {OBSERVATION_COLUMNS} FROM observations
         WHERE session_id = ?1 AND deleted = 0
           AND project_key = (SELECT project_key FROM sessions WHERE id = ?1) AND {}
         ORDER BY created_at, rowid",
        by_the_sessions_person("observations")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([session.to_string()], observation_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The project a user names (see [`matching_projects`]): the most recent one
/// when several share a name, if the memory holds it.
pub fn resolve_project(conn: &Connection, text: &str) -> Result<Option<Project>, StoreError> {
    Ok(matching_projects(conn, text)?.into_iter().next())
}

/// The projects a `--project` value names, by the one rule every surface uses:
/// the project's key (`github.com/acme/billing-api`); else its name
/// (`billing-api`; several projects may share one, most recent first); else the
/// end of its key after a `/` (`acme/billing-api`, the owner/repo slug). Empty
/// when the value names no project of the memory. Paths are the operations'
/// business (`ops::project`), which turn them into a key first.
pub fn matching_projects(conn: &Connection, text: &str) -> Result<Vec<Project>, StoreError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(p) = project_by_key(conn, text)? {
        return Ok(vec![p]);
    }
    // Indexed (sessions_project_name); the name of each key's latest session.
    let by_name: Vec<Project> = conn
        .prepare_cached(
            "SELECT project_key, project_name, max(started_at) FROM sessions
             WHERE project_name = ?1 GROUP BY project_key ORDER BY 3 DESC",
        )?
        .query_map([text], project_row)?
        .collect::<Result<_, _>>()?;
    // A project known only by its knowledge (decisions and memories written
    // outside any captured session) is named all the same.
    let by_name = if by_name.is_empty() {
        conn.prepare_cached(
            "SELECT project_key, project_name, max(created_at) FROM knowledge
             WHERE project_name = ?1 AND deleted = 0 GROUP BY project_key ORDER BY 3 DESC",
        )?
        .query_map([text], project_row)?
        .collect::<Result<_, _>>()?
    } else {
        by_name
    };
    if !by_name.is_empty() || !text.contains('/') {
        return Ok(by_name);
    }
    let suffix = format!("/{}", text.trim_matches('/').to_lowercase());
    Ok(known_projects(conn)?
        .into_iter()
        .filter(|p| p.key.to_lowercase().ends_with(&suffix))
        .collect())
}

/// The project whose key is `key`: from its latest session, else from a record
/// (a project known only through pulled records, or only by its knowledge, has
/// no local session row).
fn project_by_key(conn: &Connection, key: &str) -> Result<Option<Project>, StoreError> {
    for sql in [
        "SELECT project_key, project_name FROM sessions WHERE project_key = ?1
         ORDER BY started_at DESC LIMIT 1",
        "SELECT project_key, project_name FROM summaries WHERE project_key = ?1 LIMIT 1",
        "SELECT project_key, project_name FROM observations WHERE project_key = ?1 LIMIT 1",
        "SELECT project_key, project_name FROM knowledge WHERE project_key = ?1 LIMIT 1",
    ] {
        let found = conn
            .prepare_cached(sql)?
            .query_row([key], project_row)
            .optional()?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// Every project with a live session, most recently worked on first (each with
/// the name of its latest session).
pub fn known_projects(conn: &Connection) -> Result<Vec<Project>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT project_key, project_name, max(started_at) FROM sessions
             WHERE deleted = 0 GROUP BY project_key ORDER BY 3 DESC",
        )?
        .query_map([], project_row)?
        .collect::<Result<_, _>>()?)
}

fn project_row(r: &Row<'_>) -> rusqlite::Result<Project> {
    Ok(Project {
        key: r.get(0)?,
        name: r.get(1)?,
    })
}

/// The teammate whose machine `machine` is (their handle), when it is another
/// person's of the account: their records here were pulled from shared projects,
/// and only they change them.
pub fn teammate(conn: &Connection, machine: MachineId) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT person FROM machines WHERE id = ?1")?
        .query_row([machine.to_string()], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
}

/// SQL: a row whose `machine_id` is this person's (a machine of this machine's
/// own person, or one not known as a teammate's): what a forget may erase.
pub const OWN_ROW: &str = "machine_id NOT IN (SELECT id FROM machines WHERE person IS NOT NULL)";

/// How a machine is named after `@` (its id when unknown): its name, with its
/// person's for a teammate's (`ana on laptop`, `render::author_label`).
pub fn machine_name(conn: &Connection, machine: MachineId) -> String {
    machine_writer(conn, machine).label()
}

/// A machine's name and, for a teammate's, its person's handle; its id for a name
/// when this store does not know it.
pub fn machine_writer(conn: &Connection, machine: MachineId) -> MachineName {
    conn.prepare_cached("SELECT name, person FROM machines WHERE id = ?1")
        .and_then(|mut stmt| {
            stmt.query_row([machine.to_string()], |r| {
                Ok(MachineName {
                    id: machine,
                    name: r.get(0)?,
                    person: r.get(1)?,
                })
            })
        })
        .unwrap_or_else(|_| MachineName {
            id: machine,
            name: machine.to_string(),
            person: None,
        })
}

impl Writer<'_> {
    /// Stores a version received from elsewhere (same upsert as a local write).
    pub(crate) fn put_summary(&mut self, s: &Summary) -> Result<(), StoreError> {
        self.upsert_summary(s)
    }

    /// Inserts a new session.
    pub fn insert_session(&mut self, s: &Session) -> Result<(), StoreError> {
        self.write_session(s, "")
    }

    /// Stores a version received from elsewhere, replacing the row if it exists.
    pub(crate) fn put_session(&mut self, s: &Session) -> Result<(), StoreError> {
        self.write_session(
            s,
            "ON CONFLICT (id) DO UPDATE SET machine_id = excluded.machine_id,
                updated = excluded.updated, deleted = excluded.deleted,
                project_key = excluded.project_key, project_name = excluded.project_name,
                agent = excluded.agent, agent_session_id = excluded.agent_session_id,
                cwd = excluded.cwd, source = excluded.source,
                started_at = excluded.started_at, ended_at = excluded.ended_at",
        )
    }

    fn write_session(&mut self, s: &Session, on_conflict: &str) -> Result<(), StoreError> {
        self.tx()
            .prepare_cached(&format!(
                "INSERT INTO sessions ({SESSION_COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) {on_conflict}"
            ))?
            .execute(params![
                s.id.to_string(),
                s.meta.machine_id.to_string(),
                s.meta.updated.as_i64(),
                s.meta.deleted as i64,
                s.project.key,
                s.project.name,
                s.agent,
                s.agent_session_id,
                s.cwd,
                s.source,
                s.started_at.0,
                s.ended_at.map(|t| t.0),
            ])?;
        Ok(())
    }

    /// Marks a session ended (or re-opened with `None`), as a new local version.
    pub fn set_session_ended(
        &mut self,
        id: SessionId,
        ended_at: Option<UnixMillis>,
    ) -> Result<(), StoreError> {
        let stamp = self.tick();
        let machine = self.machine_id();
        self.tx()
            .prepare_cached(
                // An erased session stays erased (docs/DESIGN.md, Erasure).
                "UPDATE sessions SET ended_at = ?2, updated = ?3, machine_id = ?4
                 WHERE id = ?1 AND deleted = 0",
            )?
            .execute(params![
                id.to_string(),
                ended_at.map(|t| t.0),
                stamp.as_i64(),
                machine.to_string()
            ])?;
        Ok(())
    }

    /// Inserts a new observation.
    pub fn insert_observation(&mut self, o: &Observation) -> Result<(), StoreError> {
        self.write_observation(o, "")
    }

    /// Stores a version received from elsewhere, replacing the row if it exists (the
    /// FTS index follows through the update trigger; `scope` is recomputed).
    pub(crate) fn put_observation(&mut self, o: &Observation) -> Result<(), StoreError> {
        self.write_observation(
            o,
            "ON CONFLICT (id) DO UPDATE SET machine_id = excluded.machine_id,
                updated = excluded.updated, deleted = excluded.deleted,
                session_id = excluded.session_id, project_key = excluded.project_key,
                project_name = excluded.project_name, kind = excluded.kind,
                tool_name = excluded.tool_name, title = excluded.title, input = excluded.input,
                response = excluded.response, files = excluded.files,
                metadata = excluded.metadata, tags = excluded.tags,
                created_at = excluded.created_at, scope = excluded.scope,
                pairs = excluded.pairs",
        )
    }

    fn write_observation(&mut self, o: &Observation, on_conflict: &str) -> Result<(), StoreError> {
        let files = to_json(&o.files);
        self.tx()
            .prepare_cached(&format!(
                "INSERT INTO observations ({OBSERVATION_COLUMNS}, scope, pairs)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
                 {on_conflict}"
            ))?
            .execute(params![
                o.id.to_string(),
                o.meta.machine_id.to_string(),
                o.meta.updated.as_i64(),
                o.meta.deleted as i64,
                o.session_id.to_string(),
                o.project.key,
                o.project.name,
                o.kind.as_str(),
                o.tool_name,
                o.title,
                o.input,
                o.response,
                files,
                to_json(&o.metadata),
                to_json(&o.tags),
                o.created_at.0,
                scope::observation(&o.project.key, o.kind, o.meta.machine_id),
                super::pairs::of(&[&o.title, &o.input, &o.response, &files]),
            ])?;
        Ok(())
    }

    /// Writes a summary by its id, replacing the previous version of the same id,
    /// unless that one was erased: an erased summary stays erased. A summary with
    /// another id is another record, whatever session it names.
    pub fn upsert_summary(&mut self, s: &Summary) -> Result<(), StoreError> {
        self.tx().execute(
            &format!(
                "INSERT INTO summaries ({SUMMARY_COLUMNS}, scope)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                 ON CONFLICT (id) DO UPDATE SET
                    machine_id = excluded.machine_id, updated = excluded.updated,
                    deleted = excluded.deleted, session_id = excluded.session_id,
                    project_key = excluded.project_key, project_name = excluded.project_name,
                    text = excluded.text, key_points = excluded.key_points, tags = excluded.tags,
                    observation_count = excluded.observation_count,
                    created_at = excluded.created_at, scope = excluded.scope
                 WHERE summaries.deleted = 0"
            ),
            params![
                s.id.to_string(),
                s.meta.machine_id.to_string(),
                s.meta.updated.as_i64(),
                s.meta.deleted as i64,
                s.session_id.to_string(),
                s.project.key,
                s.project.name,
                s.text,
                to_json(&s.key_points),
                to_json(&s.tags),
                s.observation_count,
                s.created_at.0,
                scope::summary(&s.project.key, s.meta.machine_id),
            ],
        )?;
        Ok(())
    }
}

/// The files `session`'s tool calls edited or wrote since `since` (the capture's
/// `file_action`), newest first, each once, at most `limit`: as the agent named
/// them (absolute, or from its directory).
pub fn files_edited(
    conn: &Connection,
    session: SessionId,
    since: UnixMillis,
    limit: usize,
) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.value FROM observations o, json_each(o.files) f
         WHERE o.session_id = ?1 AND o.deleted = 0 AND o.created_at >= ?2
           AND json_extract(o.metadata, '$.file_action') IN ('edit', 'write')
         ORDER BY o.created_at DESC, o.rowid DESC",
    )?;
    let rows = stmt.query_map(params![session.to_string(), since.0], |r| {
        r.get::<_, String>(0)
    })?;
    let mut out: Vec<String> = Vec::new();
    for path in rows {
        let path = path?;
        if !out.contains(&path) {
            out.push(path);
            if out.len() >= limit {
                break;
            }
        }
    }
    Ok(out)
}
