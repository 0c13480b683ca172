//! Vectors that travel with their records: the ones made here go to the central
//! service ([`outgoing`], from `vector_outbox`), and the ones pulled from it are
//! stored in place of an embedding pass ([`store_pulled`]) when they were made by
//! this index's model from the record's current version.

use super::vectors::{self, IndexModel, Source, blob_of, bump_generation, coarse_blob, remove};
use super::{StoreError, gist};
use rusqlite::{Connection, OptionalExtension, params};
use solaria_shared::Hlc;
use solaria_shared::embedding::WireEmbedding;
use solaria_shared::private::has_private;
use solaria_shared::redact::contains_secret;
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
/// record's current one (the record is live and not queued for a new vector), the
/// record is this person's (a teammate's record's vector is its author's to push:
/// it decides where the record is found), and it was made from text with neither a
/// private span nor a secret: a vector says what its text is about, so what never
/// leaves as text must not leave in it either (the other machines embed the cleaned
/// text they receive themselves).
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
        let record: Option<(String, i64, String, String, String, bool)> = conn
            .prepare_cached(&format!(
                "SELECT id, updated, project_key, project_name, {parts},
                        NOT EXISTS (SELECT 1 FROM vector_queue q WHERE q.source = ?2 AND q.row = ?1)
                 FROM {base} WHERE rowid = ?1 AND {live} AND {own}",
                parts = gist::parts_sql(source),
                base = source.base(),
                live = source.embedded_sql(),
                own = super::records::OWN_ROW,
            ))?
            .query_row(params![row, code], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    gist::text(
                        source,
                        &r.get::<_, String>(4)?,
                        &r.get::<_, String>(5)?,
                        &r.get::<_, String>(6)?,
                    ),
                    r.get(7)?,
                ))
            })
            .optional()?;
        let vector = vectors::stored_vector(conn, source, row, model.dimension)?;
        let (project, embedding) = match (record, vector) {
            (Some((id, updated, key, name, text, true)), Some(v)) if leaves_as_is(&text) => {
                let embedding = Uuid::parse_str(&id).ok().map(|id| {
                    WireEmbedding::encode(id, Hlc::from_i64(updated), &model.fingerprint, &v)
                });
                ((key, name), embedding)
            }
            (Some((_, _, key, name, ..)), _) => ((key, name), None),
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

/// The vectors an export carries (`solaria export --vectors`): of the records
/// in `wanted`, each one's current vector made by this index's model (its record
/// live and not waiting for a new one), unless its text holds a private span or
/// a secret — the rule [`outgoing`] keeps, since a file leaves this machine too.
/// Each is handed to `each` as it is read, so that none is held for long; returns
/// how many were.
pub fn each_current_of<E: From<StoreError>>(
    conn: &Connection,
    wanted: &std::collections::HashSet<Uuid>,
    mut each: impl FnMut(WireEmbedding) -> Result<(), E>,
) -> Result<usize, E> {
    let Some(model) = vectors::index_model(conn)? else {
        return Ok(0);
    };
    let mut handed = 0;
    for source in super::source::Source::ALL {
        let sql = format!(
            "SELECT rowid, id, updated, {parts} FROM {base} b
             WHERE {live}
               AND NOT EXISTS (SELECT 1 FROM vector_queue q WHERE q.source = ?1 AND q.row = b.rowid)",
            parts = gist::parts_sql(source),
            base = source.base(),
            live = source.embedded_sql(),
        );
        let mut stmt = conn.prepare(&sql).map_err(StoreError::from)?;
        let rows = stmt
            .query_map([source.code()], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    gist::text(
                        source,
                        &r.get::<_, String>(3)?,
                        &r.get::<_, String>(4)?,
                        &r.get::<_, String>(5)?,
                    ),
                ))
            })
            .map_err(StoreError::from)?;
        for row in rows {
            let (rowid, id, updated, text) = row.map_err(StoreError::from)?;
            let Ok(id) = Uuid::parse_str(&id) else {
                continue;
            };
            if !wanted.contains(&id) || !leaves_as_is(&text) {
                continue;
            }
            if let Some(v) = vectors::stored_vector(conn, source, rowid, model.dimension)? {
                each(WireEmbedding::encode(
                    id,
                    Hlc::from_i64(updated),
                    &model.fingerprint,
                    &v,
                ))?;
                handed += 1;
            }
        }
    }
    Ok(handed)
}

