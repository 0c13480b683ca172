//! Knowledge records in PostgreSQL (`memory_knowledge`): their upsert (called by
//! `apply_batch`, under the same keep-or-replace rule as every record) and the
//! supersession it settles, and the reads behind the decision list and the
//! iteration view.
//!
//! What search and lists filter on is stored in columns, computed by the shared
//! rules at ingest (`Knowledge::title`, `search_text`, `status`); the kind's own
//! fields are the `body` JSON (`KnowledgeBody::fields`), read back with
//! `KnowledgeBody::from_fields` (`rows::knowledge_row`), so the shape of a body is
//! decided in one place.

use super::base::{AccountId, StorageError, Viewer};
use super::rows::{KNOWLEDGE_COLS, SESSION_COLS, knowledge_row, replaces_where, session_row};
use super::sql;
use super::visibility::{key_shared_sql, own_sql, same_person_sql, visible_sql};
use super::{Storage, key_condition, read_snapshot};
use solaria_shared::wire::WireRecord;
use solaria_shared::{Knowledge, KnowledgeKind, Session, UnixMillis};
use sqlx::postgres::PgRow;
use sqlx::{AssertSqlSafe, Postgres, Transaction};
use uuid::Uuid;

/// Supersession across people (`Knowledge::mark_superseded_by`) around the
/// knowledge records `writer` just `written`: the record each replaces is marked
/// superseded, and so is each that a record here already replaces (it arrived
/// after its replacement), each only when the replacing record's writer may see
/// the one it replaces (`solaria_shared::sharing::sees`): a teammate supersedes a
/// decision of a shared project, never a personal one. Only body and status
/// change, never the version or the feed position: every edge derives the same
/// mark from the same two records.
pub(super) async fn settle_supersession(
    tx: &mut Transaction<'_, Postgres>,
    writer: Viewer,
    written: &[&Knowledge],
) -> Result<(), StorageError> {
    let account = writer.account;
    let fetch = |sql: String| sql::query(AssertSqlSafe(sql));
    for k in written {
        if let Some(old) = k.replaces() {
            let row = fetch(format!(
                "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
                 WHERE account_id = $1 AND id = $2 AND {visible}",
                visible = visible_sql("", "$1", "$3")
            ))
            .bind(account.0)
            .bind(old.as_uuid())
            .bind(writer.person.0)
            .fetch_optional(&mut **tx)
            .await?;
            if let Some(row) = row
                && let WireRecord::Knowledge(mut old) = knowledge_row(&row)?
                && old.mark_superseded_by(k)
            {
                rewrite_standing(tx, account, &old).await?;
            }
        }
        if k.meta.deleted || !matches!(k.kind(), KnowledgeKind::Decision | KnowledgeKind::Memory) {
            continue;
        }
        // A record already here that replaces this one, by someone who may see it:
        // a machine of the writer's person, or anyone when its project is shared.
        let row = fetch(format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND NOT deleted AND kind = $3 AND body->>'supersedes' = $2
               AND ({own} OR {shared})
             ORDER BY created_at LIMIT 1",
            own = own_sql("", "$1", "$4"),
            shared = key_shared_sql("$5", "$1")
        ))
        .bind(account.0)
        .bind(k.id.to_string())
        .bind(k.kind().as_str())
        .bind(writer.person.0)
        .bind(&k.project.key)
        .fetch_optional(&mut **tx)
        .await?;
        let mut marked = (*k).clone();
        if let Some(row) = row
            && let WireRecord::Knowledge(by) = knowledge_row(&row)?
            && marked.mark_superseded_by(&by)
        {
            rewrite_standing(tx, account, &marked).await?;
        }
    }
    Ok(())
}

