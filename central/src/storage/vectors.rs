//! Record vectors pushed by the edges (`memory_vectors`, migration 0004): kept for
//! the record version they were made from, per model, and served with the change
//! feed to the readers that use the same model. Every query names its account.

use super::visibility::{Viewer, visible_sql};
use super::{AccountId, Storage, StorageError};
use solaria_shared::embedding::{EmbeddingRefusal, VectorEncoding, WireEmbedding};
use solaria_shared::{Hlc, MachineId};
use sqlx::Row;
use std::collections::HashMap;
use uuid::Uuid;

/// The live records of every table that has vectors, by account, id and version,
/// with what visibility reads (machine and project).
const LIVE_RECORDS: &str = "(SELECT account_id, id, updated, machine_id, project_key
      FROM memory_observations_remote WHERE NOT deleted
  UNION ALL SELECT account_id, id, updated, machine_id, project_key
      FROM memory_summaries_remote WHERE NOT deleted
  UNION ALL SELECT account_id, id, updated, machine_id, project_key
      FROM memory_knowledge WHERE NOT deleted)";

impl Storage {
    /// Keeps each well-formed vector whose record the pusher's person may see, live,
    /// at the version the vector was made from (replacing that model's older vector of the
    /// record); answers the others with the reason. A refusal never touches the
    /// record.
    pub async fn store_embeddings(
        &self,
        viewer: Viewer,
        pusher: MachineId,
        embeddings: &[WireEmbedding],
    ) -> Result<Vec<EmbeddingRefusal>, StorageError> {
        let mut refused = Vec::new();
        let mut tx = self.pool().begin().await?;
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
            let bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
            let stored = sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO memory_vectors (account_id, record_id, model, dimension, updated, machine_id, data)
                 SELECT $1, $2, $3, $4, $5, $7, $6 WHERE EXISTS
                     (SELECT 1 FROM {LIVE_RECORDS} r
                      WHERE r.account_id = $1 AND r.id = $2 AND r.updated = $5 AND {visible})
                 ON CONFLICT (account_id, record_id, model) DO UPDATE
                 SET dimension = excluded.dimension, updated = excluded.updated,
                     machine_id = excluded.machine_id, data = excluded.data",
                visible = visible_sql("r.", "$1", "$8")
            )))
            .bind(viewer.account.0)
            .bind(e.id)
            .bind(&e.model)
            .bind(e.dimension as i32)
            .bind(e.updated.as_i64())
            .bind(&bytes)
            .bind(pusher.as_uuid())
            .bind(viewer.person.0)
            .execute(&mut *tx)
            .await?;
            if stored.rows_affected() == 0 {
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
        let rows = sqlx::query(
            "SELECT record_id, updated, data FROM memory_vectors
             WHERE account_id = $1 AND model = $2 AND record_id = ANY($3) AND machine_id <> $4",
        )
        .bind(account.0)
        .bind(model)
        .bind(&ids)
        .bind(reader.as_uuid())
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: Uuid = row.try_get("record_id")?;
            let updated = Hlc::from_i64(row.try_get("updated")?);
            if wanted.get(&id) != Some(&updated) {
                continue;
            }
            let data: Vec<u8> = row.try_get("data")?;
            let values: Vec<f32> = data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            out.push(WireEmbedding::encode_as(
                id, updated, model, &values, encoding,
            ));
        }
        Ok(out)
    }
}