/// Whether `text` leaves this machine unchanged (no private span to strip, no
/// secret for central to redact).
fn leaves_as_is(text: &str) -> bool {
    !has_private(text) && !contains_secret(text)
}

/// Once per store, after the upgrade to version 9: puts every stored vector in the
/// outbox, so that vectors made before vectors travelled are pushed like new ones
/// (`outgoing` still holds back any that must stay home). Returns how many were
/// added; 0 on every later call.
pub fn backfill_outbox(tx: &Connection) -> Result<usize, StoreError> {
    let pending: bool = tx
        .prepare_cached("SELECT count(*) > 0 FROM meta WHERE key = 'vector_outbox_backfill'")?
        .query_row([], |r| r.get(0))?;
    if !pending {
        return Ok(0);
    }
    let mut added = 0;
    if vectors::index_model(tx)?.is_some() {
        for source in Source::ALL {
            let exists: bool = tx
                .prepare_cached("SELECT count(*) > 0 FROM sqlite_master WHERE name = ?1")?
                .query_row([source.float_table()], |r| r.get(0))?;
            if exists {
                added += tx.execute(
                    &format!(
                        "INSERT OR IGNORE INTO vector_outbox (source, row) SELECT ?1, row FROM {}",
                        source.float_table()
                    ),
                    [source.code()],
                )?;
            }
        }
    }
    tx.execute("DELETE FROM meta WHERE key = 'vector_outbox_backfill'", [])?;
    Ok(added)
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
        .execute(params![row, blob_of(&v)])?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use crate::vectors::{complete, next_work, prepare, queued, stored};
    use solaria_shared::{Observation, ObservationId, ObservationKind, RecordMeta, UnixMillis};

    fn unit(seed: f32, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim).map(|i| ((i as f32 + 1.0) * seed).sin()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    /// A store with an 8-dimension index of model `a` and two notes; their ids and
    /// versions.
    fn store_with_notes(dir: &std::path::Path, titles: [&str; 2]) -> (Store, Vec<(Uuid, Hlc)>) {
        let mut store = Store::open(&dir.join("m.db"), "m").expect("opens");
        let mut notes = Vec::new();
        store
            .write(|w| {
                let session = crate::fixtures::session(w, UnixMillis::now())?;
                let (meta, project) = (session.meta, session.project.clone());
                for title in titles {
                    let o = Observation {
                        id: ObservationId::new(),
                        meta: RecordMeta {
                            updated: w.tick(),
                            ..meta
                        },
                        session_id: session.id,
                        project: project.clone(),
                        kind: ObservationKind::Note,
                        tool_name: None,
                        title: title.into(),
                        input: String::new(),
                        response: String::new(),
                        files: Vec::new(),
                        metadata: serde_json::json!({}),
                        tags: Vec::new(),
                        created_at: UnixMillis::now(),
                    };
                    notes.push((*o.id.as_uuid(), o.meta.updated));
                    w.insert_observation(&o)?;
                }
                Ok(())
            })
            .expect("records");
        prepare(&mut store, &model(), &[0.0; 8]).expect("prepare");
        (store, notes)
    }

    fn model() -> IndexModel {
        IndexModel {
            fingerprint: "a".into(),
            dimension: 8,
        }
    }

    #[test]
    fn only_a_well_formed_vector_of_this_model_and_version_is_stored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut store, notes) = store_with_notes(dir.path(), ["one", "two"]);
        let (one, v1) = notes[0];
        let (two, v2) = notes[1];
        let mut truncated = WireEmbedding::encode(two, v2, "a", &unit(0.2, 8));
        truncated.data.truncate(12);
        let pulled = vec![
            WireEmbedding::encode(one, v1, "b", &unit(0.1, 8)),
            WireEmbedding::encode(one, Hlc::from_i64(v1.as_i64() - 1), "a", &unit(0.1, 8)),
            WireEmbedding::encode(one, v1, "a", &unit(0.1, 4)),
            truncated,
        ];
        let done = store
            .write(|w| store_pulled(w.tx(), &model(), &[0.0; 8], &pulled))
            .expect("stored");
        assert_eq!(done.stored, 0);
        assert_eq!(
            done.other_model, 2,
            "another fingerprint, another dimension"
        );
        assert_eq!(done.stale, 1, "an older version's vector");
        assert_eq!(done.refused.len(), 1);
        assert!(
            done.refused[0].contains("truncated or corrupt"),
            "{:?}",
            done.refused
        );
        assert_eq!(queued(store.conn()).expect("count"), 2, "both still wait");

        let good = vec![WireEmbedding::encode(one, v1, "a", &unit(0.1, 8))];
        let done = store
            .write(|w| store_pulled(w.tx(), &model(), &[0.0; 8], &good))
            .expect("stored");
        assert_eq!(done.stored, 1);
        assert_eq!(stored(store.conn()).expect("count"), 1);
        assert_eq!(
            queued(store.conn()).expect("count"),
            1,
            "only the other waits"
        );
        assert_eq!(
            waiting(store.conn()).expect("count"),
            0,
            "a pulled vector is not pushed back"
        );
    }

    #[test]
    fn a_vector_made_here_is_pushed_unless_its_text_has_a_private_span() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut store, notes) = store_with_notes(
            dir.path(),
            ["public note", "the <private>vault 7731</private> key"],
        );
        // (A secret in the text is held back the same way: `leaves_as_is`.)
        let work = next_work(store.conn(), 10, UnixMillis(0)).expect("work");
        let made: Vec<Vec<f32>> = work.iter().map(|_| unit(0.3, 8)).collect();
        complete(&mut store, &work, &made).expect("complete");
        assert_eq!(waiting(store.conn()).expect("count"), 2);
        let out = outgoing(store.conn(), 10).expect("outgoing");
        let sent: Vec<&WireEmbedding> = out.iter().filter_map(|o| o.embedding.as_ref()).collect();
        assert_eq!(sent.len(), 1, "{out:?}");
        assert_eq!(sent[0].id, notes[0].0);
        assert_eq!(sent[0].updated, notes[0].1);
        // Kept in int8: the same direction, a rounding away.
        let back = sent[0].decode().expect("valid");
        assert!(vectors::dot(&back, &unit(0.3, 8)) > 0.999, "{back:?}");
        store.write(|w| sent_entries(w.tx(), &out)).expect("sent");
        assert_eq!(waiting(store.conn()).expect("count"), 0);
    }

    #[test]
    fn vectors_made_before_they_travelled_are_put_in_the_outbox_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut store, _) = store_with_notes(dir.path(), ["one", "two"]);
        // The fresh store's own flag is spent at its first sync, before any vector.
        let spent = store.write(|w| backfill_outbox(w.tx())).expect("backfill");
        assert_eq!(spent, 0);
        let work = next_work(store.conn(), 10, UnixMillis(0)).expect("work");
        let made: Vec<Vec<f32>> = work.iter().map(|_| unit(0.3, 8)).collect();
        complete(&mut store, &work, &made).expect("complete");
        // As a store made before version 8 holds them: stored, never in the outbox,
        // and the upgrade's flag set.
        store
            .write(|w| {
                w.tx().execute("DELETE FROM vector_outbox", [])?;
                w.tx()
                    .execute_batch(include_str!("../migrations/0009_vector_backfill.sql"))?;
                Ok(())
            })
            .expect("as before version 8");
        assert_eq!(waiting(store.conn()).expect("count"), 0);
        let added = store.write(|w| backfill_outbox(w.tx())).expect("backfill");
        assert_eq!(added, 2);
        assert_eq!(outgoing(store.conn(), 10).expect("outgoing").len(), 2);
        let again = store.write(|w| backfill_outbox(w.tx())).expect("backfill");
        assert_eq!(again, 0, "once only");
    }

    fn sent_entries(tx: &Connection, out: &[Outgoing]) -> Result<(), StoreError> {
        super::sent(tx, out)
    }

    #[test]
    fn text_with_a_secret_or_a_private_span_keeps_its_vector_home() {
        assert!(leaves_as_is("cargo test -p auth"));
        assert!(!leaves_as_is("the <private>vault</private> key"));
        assert!(!leaves_as_is(
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        ));
    }
}
