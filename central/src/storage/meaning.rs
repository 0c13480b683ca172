//! Search by meaning on pgvector: whether the database can do it, the vector
//! column and indexes it needs, and the nearest records to a query vector among
//! those a person may see.
//!
//! **Setup at each start** ([`Storage::migrate`] runs [`Storage::prepare_meaning`]):
//! when the server has the `vector` extension, the service creates it in its
//! database, adds the `embedding vector` column to `memory_vectors`, moves vectors
//! stored before (little-endian bytes in `data`) into it, and builds one HNSW index
//! (cosine) per model the operator lists (`vector_models.rs`), partial on the model
//! and cast to its dimension. Without the extension nothing changes: vectors stay
//! in `data`, travel with the feed, and every search runs by words
//! ([`Meaning::Off`] says why, `/readyz` shows it).
//!
//! **Filters inside the query.** The record's writer, project, kind and time sit
//! beside its vector (migration 0011), so one statement both filters (visibility
//! included) and orders by distance, and the planner walks the HNSW index or,
//! for a narrow scope, the scope's rows exactly. pgvector 0.6 stops an index walk
//! after `hnsw.ef_search` candidates, so a filter that drops most of them could
//! leave the page short: then the same statement runs again without the index,
//! exactly over the scope, and no page is emptied by a filter.

use super::base::{AccountId, StorageError, Viewer};
use super::sql;
use super::vector_models::{ModelRef, VectorModels};
use super::visibility::visible_sql;
use super::{Storage, key_condition};
use solaria_shared::{MachineId, RecordType};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// Whether this service searches by meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meaning {
    /// pgvector answers, at this version.
    On { pgvector: String },
    /// Every search runs by words; the reason, said to users and operators.
    Off { reason: String },
}

impl Meaning {
    /// One line for `/readyz`, the startup log and an edge's `status`.
    pub fn line(&self) -> String {
        match self {
            Meaning::On { pgvector } => format!("search by meaning: on (pgvector {pgvector})"),
            Meaning::Off { reason } => format!("search by meaning: off ({reason})"),
        }
    }

    pub fn is_on(&self) -> bool {
        matches!(self, Meaning::On { .. })
    }
}

/// The oldest pgvector with HNSW indexes.
const MIN_PGVECTOR: (u32, u32) = (0, 5);
/// Candidates one HNSW walk collects (pgvector's `hnsw.ef_search`, 40 by default;
/// its most is 1,000). With [`HNSW_M`]'s graph, 100 already find 0.98–1.00 of
/// the exact ten at 1M vectors: the rest are for filters that drop many candidates
/// (a project, a type, a teammate's narrow view), so that fewer pages need the
/// exact fallback (docs/BENCHMARKS.md).
pub const EF_SEARCH: usize = 800;
/// Links per vector in the HNSW graph (pgvector's `m`, 16 by default). With the
/// defaults, recall@10 at 1M vectors was 0.93–0.96 whatever the walk: the graph,
/// not the walk, held it below 0.95; with 24 and [`HNSW_EF_CONSTRUCTION`] it is
/// 0.98–1.00 (docs/experiments/2026-11-28-central-search-by-meaning.md).
pub const HNSW_M: usize = 24;
/// Candidates considered while linking a vector (pgvector's `ef_construction`, 64
/// by default): a denser, better-connected graph for a slower build and insert.
pub const HNSW_EF_CONSTRUCTION: usize = 128;
/// Vectors moved into the indexed column per statement at startup.
const BACKFILL_BATCH: i64 = 1000;
/// Serialises the setup of several service processes starting at once.
const SETUP_LOCK: i64 = 0x50_4c_41_52_49_41; // "SOLARIA"

/// What a search by meaning is restricted to, beside the viewer.
#[derive(Debug, Clone, Default)]
pub(super) struct NearScope<'a> {
    pub project_keys: Option<&'a [String]>,
    pub machines: Option<&'a [MachineId]>,
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub kind: Option<RecordType>,
}

