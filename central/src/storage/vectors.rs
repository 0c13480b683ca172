//! Record vectors pushed by the edges (`memory_vectors`, migrations 0004 and 0011):
//! kept for the record version they were made from, per model, beside what search
//! filters on, and served with the change feed to the readers that use the same
//! model. With pgvector the values live in the indexed `embedding` column, else as
//! bytes in `data` (`meaning`). Every query names its account.

use super::Storage;
use super::base::{AccountId, StorageError, Viewer};
use super::meaning::from_le_bytes;
use super::sql;
use super::vector_models::{ModelRef, register_account};
use super::visibility::own_sql;
use solaria_shared::embedding::{EmbeddingRefusal, VectorEncoding, WireEmbedding};
use solaria_shared::{Hlc, MachineId};
use sqlx::Row;
use std::collections::HashMap;
use uuid::Uuid;

/// The live records of every table that has vectors, by account, id and version,
/// with what visibility reads (machine and project) and search filters on.
const LIVE_RECORDS: &str =
    "(SELECT account_id, id, updated, machine_id, project_key, kind, created_at
      FROM memory_observations_remote WHERE NOT deleted
  UNION ALL SELECT account_id, id, updated, machine_id, project_key, 'summary', created_at
      FROM memory_summaries_remote WHERE NOT deleted
  UNION ALL SELECT account_id, id, updated, machine_id, project_key, kind, created_at
      FROM memory_knowledge WHERE NOT deleted)";

/// Whether `e`'s record is live and written by a person other than `viewer`'s.
async fn written_by_another(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    viewer: Viewer,
    e: &WireEmbedding,
) -> Result<bool, StorageError> {
    Ok(sql::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT EXISTS (SELECT 1 FROM {LIVE_RECORDS} r
         WHERE r.account_id = $1 AND r.id = $2 AND NOT {own})",
        own = own_sql("r.", "$1", "$3")
    )))
    .bind(viewer.account.0)
    .bind(e.id)
    .bind(viewer.person.0)
    .fetch_one(&mut **tx)
    .await?)
}

