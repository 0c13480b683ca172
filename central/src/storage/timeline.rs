//! Reading records back whole: a session's timeline (one snapshot), records by id,
//! and restore pages (the account's live records in feed order).
//!
//! A session's timeline, summary and knowledge hold only what its own person
//! wrote (`visibility::same_person_sql`, the session rule), under the visibility
//! rule: a record that names someone else's session is never shown as part of it.

use super::base::{
    KNOWLEDGE_TABLE, OBSERVATIONS_TABLE, SESSIONS_TABLE, SUMMARIES_TABLE, StorageError, Viewer,
};
use super::feed::{FeedTypes, changes};
use super::rows::{
    KNOWLEDGE_COLS, Mapper, OBSERVATION_COLS, SESSION_COLS, SUMMARY_COLS, knowledge_row,
    observation_row, session_row, summary_row,
};
use super::sql;
use super::visibility::{same_person_sql, visible_sql};
use super::{Storage, read_snapshot};
use solaria_shared::wire::{MachineName, RestorePage, WireRecord};
use solaria_shared::{Knowledge, Observation, Session, Summary};
use sqlx::AssertSqlSafe;
use uuid::Uuid;

/// A session with its records, oldest first.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub session: Session,
    pub observations: Vec<Observation>,
    pub summary: Option<Summary>,
    /// The knowledge recorded in the session (`Storage::knowledge_of_session`).
    pub knowledge: Vec<Knowledge>,
    pub machines: Vec<MachineName>,
}

