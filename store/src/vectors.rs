//! Record vectors for semantic search: sqlite-vec `vec0` tables beside the records,
//! the queue that keeps them in step (see `store/migrations/0002_vectors.sql`), and
//! nearest-neighbour lookups.
//!
//! The vec0 tables are created for one model at a time (their dimension is the
//! model's) and the model's fingerprint is kept in `meta`: another model means the
//! old vectors are meaningless, so they are dropped and every record queued again.
//! Nothing here embeds text; the edge's `semantic` module does, outside any write transaction.

use super::{Store, StoreError, gist};
pub use crate::source::Source;
use rusqlite::{Connection, OptionalExtension, params};
use solaria_shared::UnixMillis;
use solaria_shared::embedding::{VectorEncoding, unit_again};
use std::collections::HashSet;

/// Registers sqlite-vec with every SQLite connection this process opens from now on.
pub fn register_extension() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's extension entry point, compiled
        // into this binary against the same bundled SQLite (SQLITE_CORE). SQLite's
        // auto-extension hook calls it as `int (*)(sqlite3*, char**, const
        // sqlite3_api_routines*)`, which is its real signature: the crate merely
        // declares it without arguments, hence the transmute of the pointer.
        #[allow(unsafe_code)]
        unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            let entry: EntryPoint = std::mem::transmute::<*const (), EntryPoint>(
                sqlite_vec::sqlite3_vec_init as *const (),
            );
            rusqlite::ffi::sqlite3_auto_extension(Some(entry));
        }
    });
}

/// The shape of the vec0 tables; another shape means they are rebuilt.
/// 4: float vectors in a plain table for exact similarity, and in vec0 the sign
/// bits of their offset from the model's centre for a fast first pass.
const LAYOUT: &str = "4";

/// The model the stored vectors were made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexModel {
    pub fingerprint: String,
    pub dimension: usize,
}

/// The model of the current vectors, if any were ever made.
pub fn index_model(conn: &Connection) -> Result<Option<IndexModel>, StoreError> {
    let get = |key: &str| -> Result<Option<String>, StoreError> {
        Ok(conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?)
    };
    let (Some(fingerprint), Some(dimension)) = (get("vector_model")?, get("vector_dimension")?)
    else {
        return Ok(None);
    };
    if get("vector_layout")?.as_deref() != Some(LAYOUT) {
        // Tables of an older shape: as good as none (the next pass rebuilds them).
        return Ok(None);
    }
    Ok(dimension.parse().ok().map(|dimension| IndexModel {
        fingerprint,
        dimension,
    }))
}

/// Makes the vector tables fit `model`: creates them the first time; drops and
/// recreates them (queueing every record again) when the model changed. Returns
/// whether the old vectors were discarded.
///
/// `centre` is the model's typical vector: sentence models put every text in one
/// narrow cone (multilingual-e5 rates unrelated texts 0.75 alike), so the sign bits
/// of a raw vector are nearly the same for all; the bits of its offset from the
/// centre are what tell texts apart in the first pass of [`nearest`].
pub fn prepare(store: &mut Store, model: &IndexModel, centre: &[f32]) -> Result<bool, StoreError> {
    let current = index_model(store.conn())?;
    if current.as_ref() == Some(model) {
        add_missing_tables(store, model)?;
        return Ok(false);
    }
    let centre_json = serde_json::to_string(centre).unwrap_or_else(|_| "[]".into());
    store.write(|w| {
        let tx = w.tx();
        tx.execute("DELETE FROM vector_queue", [])?;
        for source in Source::ALL {
            tx.execute_batch(&format!(
                "DROP TABLE IF EXISTS {table};
                 DROP TABLE IF EXISTS {floats};",
                table = source.vector_table(),
                floats = source.float_table(),
            ))?;
            create_tables(tx, source, model)?;
            tx.execute(
                &format!(
                    "INSERT INTO vector_queue (source, row) SELECT ?1, rowid FROM {} WHERE {}",
                    source.base(),
                    source.embedded_sql()
                ),
                [source.code()],
            )?;
        }
        for (key, value) in [
            ("vector_model", model.fingerprint.clone()),
            ("vector_dimension", model.dimension.to_string()),
            ("vector_layout", LAYOUT.to_string()),
            ("vector_centre", centre_json.clone()),
            ("vector_text_recipe", gist::RECIPE.to_string()),
        ] {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )?;
        }
        bump_generation(tx)?;
        Ok(())
    })?;
    Ok(current.is_some())
}