/// A record near the query: its id, its type and its cosine similarity.
#[derive(Debug, Clone, Copy)]
pub(super) struct Near {
    pub id: Uuid,
    pub record_type: RecordType,
    pub similarity: f64,
}

impl Storage {
    /// Whether this service searches by meaning (as found at start).
    pub fn meaning(&self) -> Meaning {
        match self.meaning.read() {
            Ok(m) => m.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set_meaning(&self, m: Meaning) {
        match self.meaning.write() {
            Ok(mut slot) => *slot = m,
            Err(poisoned) => *poisoned.into_inner() = m,
        }
    }

    /// Makes search by meaning ready when the database has pgvector (see the
    /// module doc), and records the outcome; never fails the start for want of it.
    pub async fn prepare_meaning(&self) -> Result<Meaning, StorageError> {
        let meaning = match self.try_prepare().await {
            Ok(m) => m,
            Err(e) => Meaning::Off {
                reason: format!("preparing the vector index failed: {e}"),
            },
        };
        match &meaning {
            Meaning::On { .. } => tracing::info!("{}", meaning.line()),
            Meaning::Off { .. } => {
                tracing::warn!("{}; every search is answered by words", meaning.line())
            }
        }
        self.set_meaning(meaning.clone());
        Ok(meaning)
    }

    async fn try_prepare(&self) -> Result<Meaning, StorageError> {
        let mut conn = self.setup_pool().acquire().await?;
        lock_setup(&mut conn).await?;
        // The operator's models are registered either way (their vectors travel
        // with the feed without pgvector); with it, each gets its index, built
        // once the setup lock is released.
        let outcome = match self.prepare_locked(&mut conn).await {
            Ok(meaning) => self
                .register_models(&mut conn)
                .await
                .map(|models| (meaning, models)),
            Err(e) => Err(e),
        };
        unlock_setup(&mut conn).await?;
        drop(conn);
        let (meaning, models) = outcome?;
        if meaning.is_on() {
            self.build_indexes(&models).await?;
        }
        Ok(meaning)
    }

    async fn prepare_locked(&self, conn: &mut sqlx::PgConnection) -> Result<Meaning, StorageError> {
        let available: Option<String> = sql::query_scalar(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'",
        )
        .fetch_optional(&mut *conn)
        .await?;
        if available.is_none() {
            return Ok(Meaning::Off {
                reason: "the PostgreSQL server has no pgvector extension; docs/PRODUCTION.md says how to add it".into(),
            });
        }
        if let Err(e) = sql::query("CREATE EXTENSION IF NOT EXISTS vector")
            .execute(&mut *conn)
            .await
        {
            return Ok(Meaning::Off {
                reason: format!(
                    "pgvector is on the server but this database has not created it and the service may not ({e}): a superuser runs `CREATE EXTENSION vector;` in it once"
                ),
            });
        }
        let version: String =
            sql::query_scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                .fetch_one(&mut *conn)
                .await?;
        if !at_least(&version, MIN_PGVECTOR) {
            return Ok(Meaning::Off {
                reason: format!(
                    "pgvector {version} has no HNSW index; version {}.{} or later is needed",
                    MIN_PGVECTOR.0, MIN_PGVECTOR.1
                ),
            });
        }
        // Asked first: `ALTER TABLE` takes the table's strongest lock even when the
        // column is there, and would wait behind another replica's index build.
        let has_column: bool = sql::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'memory_vectors'
               AND column_name = 'embedding')",
        )
        .fetch_one(&mut *conn)
        .await?;
        if !has_column {
            sql::query("ALTER TABLE memory_vectors ADD COLUMN IF NOT EXISTS embedding vector")
                .execute(&mut *conn)
                .await?;
        }
        let moved = move_stored_vectors(conn).await?;
        if moved > 0 {
            tracing::info!(
                vectors = moved,
                "moved stored vectors into the indexed column"
            );
        }
        Ok(Meaning::On { pgvector: version })
    }

