//! What a project's context is read from besides its knowledge (`knowledge.rs`):
//! its recent sessions with something in them and the heads of its recent events,
//! as the edge reads them from SQLite (`store/src/views.rs`), for the shared
//! renderer's `ContextParts`; and the log of each context served.
//!
//! Every read names its account and its projects and is bounded: sessions walk the
//! project's newest first (`memory_sessions_project`) until `limit` have an event,
//! events are the project's newest `limit` (`memory_observations_project`), and
//! each session's summary, first prompt and count are read by its own index
//! (`memory_summaries_session`, `memory_observations_session`).
//!
//! A session line shows only what it is the line of: each of its parts is read
//! from the session's own project, under the visibility rule, and from what the
//! session's own person wrote ([`of_the_session`]). A session that went on in a
//! personal project keeps that part out of a teammate's context, and a record that
//! names someone else's session is never read as theirs.

use super::base::{AccountId, StorageError, Viewer};
use super::sql;
use super::visibility::{same_person_sql, visible_sql};
use super::{Storage, key_condition};
use solaria_shared::{MachineId, ObservationId, SessionId, UnixMillis};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A recent session of a project with at least one live event.
#[derive(Debug, Clone)]
pub struct ContextSession {
    pub id: SessionId,
    pub machine_id: MachineId,
    pub started_at: UnixMillis,
    /// The agent it was captured from (`claude-code`, `codex`, …).
    pub agent: String,
    /// Its newest live summary's text.
    pub summary: Option<String>,
    /// Its first live prompt's title.
    pub first_prompt: Option<String>,
    /// Its live events.
    pub events: i64,
}

/// What a context reads of a recent event: no input, response or files, which can
/// be large and which a context never shows.
#[derive(Debug, Clone)]
pub struct RecentEvent {
    pub id: ObservationId,
    pub machine_id: MachineId,
    pub session_id: SessionId,
    pub tool_name: Option<String>,
    pub title: String,
    pub created_at: UnixMillis,
    /// The capture marked it failed (`metadata.error` is JSON `true`).
    pub error: bool,
}

/// SQL: the row `{q}` (a summary or an observation) is a live part of the session
/// `s` as its line shows it: named by it, in its project, visible to the viewer
/// (`$1` the account, `$4` the person), written by the session's own person.
fn of_the_session(q: &str) -> String {
    format!(
        "{q}account_id = s.account_id AND {q}session_id = s.id AND NOT {q}deleted \
         AND {q}project_key = s.project_key AND {} AND {}",
        visible_sql(q, "$1", "$4"),
        same_person_sql(q, "s.machine_id")
    )
}

impl Storage {
    /// The newest live sessions of the projects `keys` in which a live event was
    /// captured, newest first, at most `limit` (empty sessions are never listed).
    pub async fn context_sessions(
        &self,
        viewer: Viewer,
        keys: &[String],
        limit: usize,
    ) -> Result<Vec<ContextSession>, StorageError> {
        let (m, o) = (of_the_session("m."), of_the_session("o."));
        let sql = format!(
            "SELECT s.id, s.machine_id, s.started_at, s.agent,
                 (SELECT m.summary FROM memory_summaries_remote m WHERE {m}
                   ORDER BY m.created_at DESC, m.id DESC LIMIT 1) AS summary,
                 (SELECT o.title FROM memory_observations_remote o WHERE {o} AND o.kind = 'prompt'
                   ORDER BY o.created_at, o.id LIMIT 1) AS first_prompt,
                 (SELECT count(*) FROM memory_observations_remote o WHERE {o}) AS events
             FROM memory_sessions s
             WHERE s.account_id = $1 AND NOT s.deleted{}
               AND EXISTS (SELECT 1 FROM memory_observations_remote o WHERE {o})
               AND {}
             ORDER BY s.started_at DESC, s.id DESC LIMIT $3",
            key_condition("s.project_key", "$2", keys),
            visible_sql("s.", "$1", "$4")
        );
        let rows = sql::query(AssertSqlSafe(sql))
            .bind(viewer.account.0)
            .bind(keys)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .bind(viewer.person.0)
            .fetch_all(&mut *self.lagging_session().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(ContextSession {
                    id: SessionId::from_uuid(r.try_get("id")?),
                    machine_id: MachineId::from_uuid(r.try_get("machine_id")?),
                    started_at: UnixMillis(r.try_get("started_at")?),
                    agent: r.try_get("agent")?,
                    summary: r.try_get("summary")?,
                    first_prompt: r.try_get("first_prompt")?,
                    events: r.try_get("events")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }

    /// The heads of the newest live events of the projects `keys`, newest first, at
    /// most `limit`.
    pub async fn recent_event_heads(
        &self,
        viewer: Viewer,
        keys: &[String],
        limit: usize,
    ) -> Result<Vec<RecentEvent>, StorageError> {
        let sql = format!(
            "SELECT id, machine_id, session_id, tool_name, title, created_at,
                    coalesce(metadata->'error' = 'true'::jsonb, false) AS error
             FROM memory_observations_remote
             WHERE account_id = $1 AND NOT deleted{} AND {}
             ORDER BY created_at DESC, id DESC LIMIT $3",
            key_condition("project_key", "$2", keys),
            visible_sql("", "$1", "$4")
        );
        let rows = sql::query(AssertSqlSafe(sql))
            .bind(viewer.account.0)
            .bind(keys)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .bind(viewer.person.0)
            .fetch_all(&mut *self.lagging_session().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(RecentEvent {
                    id: ObservationId::from_uuid(r.try_get("id")?),
                    machine_id: MachineId::from_uuid(r.try_get("machine_id")?),
                    session_id: SessionId::from_uuid(r.try_get("session_id")?),
                    tool_name: r.try_get("tool_name")?,
                    title: r.try_get("title")?,
                    created_at: UnixMillis(r.try_get("created_at")?),
                    error: r.try_get("error")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }

    /// Records that a context was served to `machine` (`memory_context_injections`)
    /// with the sessions and observations it cited.
    pub async fn log_context_injection(
        &self,
        account: AccountId,
        machine: MachineId,
        target_session: Option<&str>,
        sessions: &[Uuid],
        observations: &[Uuid],
    ) -> Result<(), StorageError> {
        let mut session = self.session().await?;
        sql::query(
            "INSERT INTO memory_context_injections
                 (account_id, machine_id, target_session_id, source_sessions, source_observations)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(account.0)
        .bind(machine.as_uuid())
        .bind(target_session)
        .bind(sessions)
        .bind(observations)
        .execute(&mut *session)
        .await?;
        session.finish().await?;
        Ok(())
    }
}