/// Writes `k`'s body and status as they are now, its version unchanged.
async fn rewrite_standing(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    k: &Knowledge,
) -> Result<(), StorageError> {
    sql::query(
        "UPDATE memory_knowledge SET body = $3::jsonb, status = $4 WHERE account_id = $1 AND id = $2",
    )
    .bind(account.0)
    .bind(k.id.as_uuid())
    .bind(k.body.fields().to_string())
    .bind(k.status())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Inserts or replaces knowledge rows (`seq` each), keeping the stored version
/// where it wins (`rows::replaces_where!`); the ids written.
pub(super) async fn upsert_knowledge(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Knowledge)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let col = |f: &dyn Fn(&Knowledge) -> String| rows.iter().map(|(_, k)| f(k)).collect::<Vec<_>>();
    let ids = sql::query_scalar(concat!(
        "INSERT INTO memory_knowledge AS t (account_id, id, machine_id, updated, deleted, seq,
             project_key, project_name, session_id, kind, status, title, search_text, body, created_at,
             written_by)
         SELECT $1, u.id, u.machine_id, u.updated, u.deleted, u.seq, u.project_key, u.project_name,
             u.session_id, u.kind, u.status, u.title, u.search_text, u.body::jsonb, u.created_at,
             u.written_by
         FROM UNNEST($2::uuid[], $3::uuid[], $4::int8[], $5::bool[], $6::int8[], $7::text[],
             $8::text[], $9::uuid[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
             $15::int8[], $16::text[])
             AS u(id, machine_id, updated, deleted, seq, project_key, project_name, session_id, kind,
                  status, title, search_text, body, created_at, written_by)
         ON CONFLICT (account_id, id) DO UPDATE SET machine_id = EXCLUDED.machine_id,
             updated = EXCLUDED.updated, deleted = EXCLUDED.deleted, seq = EXCLUDED.seq,
             project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             session_id = EXCLUDED.session_id, kind = EXCLUDED.kind, status = EXCLUDED.status,
             title = EXCLUDED.title, search_text = EXCLUDED.search_text, body = EXCLUDED.body,
             created_at = EXCLUDED.created_at, written_by = EXCLUDED.written_by",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(rows.iter().map(|(_, k)| *k.id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, k)| *k.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, k)| k.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, k)| k.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(col(&|k| k.project.key.clone()))
    .bind(col(&|k| k.project.name.clone()))
    .bind(
        rows.iter()
            .map(|(_, k)| k.session_id.map(|s| *s.as_uuid()))
            .collect::<Vec<_>>(),
    )
    .bind(col(&|k| k.kind().as_str().to_string()))
    .bind(col(&|k| k.status().to_string()))
    // A tombstone pushed by an edge carries an erased body; whatever it carries,
    // central keeps no text of an erased record.
    .bind(col(&|k| if k.meta.deleted { String::new() } else { k.title() }))
    .bind(col(&|k| {
        if k.meta.deleted {
            String::new()
        } else {
            k.search_text()
        }
    }))
    .bind(col(&|k| {
        if k.meta.deleted {
            "{}".to_string()
        } else {
            k.body.fields().to_string()
        }
    }))
    .bind(rows.iter().map(|(_, k)| k.created_at.0).collect::<Vec<_>>())
    .bind(col(&|k| k.written_by.to_string()))
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids)
}

/// Which decisions a list holds.
#[derive(Debug, Clone, Default)]
pub struct DecisionQuery {
    /// Only these project keys (already resolved); `None`: the whole account.
    pub project_keys: Option<Vec<String>>,
    /// Superseded and retracted ones too (else only active).
    pub all: bool,
    /// Only those matching this `websearch_to_tsquery` text (English or Spanish),
    /// best match first; else newest first.
    pub text: Option<String>,
    pub limit: usize,
}

/// An iteration with what was recorded in it.
#[derive(Debug, Clone)]
pub struct IterationRecords {
    pub iteration: Knowledge,
    /// Decisions, commits and events that name the iteration, oldest first.
    pub decisions: Vec<Knowledge>,
    pub commits: Vec<Knowledge>,
    pub events: Vec<Knowledge>,
}

/// Which iteration to read.
#[derive(Debug, Clone)]
pub enum IterationQuery {
    /// This one.
    Id(Uuid),
    /// The active iteration of these project keys, else their latest.
    Project(Vec<String>),
}

/// The knowledge records of `rows` (rows of `KNOWLEDGE_COLS`).
fn knowledge_of(rows: &[PgRow]) -> Result<Vec<Knowledge>, StorageError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        if let WireRecord::Knowledge(k) = knowledge_row(row)? {
            out.push(k);
        }
    }
    Ok(out)
}

