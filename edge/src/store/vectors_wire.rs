//! Vectors that travel with their records: the ones made here go to the central
//! service ([`outgoing`], from `vector_outbox`), and the ones pulled from it are
//! stored in place of an embedding pass ([`store_pulled`]) when they were made by
//! this index's model from the record's current version.

use super::StoreError;
use super::vectors::{self, IndexModel, Source, bump_generation, coarse_blob, remove, to_blob};
use rusqlite::{Connection, OptionalExtension, params};
use solaria_shared::Hlc;
use solaria_shared::embedding::WireEmbedding;
use uuid::Uuid;

/// A vector waiting in the outbox, ready to go (`embedding` is `None` when it has
/// nothing to send any more: the entry is only taken off).
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub source: Source,
    pub row: i64,
    /// The record's project key and name (local-only projects are not pushed).
    pub project: (String, String),
    pub embedding: Option<WireEmbedding>,
}

/// Up to `limit` entries of the outbox. A vector is sent only if it is still its
/// record's current one (the record is live and not queued for a new vector) and
/// was made from text without private spans: a vector says what its text is about,
/// so the text's private part must not leave in it (the other machines embed the
/// stripped text themselves).
pub fn outgoing(conn: &Connection, limit: usize) -> Result<Vec<Outgoing>, StoreError> {
    let Some(model) = vectors::index_model(conn)? else {
        return Ok(Vec::new());
    };
    let entries: Vec<(i64, i64)> = conn
        .prepare_cached("SELECT source, row FROM vector_outbox ORDER BY source, row LIMIT ?1")?
        .query_map([limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(entries.len());
    for (code, row) in entries {
        let Some(source) = Source::from_code(code) else {
            continue;
        };
        let record: Option<(String, i64, String, String, bool)> = conn
            .prepare_cached(&format!(
                "SELECT id, updated, project_key, project_name,
                        instr(lower({text}), '<private') = 0
                        AND NOT EXISTS (SELECT 1 FROM vector_queue q WHERE q.source = ?2 AND q.row = ?1)
                 FROM {base} WHERE rowid = ?1 AND {live}",
                text = source.text_sql(),
                base = source.base(),
                live = source.embedded_sql(),
            ))?
            .query_row(params![row, code], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()?;
        let vector = vectors::stored_vector(conn, source, row)?;
        let (project, embedding) = match (record, vector) {
            (Some((id, updated, key, name, true)), Some(v)) => {
                let embedding = Uuid::parse_str(&id).ok().map(|id| {
                    WireEmbedding::encode(id, Hlc::from_i64(updated), &model.fingerprint, &v)
                });
                ((key, name), embedding)
            }
            (Some((_, _, key, name, _)), _) => ((key, name), None),
            (None, _) => ((String::new(), String::new()), None),
        };
        out.push(Outgoing {
            source,
            row,
            project,
            embedding,
        });
    }
    Ok(out)
}

/// Takes pushed (or unsendable) entries off the outbox.
pub fn sent(tx: &Connection, entries: &[Outgoing]) -> Result<(), StoreError> {
    let mut stmt = tx.prepare_cached("DELETE FROM vector_outbox WHERE source = ?1 AND row = ?2")?;
    for e in entries {
        stmt.execute(params![e.source.code(), e.row])?;
    }
    Ok(())
}

/// Entries waiting in the outbox.
pub fn waiting(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM vector_outbox")?
        .query_row([], |r| r.get(0))?)
}

/// What [`store_pulled`] did with a page's vectors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pulled {
    /// Stored: their records need no embedding pass.
    pub stored: usize,
    /// Made by another model (or dimension) than this index's: ignored.
    pub other_model: usize,
    /// Made from a version that is not the record's current one here, or of a
    /// record this machine does not hold: ignored (the record waits for its pass).
    pub stale: usize,
    /// Malformed vectors, with the reason; their records are applied all the same.
    pub refused: Vec<String>,
}

/// Stores pulled vectors that fit: made by `model`, well formed (see
/// `WireEmbedding::decode`), of a live record here at exactly the version the
/// vector was made from. Each one stored replaces the record's old vector and
/// takes it off the embedding queue. Runs inside the write that applied the
/// records, so a record and its vector arrive together.
pub fn store_pulled(
    tx: &Connection,
    model: &IndexModel,
    centre: &[f32],
    embeddings: &[WireEmbedding],
) -> Result<Pulled, StoreError> {
    let mut done = Pulled::default();
    for e in embeddings {
        if !e.is_of(&model.fingerprint, model.dimension) {
            done.other_model += 1;
            continue;
        }
        let v = match e.decode() {
            Ok(v) => v,
            Err(err) => {
                done.refused.push(format!("vector of {}: {err}", e.id));
                continue;
            }
        };
        let Some((source, row)) = live_version(tx, e.id, e.updated)? else {
            done.stale += 1;
            continue;
        };
        remove(tx, source, row)?;
        tx.prepare_cached(&format!(
            "INSERT INTO {} (rowid, coarse) VALUES (?1, vec_quantize_binary(?2))",
            source.vector_table()
        ))?
        .execute(params![row, coarse_blob(&v, centre)])?;
        tx.prepare_cached(&format!(
            "INSERT INTO {} (row, embedding) VALUES (?1, ?2)",
            source.float_table()
        ))?
        .execute(params![row, to_blob(&v)])?;
        tx.prepare_cached("DELETE FROM vector_queue WHERE source = ?1 AND row = ?2")?
            .execute(params![source.code(), row])?;
        done.stored += 1;
    }
    if done.stored > 0 {
        bump_generation(tx)?;
    }
    Ok(done)
}

/// The table and rowid of the record `id` if it is live and embedded here at
/// version `updated`.
fn live_version(
    tx: &Connection,
    id: Uuid,
    updated: Hlc,
) -> Result<Option<(Source, i64)>, StoreError> {
    for source in Source::ALL {
        let row: Option<i64> = tx
            .prepare_cached(&format!(
                "SELECT rowid FROM {} WHERE id = ?1 AND updated = ?2 AND {}",
                source.base(),
                source.embedded_sql()
            ))?
            .query_row(params![id.to_string(), updated.as_i64()], |r| r.get(0))
            .optional()?;
        if let Some(row) = row {
            return Ok(Some((source, row)));
        }
    }
    Ok(None)
}
