//! The record tables row by row: the columns a read selects and the mapper from a
//! row back to its record, one per kind ([`RECORD_TABLES`] lists them), and the
//! condition every upsert writes under ([`replaces_where!`]). Reads and writes of
//! every kind share them, so no kind's file needs another's.

use super::base::{KNOWLEDGE_TABLE, OBSERVATIONS_TABLE, SESSIONS_TABLE, SUMMARIES_TABLE};
use solaria_shared::hlc::Hlc;
use solaria_shared::wire::WireRecord;
use solaria_shared::{
    Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind, MachineId, Observation, ObservationKind,
    Project, RecordMeta, Session, SessionId, Summary, UnixMillis,
};
use sqlx::Row;
use sqlx::postgres::PgRow;
use uuid::Uuid;

/// The keep-or-replace rule (erasure is final, else last write wins: `batch`'s module doc)
/// as the condition of an upsert's `DO UPDATE` (`t`: the stored row, `EXCLUDED`: the
/// version pushed). Every upsert ends with it, so that each kind keeps the version
/// `RecordMeta::replaces` would keep.
macro_rules! replaces_where {
    () => {
        " WHERE (EXCLUDED.deleted AND NOT t.deleted) OR (EXCLUDED.deleted = t.deleted AND (EXCLUDED.updated, EXCLUDED.machine_id) > (t.updated, t.machine_id))"
    };
}
pub(super) use replaces_where;

/// The columns [`session_row`] maps.
pub(super) const SESSION_COLS: &str = "id, machine_id, updated, deleted, seq, project_key, project_name, agent, \
    agent_session_id, cwd, source, started_at, ended_at";
/// The columns [`observation_row`] maps.
pub(super) const OBSERVATION_COLS: &str = "id, session_id, machine_id, updated, deleted, seq, project_key, \
    project_name, kind, tool_name, title, input, response, files, metadata, tags, created_at";
/// The columns [`summary_row`] maps.
pub(super) const SUMMARY_COLS: &str = "id, session_id, machine_id, updated, deleted, seq, project_key, \
    project_name, summary, key_points, tags, observations_count, created_at";

/// The version every record row carries.
pub(super) fn meta(row: &PgRow) -> Result<RecordMeta, sqlx::Error> {
    Ok(RecordMeta {
        machine_id: MachineId::from_uuid(row.try_get("machine_id")?),
        updated: Hlc::from_i64(row.try_get("updated")?),
        deleted: row.try_get("deleted")?,
    })
}

/// The project every record row names.
pub(super) fn project(row: &PgRow) -> Result<Project, sqlx::Error> {
    Ok(Project {
        key: row.try_get("project_key")?,
        name: row.try_get("project_name")?,
    })
}

/// A JSON array of strings column (empty when it holds anything else).
pub(super) fn strings(row: &PgRow, col: &str) -> Result<Vec<String>, sqlx::Error> {
    let v: serde_json::Value = row.try_get(col)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

/// Maps a row selected with [`SESSION_COLS`].
pub(crate) fn session_row(row: &PgRow) -> Result<WireRecord, sqlx::Error> {
    Ok(WireRecord::Session(Session {
        id: solaria_shared::SessionId::from_uuid(row.try_get("id")?),
        meta: meta(row)?,
        project: project(row)?,
        agent_session_id: row.try_get("agent_session_id")?,
        cwd: row.try_get("cwd")?,
        agent: row.try_get("agent")?,
        source: row.try_get("source")?,
        started_at: UnixMillis(row.try_get("started_at")?),
        ended_at: row.try_get::<Option<i64>, _>("ended_at")?.map(UnixMillis),
    }))
}

/// Maps a row selected with [`OBSERVATION_COLS`].
pub(crate) fn observation_row(row: &PgRow) -> Result<WireRecord, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    Ok(WireRecord::Observation(Observation {
        id: solaria_shared::ObservationId::from_uuid(row.try_get("id")?),
        meta: meta(row)?,
        session_id: solaria_shared::SessionId::from_uuid(row.try_get("session_id")?),
        project: project(row)?,
        kind: kind.parse().unwrap_or(ObservationKind::Note),
        tool_name: row.try_get("tool_name")?,
        title: row.try_get("title")?,
        input: row.try_get("input")?,
        response: row.try_get("response")?,
        files: strings(row, "files")?,
        metadata: row.try_get("metadata")?,
        tags: strings(row, "tags")?,
        created_at: UnixMillis(row.try_get("created_at")?),
    }))
}

/// Maps a row selected with [`SUMMARY_COLS`].
pub(crate) fn summary_row(row: &PgRow) -> Result<WireRecord, sqlx::Error> {
    Ok(WireRecord::Summary(Summary {
        id: solaria_shared::SummaryId::from_uuid(row.try_get("id")?),
        meta: meta(row)?,
        session_id: solaria_shared::SessionId::from_uuid(row.try_get("session_id")?),
        project: project(row)?,
        text: row.try_get("summary")?,
        key_points: strings(row, "key_points")?,
        tags: strings(row, "tags")?,
        observation_count: row.try_get::<i32, _>("observations_count")?.max(0) as u32,
        created_at: UnixMillis(row.try_get("created_at")?),
    }))
}

/// The columns [`knowledge_row`] maps.
pub(super) const KNOWLEDGE_COLS: &str = "id, machine_id, updated, deleted, seq, project_key, \
    project_name, session_id, kind, body, created_at, written_by";

/// Maps a row selected with [`KNOWLEDGE_COLS`]. A tombstone's body is `{}`: the
/// kind's erased body.
pub(crate) fn knowledge_row(row: &PgRow) -> Result<WireRecord, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    let kind: KnowledgeKind = kind
        .parse()
        .map_err(|e: solaria_shared::knowledge::ParseNameError| sqlx::Error::Decode(e.into()))?;
    let fields: serde_json::Value = row.try_get("body")?;
    let body =
        KnowledgeBody::from_fields(kind, fields).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(WireRecord::Knowledge(Knowledge {
        id: KnowledgeId::from_uuid(row.try_get("id")?),
        meta: meta(row)?,
        project: project(row)?,
        session_id: row
            .try_get::<Option<Uuid>, _>("session_id")?
            .map(SessionId::from_uuid),
        written_by: row.try_get::<String, _>("written_by")?.parse().map_err(
            |e: solaria_shared::knowledge::ParseNameError| sqlx::Error::Decode(e.into()),
        )?,
        created_at: UnixMillis(row.try_get("created_at")?),
        body,
    }))
}

/// Maps a row of one record table to its record.
pub(super) type Mapper = fn(&PgRow) -> Result<WireRecord, sqlx::Error>;

/// The record tables: name, columns selected, and their mapper. Names and columns
/// are constants, never input. The first three are the first release's types,
/// which every edge parses; the last, knowledge, goes only to a reader that asks
/// for it (`FeedTypes`).
pub(super) const RECORD_TABLES: [(&str, &str, Mapper); 4] = [
    (SESSIONS_TABLE, SESSION_COLS, session_row),
    (OBSERVATIONS_TABLE, OBSERVATION_COLS, observation_row),
    (SUMMARIES_TABLE, SUMMARY_COLS, summary_row),
    (KNOWLEDGE_TABLE, KNOWLEDGE_COLS, knowledge_row),
];
