//! Sessions, observations and summaries, the first release's three record kinds:
//! their upserts, as `batch` applies them (knowledge has its own, in `knowledge`).
//! Each keeps the stored version where it wins (`rows::replaces_where!`) and
//! answers the ids it wrote.

use super::base::{AccountId, StorageError};
use super::rows::replaces_where;
use super::sql;
use solaria_shared::{Observation, Session, Summary};
use sqlx::{Postgres, Transaction};
use uuid::Uuid;

/// A list as the database keeps it (a JSON array).
fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

/// Inserts or replaces session rows (`seq` each), keeping the stored version where
/// it wins; the ids written.
pub(super) async fn upsert_sessions(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Session)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = rows.iter().map(|(_, s)| *s.id.as_uuid()).collect();
    let ids_q = sql::query_scalar(concat!(
        "INSERT INTO memory_sessions AS t (account_id, id, machine_id, updated, deleted, seq, project_key,
             project_name, agent, agent_session_id, cwd, source, started_at, ended_at)
         SELECT $1, u.* FROM UNNEST($2::uuid[], $3::uuid[], $4::int8[], $5::bool[], $6::int8[], $7::text[],
             $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int8[], $14::int8[])
             AS u(id, machine_id, updated, deleted, seq, project_key, project_name, agent, agent_session_id,
                  cwd, source, started_at, ended_at)
         ON CONFLICT (account_id, id) DO UPDATE SET machine_id = EXCLUDED.machine_id,
             updated = EXCLUDED.updated, deleted = EXCLUDED.deleted, seq = EXCLUDED.seq,
             project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             agent = EXCLUDED.agent, agent_session_id = EXCLUDED.agent_session_id, cwd = EXCLUDED.cwd,
             source = EXCLUDED.source, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(&ids)
    .bind(rows.iter().map(|(_, s)| *s.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.key.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.name.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.agent.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.agent_session_id.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.cwd.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.source.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.started_at.0).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.ended_at.map(|t| t.0)).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids_q)
}

/// Inserts or replaces observation rows, as [`upsert_sessions`] does sessions.
pub(super) async fn upsert_observations(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Observation)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let col =
        |f: &dyn Fn(&Observation) -> String| rows.iter().map(|(_, o)| f(o)).collect::<Vec<_>>();
    let ids = sql::query_scalar(concat!(
        "INSERT INTO memory_observations_remote AS t (account_id, id, session_id, machine_id, updated,
             deleted, seq, project_key, project_name, kind, tool_name, title, input, response, files,
             metadata, tags, created_at)
         SELECT $1, u.id, u.session_id, u.machine_id, u.updated, u.deleted, u.seq, u.project_key,
             u.project_name, u.kind, u.tool_name, u.title, u.input, u.response, u.files::jsonb,
             u.metadata::jsonb, u.tags::jsonb, u.created_at
         FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::int8[], $6::bool[], $7::int8[], $8::text[],
             $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
             $16::text[], $17::text[], $18::int8[])
             AS u(id, session_id, machine_id, updated, deleted, seq, project_key, project_name, kind,
                  tool_name, title, input, response, files, metadata, tags, created_at)
         ON CONFLICT (account_id, id) DO UPDATE SET session_id = EXCLUDED.session_id,
             machine_id = EXCLUDED.machine_id, updated = EXCLUDED.updated, deleted = EXCLUDED.deleted,
             seq = EXCLUDED.seq, project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             kind = EXCLUDED.kind, tool_name = EXCLUDED.tool_name, title = EXCLUDED.title,
             input = EXCLUDED.input, response = EXCLUDED.response, files = EXCLUDED.files,
             metadata = EXCLUDED.metadata, tags = EXCLUDED.tags, created_at = EXCLUDED.created_at",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(rows.iter().map(|(_, o)| *o.id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| *o.session_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| *o.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| o.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, o)| o.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(col(&|o| o.project.key.clone()))
    .bind(col(&|o| o.project.name.clone()))
    .bind(col(&|o| o.kind.as_str().to_string()))
    .bind(rows.iter().map(|(_, o)| o.tool_name.clone()).collect::<Vec<_>>())
    .bind(col(&|o| o.title.clone()))
    .bind(col(&|o| o.input.clone()))
    .bind(col(&|o| o.response.clone()))
    .bind(col(&|o| json_list(&o.files)))
    .bind(col(&|o| o.metadata.to_string()))
    .bind(col(&|o| json_list(&o.tags)))
    .bind(rows.iter().map(|(_, o)| o.created_at.0).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids)
}

/// Inserts or replaces summary rows, as [`upsert_sessions`] does sessions.
pub(super) async fn upsert_summaries(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    rows: &[(i64, &Summary)],
) -> Result<Vec<Uuid>, StorageError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids = sql::query_scalar(concat!(
        "INSERT INTO memory_summaries_remote AS t (account_id, id, session_id, machine_id, updated,
             deleted, seq, project_key, project_name, summary, key_points, tags, observations_count,
             created_at)
         SELECT $1, u.id, u.session_id, u.machine_id, u.updated, u.deleted, u.seq, u.project_key,
             u.project_name, u.summary, u.key_points::jsonb, u.tags::jsonb, u.observations_count,
             u.created_at
         FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::int8[], $6::bool[], $7::int8[], $8::text[],
             $9::text[], $10::text[], $11::text[], $12::text[], $13::int4[], $14::int8[])
             AS u(id, session_id, machine_id, updated, deleted, seq, project_key, project_name, summary,
                  key_points, tags, observations_count, created_at)
         ON CONFLICT (account_id, id) DO UPDATE SET session_id = EXCLUDED.session_id,
             machine_id = EXCLUDED.machine_id, updated = EXCLUDED.updated, deleted = EXCLUDED.deleted,
             seq = EXCLUDED.seq, project_key = EXCLUDED.project_key, project_name = EXCLUDED.project_name,
             summary = EXCLUDED.summary, key_points = EXCLUDED.key_points, tags = EXCLUDED.tags,
             observations_count = EXCLUDED.observations_count, created_at = EXCLUDED.created_at",
        replaces_where!(),
        " RETURNING id"
    ))
    .bind(account.0)
    .bind(rows.iter().map(|(_, s)| *s.id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| *s.session_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| *s.meta.machine_id.as_uuid()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.updated.as_i64()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.meta.deleted).collect::<Vec<_>>())
    .bind(rows.iter().map(|(seq, _)| *seq).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.key.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.project.name.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.text.clone()).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| json_list(&s.key_points)).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| json_list(&s.tags)).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.observation_count as i32).collect::<Vec<_>>())
    .bind(rows.iter().map(|(_, s)| s.created_at.0).collect::<Vec<_>>())
    .fetch_all(&mut **tx)
    .await?;
    Ok(ids)
}