impl Storage {
    /// The live session `id` of the account — or the session of the live observation,
    /// summary or knowledge record `id` — with its live records, from one snapshot,
    /// and the knowledge recorded in it. `None` when the account holds no such live
    /// record (another account's ids read as unknown).
    pub async fn timeline(
        &self,
        viewer: Viewer,
        id: Uuid,
    ) -> Result<Option<Timeline>, StorageError> {
        let mut tx = read_snapshot(self).await?;
        let session_sql = format!(
            "SELECT {SESSION_COLS} FROM memory_sessions
             WHERE account_id = $1 AND id = $2 AND NOT deleted AND {visible}",
            visible = visible_sql("", "$1", "$3")
        );
        let mut row = sql::query(AssertSqlSafe(session_sql.clone()))
            .bind(viewer.account.0)
            .bind(id)
            .bind(viewer.person.0)
            .fetch_optional(&mut *tx)
            .await?;
        if row.is_none() {
            let visible = visible_sql("", "$1", "$3");
            let owner: Option<Uuid> = sql::query_scalar(AssertSqlSafe(format!(
                "SELECT session_id FROM memory_observations_remote
                 WHERE account_id = $1 AND id = $2 AND NOT deleted AND {visible}
                 UNION ALL
                 SELECT session_id FROM memory_summaries_remote
                 WHERE account_id = $1 AND id = $2 AND NOT deleted AND {visible}
                 UNION ALL
                 SELECT session_id FROM memory_knowledge
                 WHERE account_id = $1 AND id = $2 AND NOT deleted AND session_id IS NOT NULL
                   AND {visible}
                 LIMIT 1"
            )))
            .bind(viewer.account.0)
            .bind(id)
            .bind(viewer.person.0)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(session) = owner {
                row = sql::query(AssertSqlSafe(session_sql))
                    .bind(viewer.account.0)
                    .bind(session)
                    .bind(viewer.person.0)
                    .fetch_optional(&mut *tx)
                    .await?;
            }
        }
        let Some(row) = row else {
            return Ok(None);
        };
        let WireRecord::Session(session) = session_row(&row)? else {
            return Err(StorageError::NotFound("session".into()));
        };
        let sid = *session.id.as_uuid();
        let owner = *session.meta.machine_id.as_uuid();
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {OBSERVATION_COLS} FROM memory_observations_remote
             WHERE account_id = $1 AND session_id = $2 AND NOT deleted AND {visible} AND {same}
             ORDER BY created_at, id",
            visible = visible_sql("", "$1", "$3"),
            same = same_person_sql("", "$4")
        )))
        .bind(viewer.account.0)
        .bind(sid)
        .bind(viewer.person.0)
        .bind(owner)
        .fetch_all(&mut *tx)
        .await?;
        let mut observations = Vec::with_capacity(rows.len());
        for r in &rows {
            if let WireRecord::Observation(o) = observation_row(r)? {
                observations.push(o);
            }
        }
        let summary = sql::query(AssertSqlSafe(format!(
            "SELECT {SUMMARY_COLS} FROM memory_summaries_remote
             WHERE account_id = $1 AND session_id = $2 AND NOT deleted AND {visible} AND {same}
             ORDER BY created_at DESC, id DESC LIMIT 1",
            visible = visible_sql("", "$1", "$3"),
            same = same_person_sql("", "$4")
        )))
        .bind(viewer.account.0)
        .bind(sid)
        .bind(viewer.person.0)
        .bind(owner)
        .fetch_optional(&mut *tx)
        .await?;
        let summary = match summary.as_ref().map(summary_row).transpose()? {
            Some(WireRecord::Summary(s)) => Some(s),
            _ => None,
        };
        tx.commit().await?;
        let knowledge = self.knowledge_of_session(viewer, &session).await?;
        let mut ids = vec![session.meta.machine_id];
        ids.extend(observations.iter().map(|o| o.meta.machine_id));
        ids.extend(summary.iter().map(|s| s.meta.machine_id));
        ids.extend(knowledge.iter().map(|k| k.meta.machine_id));
        let machines = self.machine_names(viewer, &ids).await?;
        Ok(Some(Timeline {
            session,
            observations,
            summary,
            knowledge,
            machines,
        }))
    }

    /// The live records of the account among `ids` (at most a page of them), of
    /// every kind: observations, sessions, summaries, knowledge, in no set order.
    pub async fn records_by_ids(
        &self,
        viewer: Viewer,
        ids: &[Uuid],
    ) -> Result<Vec<WireRecord>, StorageError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let tables: [(&str, &str, Mapper); 4] = [
            (OBSERVATIONS_TABLE, OBSERVATION_COLS, observation_row),
            (SESSIONS_TABLE, SESSION_COLS, session_row),
            (SUMMARIES_TABLE, SUMMARY_COLS, summary_row),
            (KNOWLEDGE_TABLE, KNOWLEDGE_COLS, knowledge_row),
        ];
        let mut tx = read_snapshot(self).await?;
        let mut out = Vec::new();
        for (table, cols, mapper) in tables {
            let rows = sql::query(AssertSqlSafe(format!(
                "SELECT {cols} FROM {table}
                 WHERE account_id = $1 AND id = ANY($2) AND NOT deleted AND {visible}",
                visible = visible_sql("", "$1", "$3")
            )))
            .bind(viewer.account.0)
            .bind(ids)
            .bind(viewer.person.0)
            .fetch_all(&mut *tx)
            .await?;
            for r in &rows {
                out.push(mapper(r)?);
            }
        }
        tx.commit().await?;
        Ok(out)
    }

    /// The newest live summary of each of `sessions` (whose key points a session
    /// read in full shows).
    pub async fn summaries_of_sessions(
        &self,
        viewer: Viewer,
        sessions: &[Uuid],
    ) -> Result<Vec<Summary>, StorageError> {
        if sessions.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT DISTINCT ON (m.session_id) {cols} FROM memory_summaries_remote m
             JOIN memory_sessions s ON s.account_id = m.account_id AND s.id = m.session_id
             WHERE m.account_id = $1 AND m.session_id = ANY($2) AND NOT m.deleted AND {visible}
               AND {same}
             ORDER BY m.session_id, m.created_at DESC, m.id DESC",
            cols = qualified("m.", SUMMARY_COLS),
            visible = visible_sql("m.", "$1", "$3"),
            same = same_person_sql("m.", "s.machine_id")
        )))
        .bind(viewer.account.0)
        .bind(sessions)
        .bind(viewer.person.0)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        let mut out = Vec::new();
        for r in &rows {
            if let WireRecord::Summary(s) = summary_row(r)? {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// One page of the account's live records after feed position `since`, in feed
    /// order, of the first release's types and of the newer ones in `types`. A page reads at most `limit` rows; tombstones among them are left out
    /// but move the cursor, so `next` is a change-feed position like any other.
    pub async fn restore(
        &self,
        viewer: Viewer,
        since: i64,
        limit: usize,
        types: FeedTypes,
    ) -> Result<RestorePage, StorageError> {
        // The change feed's page, less its tombstones: one reader of the feed.
        let page = changes(self, viewer, since, limit, types).await?;
        Ok(RestorePage {
            records: page
                .changes
                .into_iter()
                .map(|c| c.record)
                .filter(|r| !r.meta().deleted)
                .collect(),
            next: page.next,
            more: page.more,
        })
    }
}

/// `cols` (a comma-separated list) each qualified by `q` (`"m."`).
fn qualified(q: &str, cols: &str) -> String {
    cols.split(',')
        .map(|c| format!("{q}{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}