/// Once after the embedded text changed ([`gist::RECIPE`]): queues again the
/// observations that have a vector and are within the embeddings' retention
/// (`embed_since`) — re-queuing an older one would drop its vector, not renew it.
/// Returns how many were queued.
pub fn requeue_for_recipe(store: &mut Store, embed_since: UnixMillis) -> Result<usize, StoreError> {
    let recipe: Option<String> = store
        .conn()
        .prepare_cached("SELECT value FROM meta WHERE key = 'vector_text_recipe'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    if recipe.as_deref() == Some(gist::RECIPE.to_string().as_str())
        || index_model(store.conn())?.is_none()
    {
        return Ok(0);
    }
    store.write(|w| {
        let tx = w.tx();
        let queued = tx.execute(
            &format!(
                "INSERT INTO vector_queue (source, row)
                 SELECT ?1, o.rowid FROM observations o
                 JOIN {floats} e ON e.row = o.rowid
                 WHERE o.deleted = 0 AND o.created_at >= ?2
                 ON CONFLICT DO NOTHING",
                floats = Source::Observations.float_table()
            ),
            params![Source::Observations.code(), embed_since.0],
        )?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('vector_text_recipe', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [gist::RECIPE.to_string()],
        )?;
        Ok(queued)
    })
}

/// Creates `source`'s vector tables for `model` if they do not exist.
fn create_tables(tx: &Connection, source: Source, model: &IndexModel) -> Result<(), StoreError> {
    tx.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(coarse bit[{dim}]);
         CREATE TABLE IF NOT EXISTS {floats} (
             row       INTEGER PRIMARY KEY,
             embedding BLOB NOT NULL
         ) STRICT;",
        table = source.vector_table(),
        floats = source.float_table(),
        dim = model.dimension
    ))?;
    Ok(())
}