    /// Sets the operator's list and registers its models now, as a start does
    /// (with their indexes when search by meaning is on): for a service whose
    /// storage is already prepared.
    pub async fn enable_vector_models(&self, models: VectorModels) -> Result<(), StorageError> {
        self.set_vector_models(models);
        let mut conn = self.setup_pool().acquire().await?;
        lock_setup(&mut conn).await?;
        let registered = self.register_models(&mut conn).await;
        unlock_setup(&mut conn).await?;
        drop(conn);
        let registered = registered?;
        if self.meaning().is_on() {
            self.build_indexes(&registered).await?;
        }
        Ok(())
    }

    /// The `k` records nearest `query` (made by `model`) that `viewer` may see
    /// within `scope`, nearest first. Search by meaning must be on.
    pub(super) async fn nearest(
        &self,
        viewer: Viewer,
        model: ModelRef,
        query: &[f32],
        scope: &NearScope<'_>,
        k: usize,
    ) -> Result<Vec<Near>, StorageError> {
        let sql = nearest_sql(model, scope);
        let mut tx = self.lagging_transaction().await?;
        // Set per transaction: a value, not a parameter, in SET.
        sql::query(AssertSqlSafe(format!(
            "SET LOCAL hnsw.ef_search = {}",
            EF_SEARCH.max(k)
        )))
        .execute(&mut *tx)
        .await?;
        let mut rows = bind_near(&sql, viewer, query, scope, k)
            .fetch_all(&mut *tx)
            .await?;
        if rows.len() < k {
            // The walk may have stopped with the filters holding more: read the
            // scope exactly (bitmap or sequential scans, no HNSW walk).
            sql::query("SET LOCAL enable_indexscan = off")
                .execute(&mut *tx)
                .await?;
            rows = bind_near(&sql, viewer, query, scope, k)
                .fetch_all(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let kind: String = row.try_get("kind")?;
            let Ok(record_type) = kind.parse::<RecordType>() else {
                continue;
            };
            out.push(Near {
                id: row.try_get("record_id")?,
                record_type,
                similarity: row.try_get("similarity")?,
            });
        }
        Ok(out)
    }

    /// The similarity to `query` of those of `ids` that have a vector of `model`
    /// (a hybrid search's lexical candidates the neighbours did not include).
    pub(super) async fn similarities(
        &self,
        account: AccountId,
        model: ModelRef,
        query: &[f32],
        ids: &[Uuid],
    ) -> Result<Vec<(Uuid, f64)>, StorageError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT record_id, (1 - (embedding::vector({d}) <=> $2::real[]::vector({d})))::float8 AS similarity
             FROM memory_vectors
             WHERE account_id = $1 AND model_id = {id} AND record_id = ANY($3) AND embedding IS NOT NULL",
            d = model.dimension,
            id = model.id
        )))
        .bind(account.0)
        .bind(query)
        .bind(ids)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("record_id")?, r.try_get("similarity")?)))
            .collect()
    }
}

/// The statement of [`Storage::nearest`]: `$1` account, `$2` query, `$3` person,
/// `$4` project keys, `$5` machines, `$6` from, `$7` to, `$8` kind, `$9` k. The
/// model's id and dimension are numbers of ours, written in.
fn nearest_sql(model: ModelRef, scope: &NearScope<'_>) -> String {
    let d = model.dimension;
    let mut filters = String::new();
    if let Some(keys) = scope.project_keys {
        filters.push_str(&key_condition("project_key", "$4", keys));
    }
    if let Some(machines) = scope.machines {
        filters.push_str(if machines.len() == 1 {
            " AND machine_id = ($5)[1]"
        } else {
            " AND machine_id = ANY($5)"
        });
    }
    if scope.from.is_some() {
        filters.push_str(" AND created_at >= $6");
    }
    if scope.to.is_some() {
        filters.push_str(" AND created_at < $7");
    }
    if scope.kind.is_some() {
        filters.push_str(" AND kind = $8");
    }
    format!(
        "SELECT record_id, kind,
                (1 - (embedding::vector({d}) <=> $2::real[]::vector({d})))::float8 AS similarity
         FROM memory_vectors
         WHERE account_id = $1 AND model_id = {id} AND embedding IS NOT NULL AND kind <> 'link'
           AND {visible}{filters}
         ORDER BY embedding::vector({d}) <=> $2::real[]::vector({d})
         LIMIT $9",
        id = model.id,
        visible = visible_sql("", "$1", "$3"),
    )
}