impl Storage {
    /// Keeps each well-formed vector of a listed model whose record the pusher's
    /// person wrote, live, at the version the vector was made from (replacing that
    /// model's older vector of the record); answers the others with the reason. A
    /// vector decides where its record is found, so it is its author's to push, as
    /// the record is: a teammate's machine embeds a teammate's record for itself.
    /// A refusal never touches the record.
    pub async fn store_embeddings(
        &self,
        viewer: Viewer,
        pusher: MachineId,
        embeddings: &[WireEmbedding],
    ) -> Result<Vec<EmbeddingRefusal>, StorageError> {
        let mut refused = Vec::new();
        let mut decoded = Vec::with_capacity(embeddings.len());
        let mut models: HashMap<(String, usize), Result<ModelRef, String>> = HashMap::new();
        for e in embeddings {
            let values = match e.decode() {
                Ok(v) => v,
                Err(err) => {
                    refused.push(EmbeddingRefusal {
                        id: e.id,
                        reason: err.to_string(),
                    });
                    continue;
                }
            };
            let key = (e.model.clone(), e.dimension);
            if !models.contains_key(&key) {
                let model = self.enabled_model(&e.model, e.dimension).await?;
                models.insert(key.clone(), model);
            }
            match &models[&key] {
                Ok(model) => decoded.push((e, *model, values)),
                Err(reason) => refused.push(EmbeddingRefusal {
                    id: e.id,
                    reason: reason.clone(),
                }),
            }
        }
        // With pgvector the values go to the indexed column, else as bytes.
        let indexed = self.meaning().is_on();
        let (value_columns, values) = if indexed {
            ("data, embedding", "NULL::bytea, $6::real[]::vector")
        } else {
            ("data", "$6::bytea")
        };
        let update = if indexed {
            "data = NULL, embedding = excluded.embedding"
        } else {
            "data = excluded.data"
        };
        let sql = format!(
            "INSERT INTO memory_vectors (account_id, record_id, model, model_id, dimension, updated,
                 pushed_by, machine_id, project_key, kind, created_at, {value_columns})
             SELECT $1, $2, $3, $9, $4, $5, $7, r.machine_id, r.project_key, r.kind, r.created_at, {values}
             FROM {LIVE_RECORDS} r
             WHERE r.account_id = $1 AND r.id = $2 AND r.updated = $5 AND {own}
             ON CONFLICT (account_id, record_id, model) DO UPDATE
             SET model_id = excluded.model_id, dimension = excluded.dimension,
                 updated = excluded.updated, pushed_by = excluded.pushed_by,
                 machine_id = excluded.machine_id, project_key = excluded.project_key,
                 kind = excluded.kind, created_at = excluded.created_at, {update}",
            own = own_sql("r.", "$1", "$8")
        );
        let mut tx = self.pool().begin().await?;
        for (e, model, values) in decoded {
            let query = sql::query(sqlx::AssertSqlSafe(sql.clone()))
                .bind(viewer.account.0)
                .bind(e.id)
                .bind(&e.model)
                .bind(e.dimension as i32)
                .bind(e.updated.as_i64());
            let query = if indexed {
                query.bind(values)
            } else {
                query.bind(
                    values
                        .iter()
                        .flat_map(|x| x.to_le_bytes())
                        .collect::<Vec<u8>>(),
                )
            };
            let stored = query
                .bind(pusher.as_uuid())
                .bind(viewer.person.0)
                .bind(model.id)
                .execute(&mut *tx)
                .await?;
            if stored.rows_affected() > 0 {
                register_account(&mut tx, viewer.account, model).await?;
            } else if written_by_another(&mut tx, viewer, e).await? {
                refused.push(EmbeddingRefusal {
                    id: e.id,
                    reason: "the record is another person's: its vector is its author's to push \
                             (this machine embeds it for itself)"
                        .into(),
                });
            } else {
                refused.push(EmbeddingRefusal {
                    id: e.id,
                    reason: format!(
                        "the vector was made from version {} of the record, which is not its current live version here; the record's own push decides, and the vector is made again from the current text",
                        e.updated
                    ),
                });
            }
        }
        tx.commit().await?;
        Ok(refused)
    }

    /// The vectors made by `model` of the given record versions, for those that
    /// have one, written in `encoding`: a vector of another version (or another
    /// model) is not served, nor one `reader` pushed itself (it has it). They are
    /// kept as f32 (a vector pushed as int8 is kept as it decodes). The versions
    /// come from a page of the feed, which holds only what the reader may see.
    pub async fn embeddings_for(
        &self,
        account: AccountId,
        reader: MachineId,
        model: &str,
        versions: &[(Uuid, Hlc)],
        encoding: VectorEncoding,
    ) -> Result<Vec<WireEmbedding>, StorageError> {
        if versions.is_empty() || model.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: HashMap<Uuid, Hlc> = versions.iter().copied().collect();
        let ids: Vec<Uuid> = wanted.keys().copied().collect();
        let values = if self.meaning().is_on() {
            "data, embedding::real[] AS indexed"
        } else {
            "data, NULL::real[] AS indexed"
        };
        let rows = sql::query(sqlx::AssertSqlSafe(format!(
            "SELECT record_id, updated, {values} FROM memory_vectors
             WHERE account_id = $1 AND model = $2 AND record_id = ANY($3) AND pushed_by <> $4"
        )))
        .bind(account.0)
        .bind(model)
        .bind(&ids)
        .bind(reader.as_uuid())
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: Uuid = row.try_get("record_id")?;
            let updated = Hlc::from_i64(row.try_get("updated")?);
            if wanted.get(&id) != Some(&updated) {
                continue;
            }
            let values = match row.try_get::<Option<Vec<f32>>, _>("indexed")? {
                Some(values) => values,
                None => from_le_bytes(
                    &row.try_get::<Option<Vec<u8>>, _>("data")?
                        .unwrap_or_default(),
                ),
            };
            out.push(WireEmbedding::encode_as(
                id, updated, model, &values, encoding,
            ));
        }
        Ok(out)
    }
}