/// A store whose vectors predate a source (knowledge, from version 6) gets that
/// source's tables for the same model; its records are already queued (the
/// migration queued them), so the next pass embeds only them.
pub fn add_missing_tables(store: &mut Store, model: &IndexModel) -> Result<(), StoreError> {
    let mut missing = Vec::new();
    for source in Source::ALL {
        let exists: bool = store
            .conn()
            .prepare_cached("SELECT count(*) > 0 FROM sqlite_master WHERE name = ?1")?
            .query_row([source.float_table()], |r| r.get(0))?;
        if !exists {
            missing.push(source);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    store.write(|w| {
        for source in missing {
            create_tables(w.tx(), source, model)?;
        }
        bump_generation(w.tx())?;
        Ok(())
    })
}

/// Queues again every live record that has no vector (e.g. one older than
/// `[retention] embeddings_days`, dequeued without a vector), for `solaria embed --all`.
pub fn queue_missing(store: &mut Store) -> Result<usize, StoreError> {
    if index_model(store.conn())?.is_none() {
        return Ok(0);
    }
    store.write(|w| queue_missing_in(w.tx()))
}

fn queue_missing_in(tx: &Connection) -> Result<usize, StoreError> {
    let mut queued = 0;
    for source in Source::ALL {
        queued += tx.execute(
            &format!(
                "INSERT OR IGNORE INTO vector_queue (source, row)
                 SELECT ?1, rowid FROM {} WHERE {}
                 AND rowid NOT IN (SELECT row FROM {})",
                source.base(),
                source.embedded_sql(),
                source.float_table()
            ),
            [source.code()],
        )?;
    }
    Ok(queued)
}

/// Which records get a vector made. A vector, once made, stays as long as its
/// record whatever the bound (retention decides for both, in one place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedBound {
    /// Every record kept: what words find, meaning finds too (the default).
    Every,
    /// Only records created within this many days (`[retention] embeddings_days`).
    WithinDays(i64),
}

impl EmbedBound {
    /// Records created before this get no vector made.
    pub fn since(self, now: UnixMillis) -> UnixMillis {
        match self {
            EmbedBound::Every => UnixMillis(i64::MIN),
            EmbedBound::WithinDays(days) => now.minus_days(days.max(0)),
        }
    }

    /// Whether this bound reaches records `other` left without a vector.
    fn reaches_past(self, other: EmbedBound) -> bool {
        match (self, other) {
            (EmbedBound::Every, EmbedBound::WithinDays(_)) => true,
            (EmbedBound::WithinDays(a), EmbedBound::WithinDays(b)) => a.max(0) > b.max(0),
            (_, EmbedBound::Every) => false,
        }
    }

    fn stored(self) -> String {
        match self {
            EmbedBound::Every => "every".to_string(),
            EmbedBound::WithinDays(days) => days.max(0).to_string(),
        }
    }

    fn parse(value: &str) -> Option<EmbedBound> {
        match value {
            "every" => Some(EmbedBound::Every),
            days => days.parse().ok().map(EmbedBound::WithinDays),
        }
    }
}

/// The widest bound any embedding pass applied to this store; a store from before
/// it was recorded applied the old default, 30 days.
const APPLIED_BOUND_KEY: &str = "vector_embed_bound";
const BOUND_BEFORE_IT_WAS_RECORDED: EmbedBound = EmbedBound::WithinDays(30);

/// When `bound` reaches past every bound applied before (an upgrade from the
/// 30-day default, a longer `embeddings_days`, `solaria embed --all`): queues the
/// records those left without a vector, once, and records `bound`. How many were
/// queued.
pub fn widen_bound(store: &mut Store, bound: EmbedBound) -> Result<usize, StoreError> {
    if index_model(store.conn())?.is_none() {
        // No vectors yet: the first model's pass queues every record itself.
        return Ok(0);
    }
    let applied = store
        .conn()
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([APPLIED_BOUND_KEY], |r| r.get::<_, String>(0))
        .optional()?
        .and_then(|v| EmbedBound::parse(&v))
        .unwrap_or(BOUND_BEFORE_IT_WAS_RECORDED);
    if !bound.reaches_past(applied) {
        return Ok(0);
    }
    store.write(|w| {
        let tx = w.tx();
        let queued = queue_missing_in(tx)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![APPLIED_BOUND_KEY, bound.stored()],
        )?;
        Ok(queued)
    })
}

/// The model's centre stored by [`prepare`] (`None` before, or if damaged).
pub fn centre(conn: &Connection) -> Result<Option<Vec<f32>>, StoreError> {
    let text: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE key = 'vector_centre'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

/// The float32 blob whose sign bits are a vector's first-pass key: its offset from
/// the centre (`vec_quantize_binary` of this goes in the `coarse` column).
pub fn coarse_blob(v: &[f32], centre: &[f32]) -> Vec<u8> {
    v.iter()
        .enumerate()
        .flat_map(|(i, x)| (x - centre.get(i).copied().unwrap_or(0.0)).to_le_bytes())
        .collect()
}

/// Records waiting for their vector to be made, replaced or removed.
pub fn queued(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM vector_queue")?
        .query_row([], |r| r.get(0))?)
}

/// Vectors stored (0 when no model was ever used).
pub fn stored(conn: &Connection) -> Result<i64, StoreError> {
    if index_model(conn)?.is_none() {
        return Ok(0);
    }
    let mut total = 0;
    for source in Source::ALL {
        total += conn
            .prepare_cached(&format!("SELECT count(*) FROM {}", source.float_table()))?
            .query_row([], |r| r.get::<_, i64>(0))?;
    }
    Ok(total)
}

/// One queued record: what to embed, or `None` when its vector must only go away.
#[derive(Debug, Clone)]
pub struct Work {
    pub source: Source,
    pub row: i64,
    /// The record's stamp when read: a newer one means the text changed meanwhile.
    updated: Option<i64>,
    pub text: Option<String>,
}