fn bind_near<'q>(
    sql: &str,
    viewer: Viewer,
    query: &'q [f32],
    scope: &NearScope<'_>,
    k: usize,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    sql::query(AssertSqlSafe(sql.to_string()))
        .bind(viewer.account.0)
        .bind(query)
        .bind(viewer.person.0)
        .bind(scope.project_keys.map(<[String]>::to_vec))
        .bind(
            scope
                .machines
                .map(|m| m.iter().map(|id| *id.as_uuid()).collect::<Vec<_>>()),
        )
        .bind(scope.from)
        .bind(scope.to)
        .bind(scope.kind.map(RecordType::as_str))
        .bind(k as i64)
}

/// Moves vectors kept as bytes (pushed before pgvector was there) into the
/// indexed column, a batch at a time; how many moved.
async fn move_stored_vectors(conn: &mut sqlx::PgConnection) -> Result<u64, StorageError> {
    let mut moved = 0;
    loop {
        let rows = sql::query(
            "SELECT account_id, record_id, model, data FROM memory_vectors
             WHERE embedding IS NULL AND data IS NOT NULL LIMIT $1",
        )
        .bind(BACKFILL_BATCH)
        .fetch_all(&mut *conn)
        .await?;
        if rows.is_empty() {
            return Ok(moved);
        }
        let (mut accounts, mut records, mut models, mut values) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            let data: Vec<u8> = row.try_get("data")?;
            accounts.push(row.try_get::<Uuid, _>("account_id")?);
            records.push(row.try_get::<Uuid, _>("record_id")?);
            models.push(row.try_get::<String, _>("model")?);
            values.push(vector_text(&from_le_bytes(&data)));
        }
        let done = sql::query(
            "UPDATE memory_vectors v SET embedding = u.e::vector, data = NULL
             FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS u(a, r, m, e)
             WHERE v.account_id = u.a AND v.record_id = u.r AND v.model = u.m",
        )
        .bind(&accounts)
        .bind(&records)
        .bind(&models)
        .bind(&values)
        .execute(&mut *conn)
        .await?;
        moved += done.rows_affected();
    }
}

/// Takes the setup lock on `conn`: one service process at a time prepares the
/// extension, the column and the models (their indexes are built after it).
async fn lock_setup(conn: &mut sqlx::PgConnection) -> Result<(), StorageError> {
    sql::query("SELECT pg_advisory_lock($1)")
        .bind(SETUP_LOCK)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Releases [`lock_setup`]'s lock.
async fn unlock_setup(conn: &mut sqlx::PgConnection) -> Result<(), StorageError> {
    sql::query("SELECT pg_advisory_unlock($1)")
        .bind(SETUP_LOCK)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Little-endian float32 bytes as values.
pub(super) fn from_le_bytes(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// pgvector's text form of a vector: `[0.1,0.2]`.
fn vector_text(values: &[f32]) -> String {
    let inner: Vec<String> = values.iter().map(f32::to_string).collect();
    format!("[{}]", inner.join(","))
}

/// Whether the version `v` (`0.6.2`) is at least `min` (major, minor).
fn at_least(v: &str, min: (u32, u32)) -> bool {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major, minor) >= min
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_major_then_minor() {
        assert!(at_least("0.6.2", (0, 5)));
        assert!(at_least("0.5.0", (0, 5)));
        assert!(at_least("1.0", (0, 5)));
        assert!(!at_least("0.4.4", (0, 5)));
        assert!(!at_least("garbage", (0, 5)));
    }

    #[test]
    fn vectors_are_written_as_pgvector_reads_them() {
        assert_eq!(vector_text(&[0.5, -1.0, 0.1]), "[0.5,-1,0.1]");
        let bytes: Vec<u8> = [0.5f32, -1.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(from_le_bytes(&bytes), vec![0.5, -1.0]);
    }
}