impl Storage {
    /// The newest live records of `kinds` of the projects `keys` (only those whose
    /// status is `status`, when given), newest first, at most `limit`: what a
    /// project's context weighs (`solaria_shared::context::place_in_context` says
    /// which it shows), its commits, its active iteration.
    pub async fn recent_knowledge(
        &self,
        viewer: Viewer,
        keys: &[String],
        kinds: &[KnowledgeKind],
        status: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Knowledge>, StorageError> {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        let sql = format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND kind = ANY($3) AND NOT deleted
               AND ($4::text IS NULL OR status = $4){} AND {}
             ORDER BY created_at DESC, id DESC LIMIT $5",
            key_condition("project_key", "$2", keys),
            visible_sql("", "$1", "$6")
        );
        let rows = sql::query(AssertSqlSafe(sql))
            .bind(viewer.account.0)
            .bind(keys)
            .bind(&kinds)
            .bind(status)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .bind(viewer.person.0)
            .fetch_all(&mut *self.lagging_session().await?)
            .await?;
        knowledge_of(&rows)
    }

    /// The live knowledge recorded in `session` by its own person, oldest first
    /// (by its own index, `memory_knowledge_session`).
    pub async fn knowledge_of_session(
        &self,
        viewer: Viewer,
        session: &Session,
    ) -> Result<Vec<Knowledge>, StorageError> {
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND session_id = $2 AND NOT deleted AND {visible} AND {same}
             ORDER BY created_at, id",
            visible = visible_sql("", "$1", "$3"),
            same = same_person_sql("", "$4")
        )))
        .bind(viewer.account.0)
        .bind(session.id.as_uuid())
        .bind(viewer.person.0)
        .bind(session.meta.machine_id.as_uuid())
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        knowledge_of(&rows)
    }

    /// The live link records that name `record` at either end, and the commits
    /// that implement it, in its project (where they are written), oldest first:
    /// how it relates to others, both ways.
    pub async fn links_of(
        &self,
        viewer: Viewer,
        record: &Knowledge,
    ) -> Result<Vec<Knowledge>, StorageError> {
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND project_key = $2 AND NOT deleted AND id <> $3
               AND ((kind = 'link' AND (body->>'from' = $4 OR body->>'to' = $4))
                    OR (kind = 'commit' AND body->'decisions' ? $4)) AND {visible}
             ORDER BY created_at, id",
            visible = visible_sql("", "$1", "$5")
        )))
        .bind(viewer.account.0)
        .bind(&record.project.key)
        .bind(record.id.as_uuid())
        .bind(record.id.to_string())
        .bind(viewer.person.0)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        knowledge_of(&rows)
    }

    /// The live commits of the account whose sha starts with `hex` (at least 7
    /// lowercase hex digits: a `[C#sha7]` citation), at most 10.
    pub async fn commits_by_sha(
        &self,
        viewer: Viewer,
        hex: &str,
    ) -> Result<Vec<Knowledge>, StorageError> {
        if hex.len() < 7 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(Vec::new());
        }
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND kind = 'commit' AND NOT deleted
               AND starts_with(body->>'sha', $2) AND {visible}
             ORDER BY created_at DESC, id DESC LIMIT 10",
            visible = visible_sql("", "$1", "$3")
        )))
        .bind(viewer.account.0)
        .bind(hex.to_ascii_lowercase())
        .bind(viewer.person.0)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        knowledge_of(&rows)
    }

    /// The live sessions of the project `key` started between `from` and `to`
    /// (both included), oldest first: the sessions of an iteration, which belong to
    /// it by time.
    pub async fn sessions_between(
        &self,
        viewer: Viewer,
        key: &str,
        from: UnixMillis,
        to: UnixMillis,
    ) -> Result<Vec<Session>, StorageError> {
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {SESSION_COLS} FROM memory_sessions
             WHERE account_id = $1 AND project_key = $2 AND NOT deleted
               AND started_at >= $3 AND started_at <= $4 AND {visible}
             ORDER BY started_at, id",
            visible = visible_sql("", "$1", "$5")
        )))
        .bind(viewer.account.0)
        .bind(key)
        .bind(from.0)
        .bind(to.0)
        .bind(viewer.person.0)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        let mut sessions = Vec::with_capacity(rows.len());
        for r in &rows {
            if let WireRecord::Session(s) = session_row(r)? {
                sessions.push(s);
            }
        }
        Ok(sessions)
    }

    /// The account's live decisions the query selects.
    pub async fn decisions(
        &self,
        viewer: Viewer,
        q: &DecisionQuery,
    ) -> Result<Vec<Knowledge>, StorageError> {
        let mut sql = format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND kind = 'decision' AND NOT deleted AND {visible}",
            visible = visible_sql("", "$1", "$5")
        );
        if let Some(keys) = &q.project_keys {
            sql.push_str(&key_condition("project_key", "$2", keys));
        }
        if !q.all {
            sql.push_str(" AND status = 'active'");
        }
        // Both languages, as the `search` column holds both stemmings.
        let tsquery =
            "(websearch_to_tsquery('english', $3) || websearch_to_tsquery('spanish', $3))";
        if q.text.is_some() {
            sql.push_str(&format!(
                " AND search @@ {tsquery} ORDER BY ts_rank(search, {tsquery}, 1) DESC, created_at DESC, id DESC"
            ));
        } else {
            sql.push_str(" ORDER BY created_at DESC, id DESC");
        }
        sql.push_str(" LIMIT $4");
        let rows = sql::query(AssertSqlSafe(sql))
            .bind(viewer.account.0)
            .bind(q.project_keys.clone())
            .bind(q.text.clone())
            .bind(q.limit as i64)
            .bind(viewer.person.0)
            .fetch_all(&mut *self.lagging_session().await?)
            .await?;
        knowledge_of(&rows)
    }

    /// An iteration of the account with the decisions, commits and events that name
    /// it, from one snapshot; `None` when the account holds no such live iteration.
    pub async fn iteration(
        &self,
        viewer: Viewer,
        which: &IterationQuery,
    ) -> Result<Option<IterationRecords>, StorageError> {
        let mut tx = read_snapshot(self).await?;
        let row = match which {
            IterationQuery::Id(id) => {
                sql::query(AssertSqlSafe(format!(
                    "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
                     WHERE account_id = $1 AND id = $2 AND kind = 'iteration' AND NOT deleted
                       AND {visible}",
                    visible = visible_sql("", "$1", "$3")
                )))
                .bind(viewer.account.0)
                .bind(id)
                .bind(viewer.person.0)
                .fetch_optional(&mut *tx)
                .await?
            }
            IterationQuery::Project(keys) => {
                sql::query(AssertSqlSafe(format!(
                    "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
                     WHERE account_id = $1 AND kind = 'iteration' AND NOT deleted{keys} AND {visible}
                     ORDER BY (status = 'active') DESC, created_at DESC, id DESC LIMIT 1",
                    keys = key_condition("project_key", "$2", keys),
                    visible = visible_sql("", "$1", "$3")
                )))
                .bind(viewer.account.0)
                .bind(keys)
                .bind(viewer.person.0)
                .fetch_optional(&mut *tx)
                .await?
            }
        };
        let Some(row) = row else {
            return Ok(None);
        };
        let WireRecord::Knowledge(iteration) = knowledge_row(&row)? else {
            return Ok(None);
        };
        // The records that name it live in its project (the listing index).
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND project_key = $2 AND kind IN ('decision', 'commit', 'event')
                 AND NOT deleted AND body->>'iteration' = $3 AND {visible}
             ORDER BY created_at, id",
            visible = visible_sql("", "$1", "$4")
        )))
        .bind(viewer.account.0)
        .bind(&iteration.project.key)
        .bind(iteration.id.to_string())
        .bind(viewer.person.0)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let named = knowledge_of(&rows)?;
        let of = |kind: KnowledgeKind| {
            named
                .iter()
                .filter(|k| k.kind() == kind)
                .cloned()
                .collect::<Vec<_>>()
        };
        Ok(Some(IterationRecords {
            decisions: of(KnowledgeKind::Decision),
            commits: of(KnowledgeKind::Commit),
            events: of(KnowledgeKind::Event),
            iteration,
        }))
    }

    /// The knowledge records `ids` of the account, tombstones included (search hits
    /// are cited by them: a commit by its sha).
    pub(crate) async fn knowledge_by_ids(
        &self,
        viewer: Viewer,
        ids: &[Uuid],
    ) -> Result<Vec<Knowledge>, StorageError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT {KNOWLEDGE_COLS} FROM memory_knowledge
             WHERE account_id = $1 AND id = ANY($2) AND {visible}",
            visible = visible_sql("", "$1", "$3")
        )))
        .bind(viewer.account.0)
        .bind(ids)
        .bind(viewer.person.0)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        knowledge_of(&rows)
    }
}