/// The next `limit` queued records, newest first (the ones a user is most likely
/// to look for). Records created before `embed_since` are due for removal only.
pub fn next_work(
    conn: &Connection,
    limit: usize,
    embed_since: UnixMillis,
) -> Result<Vec<Work>, StoreError> {
    let entries: Vec<(i64, i64)> = conn
        .prepare_cached("SELECT source, row FROM vector_queue ORDER BY row DESC LIMIT ?1")?
        .query_map([limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut work = Vec::with_capacity(entries.len());
    for (code, row) in entries {
        let Some(source) = Source::from_code(code) else {
            continue;
        };
        let record: Option<(i64, i64, i64, [String; 3])> = conn
            .prepare_cached(&format!(
                "SELECT updated, deleted, created_at, {} FROM {} WHERE rowid = ?1",
                gist::parts_sql(source),
                source.base()
            ))?
            .query_row([row], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    [r.get(3)?, r.get(4)?, r.get(5)?],
                ))
            })
            .optional()?;
        work.push(match record {
            Some((updated, 0, created, [a, b, c])) if created >= embed_since.0 => Work {
                source,
                row,
                updated: Some(updated),
                text: Some(gist::text(source, &a, &b, &c)),
            },
            Some((updated, ..)) => Work {
                source,
                row,
                updated: Some(updated),
                text: None,
            },
            None => Work {
                source,
                row,
                updated: None,
                text: None,
            },
        });
    }
    Ok(work)
}

/// Stores the vectors made for `work` (`vectors[i]` for the i-th item that has
/// text) and takes the items off the queue. An item whose record changed since
/// it was read stays queued, to be embedded again from its new text.
pub fn complete(
    store: &mut Store,
    work: &[Work],
    vectors: &[Vec<f32>],
) -> Result<usize, StoreError> {
    let Some(model) = index_model(store.conn())? else {
        return Ok(0);
    };
    let centre = centre(store.conn())?.unwrap_or_default();
    store.write(|w| {
        let tx = w.tx();
        let mut vectors = vectors.iter();
        let mut done = 0;
        for item in work {
            let vector = if item.text.is_some() {
                vectors.next()
            } else {
                None
            };
            let now: Option<i64> = tx
                .prepare_cached(&format!(
                    "SELECT updated FROM {} WHERE rowid = ?1",
                    item.source.base()
                ))?
                .query_row([item.row], |r| r.get(0))
                .optional()?;
            if now != item.updated {
                continue;
            }
            remove(tx, item.source, item.row)?;
            if let Some(v) = vector.filter(|v| v.len() == model.dimension) {
                tx.prepare_cached(&format!(
                    "INSERT INTO {} (rowid, coarse) VALUES (?1, vec_quantize_binary(?2))",
                    item.source.vector_table()
                ))?
                .execute(params![item.row, coarse_blob(v, &centre)])?;
                tx.prepare_cached(&format!(
                    "INSERT INTO {} (row, embedding) VALUES (?1, ?2)",
                    item.source.float_table()
                ))?
                .execute(params![item.row, blob_of(v)])?;
            }
            if vector.is_some_and(|v| v.len() == model.dimension) {
                // Made here: the sync pushes it (`vectors_wire::outgoing`).
                tx.prepare_cached(
                    "INSERT INTO vector_outbox (source, row) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                )?
                .execute(params![item.source.code(), item.row])?;
            }
            tx.prepare_cached("DELETE FROM vector_queue WHERE source = ?1 AND row = ?2")?
                .execute(params![item.source.code(), item.row])?;
            done += 1;
        }
        if done > 0 {
            bump_generation(tx)?;
        }
        Ok(done)
    })
}

/// Removes at once the vectors of records that are gone or erased (a forget, a
/// prune), so that no embedding outlives its record even without a daemon. Needs
/// no model; queued records still to be embedded stay queued.
pub fn drop_removed(store: &mut Store) -> Result<usize, StoreError> {
    if index_model(store.conn())?.is_none() {
        return Ok(0);
    }
    store.write(|w| {
        let tx = w.tx();
        let mut removed = 0;
        for source in Source::ALL {
            let rows: Vec<i64> = tx
                .prepare_cached(&format!(
                    "SELECT q.row FROM vector_queue q WHERE q.source = ?1 AND NOT EXISTS
                     (SELECT 1 FROM {} b WHERE b.rowid = q.row AND b.deleted = 0)",
                    source.base()
                ))?
                .query_map([source.code()], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let mut dequeue =
                tx.prepare_cached("DELETE FROM vector_queue WHERE source = ?1 AND row = ?2")?;
            for row in rows {
                remove(tx, source, row)?;
                dequeue.execute(params![source.code(), row])?;
                removed += 1;
            }
        }
        if removed > 0 {
            bump_generation(tx)?;
        }
        Ok(removed)
    })
}

/// How many candidates the bit-vector pass hands to exact rescoring, per
/// neighbour wanted.
const COARSE_FACTOR: usize = 4;
/// At least this many candidates are rescored.
const COARSE_MIN: usize = 200;

/// The `k` records of `source` whose vectors are nearest `query`, with their
/// cosine similarity (1 = same direction), best first; only rows of `among` when
/// it is given (a filter applied before the `k` are counted).
///
/// Two passes: the Hamming distance between sign bits (48 bytes a record for 384
/// dimensions, kept in vec0 and held in memory by [`first_pass_keys`]) picks a
/// few hundred candidates, and only those are rescored exactly from their float
/// vectors (B-tree point lookups). Scanning every float vector instead costs
/// ~70 ms at 100k (150 MB of blobs).
pub fn nearest(
    conn: &Connection,
    source: Source,
    query: &[f32],
    k: usize,
    among: Option<&HashSet<i64>>,
) -> Result<Vec<(i64, f64)>, StoreError> {
    match index_model(conn)? {
        Some(m) if m.dimension == query.len() => {}
        _ => return Ok(Vec::new()),
    }
    let coarse_k = (k * COARSE_FACTOR).max(COARSE_MIN);
    let centre = centre(conn)?.unwrap_or_default();
    let key: Vec<u8> = conn
        .prepare_cached("SELECT vec_quantize_binary(?1)")?
        .query_row([coarse_blob(query, &centre)], |r| r.get(0))?;
    let candidates = match (first_pass_keys(conn, source)?, among) {
        (Some(keys), _) => keys.nearest(&key, coarse_k, among),
        // An in-memory database (tests): every row that may be returned, or
        // vec0's own search.
        (None, Some(rows)) => rows.iter().copied().collect(),
        (None, None) => conn
            .prepare_cached(&format!(
                "SELECT rowid FROM {} WHERE coarse MATCH ?1 AND k = ?2",
                source.vector_table()
            ))?
            .query_map(params![key, coarse_k as i64], |r| r.get(0))?
            .collect::<Result<_, _>>()?,
    };
    let mut scored = Vec::with_capacity(candidates.len());
    for row in candidates {
        if let Some(v) = stored_vector(conn, source, row, query.len())? {
            scored.push((row, dot(&v, query)));
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.truncate(k);
    Ok(scored)
}

/// Counts every change to the vectors, so that processes holding first-pass keys
/// in memory (see [`first_pass_keys`]) know to reload them.
pub(super) fn bump_generation(tx: &Connection) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO meta (key, value) VALUES ('vector_generation', '1')
         ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
    )?
    .execute([])?;
    Ok(())
}

/// One table's first-pass keys (sign bits), held in memory.
#[derive(Debug, Clone)]
struct Keys {
    generation: i64,
    rows: Vec<i64>,
    /// `width` bytes per row, in `rows` order.
    bits: Vec<u8>,
    width: usize,
}

impl Keys {
    /// The `k` rows (of `among`, when given) whose keys are nearest `key` in
    /// Hamming distance (unordered).
    fn nearest(&self, key: &[u8], k: usize, among: Option<&HashSet<i64>>) -> Vec<i64> {
        if self.width == 0 || key.len() != self.width {
            return Vec::new();
        }
        let mut scored: Vec<(u32, i64)> = self
            .bits
            .chunks_exact(self.width)
            .zip(&self.rows)
            .filter(|(_, row)| among.is_none_or(|rows| rows.contains(row)))
            .map(|(bits, &row)| {
                let d = bits
                    .iter()
                    .zip(key)
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum::<u32>();
                (d, row)
            })
            .collect();
        if scored.len() > k {
            scored.select_nth_unstable(k);
            scored.truncate(k);
        }
        scored.into_iter().map(|(_, row)| row).collect()
    }
}

/// The first-pass keys of `source` in the store `conn` is open on, loaded from its
/// vec0 table once and kept while the vectors do not change (their generation in
/// `meta`): a Hamming scan of 100k keys in memory takes well under a millisecond,
/// where vec0's own k-nearest search costs in proportion to k (31 ms for k = 400
/// at 100k). `None` for an in-memory database.
fn first_pass_keys(
    conn: &Connection,
    source: Source,
) -> Result<Option<std::sync::Arc<Keys>>, StoreError> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Cache = Mutex<HashMap<(String, Source), Arc<Keys>>>;
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let Some(path) = conn.path().filter(|p| !p.is_empty()).map(str::to_string) else {
        return Ok(None);
    };
    let generation: i64 = conn
        .prepare_cached("SELECT value FROM meta WHERE key = 'vector_generation'")?
        .query_row([], |r| r.get::<_, String>(0))
        .optional()?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let slot = (path, source);
    if let Some(keys) = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&slot)
        .filter(|k| k.generation == generation)
    {
        return Ok(Some(Arc::clone(keys)));
    }
    let mut rows = Vec::new();
    let mut bits = Vec::new();
    let mut width = 0;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid, coarse FROM {}",
        source.vector_table()
    ))?;
    let mut cursor = stmt.query([])?;
    while let Some(r) = cursor.next()? {
        let row: i64 = r.get(0)?;
        let key = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        if width == 0 {
            width = key.len();
        }
        if key.len() == width {
            rows.push(row);
            bits.extend_from_slice(key);
        }
    }
    let keys = Arc::new(Keys {
        generation,
        rows,
        bits,
        width,
    });
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(slot, Arc::clone(&keys));
    Ok(Some(keys))
}

/// The stored vector of one record, if it has one of `dimension` values (the
/// model's: a vector of another size is as good as none).
pub fn stored_vector(
    conn: &Connection,
    source: Source,
    row: i64,
    dimension: usize,
) -> Result<Option<Vec<f32>>, StoreError> {
    let blob: Option<Vec<u8>> = conn
        .prepare_cached(&format!(
            "SELECT embedding FROM {} WHERE row = ?1",
            source.float_table()
        ))?
        .query_row([row], |r| r.get(0))
        .optional()?;
    Ok(blob.and_then(|b| from_blob(&b, dimension)))
}

/// How vectors are kept: int8, a quarter of float32's bytes (1.5 KB → 388 bytes
/// at 384 dimensions), with no measured cost to retrieval
/// (docs/experiments/2026-11-24-int8-vectors.md). Vectors kept in float32 by
/// earlier versions are read as they are: a blob's length says its encoding.
const STORED: VectorEncoding = VectorEncoding::I8;

/// A vector as it is kept ([`STORED`]).
pub fn blob_of(v: &[f32]) -> Vec<u8> {
    STORED.bytes_of(v)
}

/// A kept vector of `dimension` values, in whichever encoding its length says.
fn from_blob(blob: &[u8], dimension: usize) -> Option<Vec<f32>> {
    let encoding = VectorEncoding::of_length(blob.len(), dimension)?;
    let values = encoding.raw_values(blob);
    Some(match encoding {
        VectorEncoding::F32 => values,
        VectorEncoding::I8 => unit_again(values),
    })
}

/// The cosine similarity of two unit vectors (their dot product); 0 when their
/// dimensions differ (a vector of another model).
pub fn dot(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum()
}

/// The cosine similarity of `a` and `b` measured from `centre`, the model's typical
/// vector: about 0 for texts with nothing in common, whatever the model (raw cosines
/// of unrelated texts are about 0.1 with all-MiniLM-L6-v2 and 0.75 with
/// multilingual-e5), so one threshold can serve every model.
pub fn centred_cosine(a: &[f32], b: &[f32], centre: &[f32]) -> f64 {
    if a.len() != b.len() || centre.len() != a.len() {
        return dot(a, b);
    }
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for ((x, y), c) in a.iter().zip(b).zip(centre) {
        let (x, y) = (f64::from(x - c), f64::from(y - c));
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa <= f64::EPSILON || bb <= f64::EPSILON {
        return 0.0;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

/// Deletes one record's vector (both its tables); returns how many it had (0 or 1).
pub(super) fn remove(tx: &Connection, source: Source, row: i64) -> Result<usize, StoreError> {
    tx.prepare_cached(&format!(
        "DELETE FROM {} WHERE rowid = ?1",
        source.vector_table()
    ))?
    .execute([row])?;
    Ok(tx
        .prepare_cached(&format!(
            "DELETE FROM {} WHERE row = ?1",
            source.float_table()
        ))?
        .execute([row])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    #[test]
    fn vectors_are_kept_in_int8_and_float32_ones_kept_before_still_read() {
        let v: Vec<f32> = (0..384).map(|i| ((i as f32) * 0.37).sin()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let v: Vec<f32> = v.into_iter().map(|x| x / n).collect();
        let kept = blob_of(&v);
        assert_eq!(kept.len(), 4 + 384, "a quarter of float32's 1,536 bytes");
        let back = from_blob(&kept, 384).expect("reads");
        assert!(dot(&back, &v) > 0.9999, "{}", dot(&back, &v));
        assert!((dot(&back, &back) - 1.0).abs() < 1e-5, "unit length again");
        let old: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(from_blob(&old, 384), Some(v.clone()), "float32, as it was");
        assert_eq!(from_blob(&kept, 256), None, "another model's size");
        assert_eq!(from_blob(&kept[..100], 384), None, "damaged");
    }

    fn unit(seed: f32, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim).map(|i| ((i as f32 + 1.0) * seed).sin()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn vectors_round_trip_and_a_new_model_starts_over() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("opens");
        let model = IndexModel {
            fingerprint: "a".into(),
            dimension: 8,
        };
        let centre = vec![0.0; 8];
        assert!(!prepare(&mut store, &model, &centre).expect("prepare"));
        assert!(!prepare(&mut store, &model, &centre).expect("idempotent"));
        store
            .write(|w| {
                w.tx()
                    .execute_batch("INSERT INTO vector_queue VALUES (0, 1), (0, 2)")?;
                Ok(())
            })
            .expect("queue");
        // Rows 1 and 2 do not exist: completing them only removes them from the queue.
        let work = next_work(store.conn(), 10, UnixMillis(0)).expect("work");
        assert_eq!(work.len(), 2);
        assert!(work.iter().all(|w| w.text.is_none()));
        assert_eq!(complete(&mut store, &work, &[]).expect("complete"), 2);
        assert_eq!(queued(store.conn()).expect("count"), 0);

        store
            .write(|w| {
                for (row, seed) in [(7i64, 0.3f32), (8, 0.9)] {
                    w.tx().execute(
                        "INSERT INTO observation_vectors (rowid, coarse)
                         VALUES (?1, vec_quantize_binary(?2))",
                        params![row, coarse_blob(&unit(seed, 8), &[])],
                    )?;
                    w.tx().execute(
                        "INSERT INTO observation_embeddings (row, embedding) VALUES (?1, ?2)",
                        params![row, blob_of(&unit(seed, 8))],
                    )?;
                }
                Ok(())
            })
            .expect("insert");
        let near =
            nearest(store.conn(), Source::Observations, &unit(0.9, 8), 2, None).expect("knn");
        assert_eq!(near[0].0, 8);
        assert!((near[0].1 - 1.0).abs() < 1e-3, "kept in int8: {near:?}");
        assert_eq!(stored(store.conn()).expect("count"), 2);

        let other = IndexModel {
            fingerprint: "b".into(),
            dimension: 4,
        };
        assert!(prepare(&mut store, &other, &[0.0; 4]).expect("rebuild"));
        assert_eq!(stored(store.conn()).expect("count"), 0);
        assert!(
            nearest(store.conn(), Source::Observations, &unit(0.9, 8), 2, None)
                .expect("knn")
                .is_empty(),
            "a query of the old dimension finds nothing"
        );
    }

    /// A store of model "a" (8 dimensions) holding one note per `(days ago, response)`,
    /// in that order; and the time they were made against.
    fn store_with_notes(notes: &[(i64, &str)]) -> (tempfile::TempDir, Store, UnixMillis) {
        use solaria_shared::{Observation, ObservationId, ObservationKind, RecordMeta};
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("opens");
        let now = UnixMillis::now();
        store
            .write(|w| {
                let session = crate::fixtures::session(w, now.minus_days(40))?;
                let (meta, project) = (session.meta, session.project.clone());
                for &(days, response) in notes {
                    let updated = w.tick();
                    w.insert_observation(&Observation {
                        id: ObservationId::new(),
                        meta: RecordMeta { updated, ..meta },
                        session_id: session.id,
                        project: project.clone(),
                        kind: ObservationKind::Note,
                        tool_name: None,
                        title: format!("note from {days} days ago"),
                        input: String::new(),
                        response: response.into(),
                        files: Vec::new(),
                        metadata: serde_json::json!({}),
                        tags: Vec::new(),
                        created_at: now.minus_days(days),
                    })?;
                }
                Ok(())
            })
            .expect("records");
        let model = IndexModel {
            fingerprint: "a".into(),
            dimension: 8,
        };
        prepare(&mut store, &model, &[0.0; 8]).expect("prepare");
        (dir, store, now)
    }

    #[test]
    fn a_new_text_recipe_embeds_again_the_recent_records_and_only_once() {
        let long = "test a ... ok\n".repeat(100);
        let (_dir, mut store, now) =
            store_with_notes(&[(1, long.as_str()), (1, "short"), (40, long.as_str())]);
        let since = now.minus_days(30);
        assert_eq!(
            requeue_for_recipe(&mut store, since).expect("requeue"),
            0,
            "new tables are made with the current recipe"
        );
        let work = next_work(store.conn(), 10, UnixMillis(i64::MIN)).expect("work");
        let vectors: Vec<Vec<f32>> = work.iter().map(|_| unit(0.5, 8)).collect();
        complete(&mut store, &work, &vectors).expect("complete");
        assert_eq!(
            (
                stored(store.conn()).expect("n"),
                queued(store.conn()).expect("q")
            ),
            (3, 0)
        );

        // A store whose vectors were made by the previous recipe.
        store
            .write(|w| {
                w.tx().execute(
                    "UPDATE meta SET value = '1' WHERE key = 'vector_text_recipe'",
                    [],
                )?;
                Ok(())
            })
            .expect("old recipe");
        assert_eq!(requeue_for_recipe(&mut store, since).expect("requeue"), 2);
        let work = next_work(store.conn(), 10, since).expect("work");
        assert_eq!(work.len(), 2);
        assert!(
            work.iter().any(|w| w
                .text
                .as_deref()
                .is_some_and(|t| t.ends_with("test a ... ok"))),
            "{work:?}"
        );
        assert_eq!(requeue_for_recipe(&mut store, since).expect("again"), 0);
        // The 40-day-old record kept its vector: it was not queued (that would drop it).
        complete(&mut store, &work, &[unit(0.7, 8), unit(0.8, 8)]).expect("complete");
        assert_eq!(stored(store.conn()).expect("n"), 3);
    }

    #[test]
    fn a_vector_stays_with_its_record_and_goes_with_it() {
        let (_dir, mut store, now) = store_with_notes(&[(40, ""), (1, "")]);
        // Embed everything, whatever its age (as `solaria embed --all` does).
        let work = next_work(store.conn(), 10, UnixMillis(i64::MIN)).expect("work");
        let vectors: Vec<Vec<f32>> = work
            .iter()
            .filter(|w| w.text.is_some())
            .map(|_| unit(0.5, 8))
            .collect();
        assert_eq!(vectors.len(), 2);
        complete(&mut store, &work, &vectors).expect("complete");
        assert_eq!(stored(store.conn()).expect("count"), 2);

        use crate::retention::{self, Retention, RetentionMode};
        let mut r = Retention {
            mode: RetentionMode::Off,
            observations_days: 30,
            summaries_days: 365,
        };
        retention::prune(&mut store, &r, now).expect("prune");
        assert_eq!(
            stored(store.conn()).expect("count"),
            2,
            "kept records keep their vectors, whatever their age"
        );
        r.mode = RetentionMode::Local;
        let pruned = retention::prune(&mut store, &r, now).expect("prune");
        assert_eq!(pruned.counts.observations, 1, "the 40-day-old note goes");
        assert_eq!(
            stored(store.conn()).expect("count"),
            1,
            "and its vector with it"
        );
        let near =
            nearest(store.conn(), Source::Observations, &unit(0.5, 8), 5, None).expect("knn");
        assert_eq!(near.len(), 1, "the recent note is still found by meaning");
    }
}
