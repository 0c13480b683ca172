//! Search by meaning on the central service at the spec's figure (§8.1, "vector
//! search < 150 ms"): one account holding `SOLARIA_BENCH_VECTORS` records with
//! their vectors (default 1,000,000; 384 dimensions, the size of the models the
//! edges ship), preloaded with SQL inside PostgreSQL, against the real server over
//! TLS on loopback. It measures:
//!
//! * **building the HNSW index** at the service's start (what the first start after
//!   adding pgvector costs a server that already holds the vectors);
//! * **remote search by meaning and hybrid** (`POST /memory/search`, limit 20),
//!   each request interleaved with an authenticated request that reads nothing
//!   (`GET /memory/machines`), its baseline in the same run;
//! * **the index's recall@10 against exact search**: the statement the service
//!   runs (`hnsw.ef_search` = `EF_SEARCH`) beside the same one with the index
//!   forbidden, whose time is the search without an index;
//! * **a 1,000-record push with its vectors** beside the same push without them.
//!
//! The vectors are clustered like a history ([`Space`]: topics, subjects, records)
//! and each question is about one subject; the index is built as the service builds
//! it (`HNSW_M`, `HNSW_EF_CONSTRUCTION`). The table also holds other accounts'
//! observations, without vectors, up to `SOLARIA_BENCH_TABLE_ROWS` (default ten
//! times the account's: the spec's 1M in one account, 10M in the table).
//!
//! ```sh
//! cargo bench -p solaria-tests --bench meaning
//! SOLARIA_BENCH_VECTORS=100000 cargo bench -p solaria-tests --bench meaning
//! ```

use solaria_central::storage::{EF_SEARCH, HNSW_EF_CONSTRUCTION, HNSW_M};
use solaria_shared::embedding::WireEmbedding;
use solaria_shared::wire::{SearchResponse, SyncResponse, WireRecord};
use solaria_shared::{Hlc, UnixMillis};
use solaria_tests::bench::{Rng, pct};
use solaria_tests::central::{Central, Machine, Options};
use solaria_tests::records::{observation, session, wire};
use sqlx::Row;
use std::time::{Duration, Instant};

const DIMENSION: usize = 384;
const TOPICS: usize = 1000;
const MODEL: &str = "bench-model/384d";
const BATCH: i64 = 100_000;
const WORDS: &[&str] = &[
    "error",
    "test",
    "cargo",
    "build",
    "token",
    "migration",
    "database",
    "session",
    "handler",
    "config",
    "deploy",
    "cache",
    "retry",
    "timeout",
    "schema",
    "index",
    "upload",
    "camera",
    "permission",
    "login",
    "invoice",
    "billing",
    "report",
    "query",
    "layout",
    "grid",
    "tokio",
    "docker",
    "nginx",
    "rate",
];

/// The shape of the history: 1,000 topics (a centre uniform in [-0.5, 0.5) per
/// dimension), each with 100 subjects (the centre plus one of 1,000 offsets of 0.6
/// its size), each subject's records its point plus noise of 0.3 its size: a
/// question about one subject has about `n` / 100,000 records that answer it, and
/// a topic's other subjects near them.
struct Space {
    centres: Vec<Vec<f64>>,
    offsets: Vec<Vec<f64>>,
    noise: Vec<Vec<f64>>,
}

/// Subjects per topic.
const SUBJECTS: usize = 100;

impl Space {
    fn new(rng: &mut Rng) -> Space {
        let mut table = |scale: f64| -> Vec<Vec<f64>> {
            (0..TOPICS)
                .map(|_| {
                    (0..DIMENSION)
                        .map(|_| scale * (uniform(rng) - 0.5))
                        .collect()
                })
                .collect()
        };
        Space {
            centres: table(1.0),
            offsets: table(0.6),
            noise: table(0.3),
        }
    }

    /// The offset of subject `s` of topic `t` (the same pairing as the SQL).
    fn offset(t: usize, s: usize) -> usize {
        (t + 37 * s) % TOPICS
    }

    /// A question about a random subject: its point plus fresh noise, unit length.
    fn question(&self, rng: &mut Rng) -> Vec<f32> {
        let t = (rng.draw() as usize) % TOPICS;
        let s = (rng.draw() as usize) % SUBJECTS;
        let o = Space::offset(t, s);
        let v: Vec<f64> = (0..DIMENSION)
            .map(|d| self.centres[t][d] + self.offsets[o][d] + 0.3 * (uniform(rng) - 0.5))
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.into_iter().map(|x| (x / n) as f32).collect()
    }
}

fn uniform(rng: &mut Rng) -> f64 {
    (rng.draw() % 1_000_000) as f64 / 1_000_000.0
}

async fn sql(c: &Central, statement: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_string()))
        .execute(c.storage.pool())
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

/// `n` observations of machine `m`, each with its topic's vector, written by SQL
/// inside the server in batches; the model's id.
async fn preload(c: &Central, m: &Machine, space: &Space, n: i64) -> i32 {
    let model_id: i32 = sqlx::query_scalar(
        "INSERT INTO memory_vector_models (model, dimension) VALUES ($1, $2) RETURNING id",
    )
    .bind(MODEL)
    .bind(DIMENSION as i32)
    .fetch_one(c.storage.pool())
    .await
    .expect("model");
    // The space's three tables; record i is topic t = i mod 1,000, subject
    // s = i / 1,000 mod 100, and one of the noises (distinct within a subject).
    for (table, rows) in [
        ("bench_topics", &space.centres),
        ("bench_offsets", &space.offsets),
        ("bench_noise", &space.noise),
    ] {
        sql(
            c,
            &format!("CREATE TABLE {table} (k INT PRIMARY KEY, v vector NOT NULL)"),
        )
        .await;
        for (k, v) in rows.iter().enumerate() {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO {table} VALUES ($1, $2::float8[]::vector)"
            )))
            .bind(k as i32)
            .bind(v)
            .execute(c.storage.pool())
            .await
            .expect("space");
        }
    }
    let session = uuid::Uuid::now_v7();
    let mut from = 0;
    while from < n {
        let to = (from + BATCH).min(n) - 1;
        let t = Instant::now();
        observations(c, m, session, from, to).await;
        // Each record's vector: its topic plus its noise.
        sqlx::query(
            "INSERT INTO memory_vectors (account_id, record_id, model, model_id, dimension, updated,
                 pushed_by, machine_id, project_key, kind, created_at, embedding)
             SELECT o.account_id, o.id, $2, $3, $4, o.updated, o.machine_id, o.machine_id,
                 o.project_key, o.kind, o.created_at, tp.v + os.v + nz.v
             FROM memory_observations_remote o
             JOIN bench_topics tp ON tp.k = o.seq % $5
             JOIN bench_offsets os ON os.k = (o.seq % $5 + 37 * ((o.seq / $5) % 100)) % $5
             JOIN bench_noise nz ON nz.k = (o.seq / 100000 + 13 * (o.seq % $5) + 101 * ((o.seq / $5) % 100)) % $5
             WHERE o.account_id = $1 AND o.seq BETWEEN 1000000000 + $6 AND 1000000000 + $7",
        )
        .bind(m.account.0)
        .bind(MODEL)
        .bind(model_id)
        .bind(DIMENSION as i32)
        .bind(TOPICS as i64)
        .bind(from)
        .bind(to)
        .execute(c.storage.pool())
        .await
        .expect("vectors");
        eprintln!(
            "  {} records and vectors ({:.0} s)",
            to + 1,
            t.elapsed().as_secs_f64()
        );
        from = to + 1;
    }
    model_id
}

/// Observations `from..=to` of machine `m` (sequence 1,000,000,000 + i), their
/// titles drawn from [`WORDS`], spread over 20 projects and 60 days, written by SQL
/// inside the server.
async fn observations(c: &Central, m: &Machine, session: uuid::Uuid, from: i64, to: i64) {
    let now = UnixMillis::now().0;
    let hlc = Hlc::new(now as u64, 0).as_i64();
    let words = format!(
        "ARRAY[{}]",
        WORDS
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(",")
    );
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO memory_observations_remote (account_id, id, session_id, machine_id, updated,
             deleted, seq, project_key, project_name, kind, tool_name, title, input, response, created_at)
         SELECT $1, gen_random_uuid(), $3, $2, $4 + i, false, 1000000000 + i,
             'github.com/bench/project-' || (i % 20), 'project-' || (i % 20), 'tool_use', 'Bash',
             'Bash: ' || w[1 + i % 30] || ' ' || w[1 + (i / 30) % 30] || ' ' || w[1 + (i / 900) % 30],
             '{{\"command\": \"cargo test\"}}', '{{\"stdout\": \"ok\"}}', $5 - (i % (60 * 86400)) * 1000
         FROM generate_series($6::int8, $7::int8) AS i, (SELECT {words} AS w) AS ws"
    )))
    .bind(m.account.0)
    .bind(m.id.as_uuid())
    .bind(session)
    .bind(hlc)
    .bind(now)
    .bind(from)
    .bind(to)
    .execute(c.storage.pool())
    .await
    .expect("observations");
}

/// The rest of a table of `table_rows`: other accounts' observations beside the
/// `n` of the measured one, a million each, without vectors (their machines run
/// no model): what the service's statements must step over.
async fn other_accounts(c: &Central, n: i64, table_rows: i64) {
    let mut left = table_rows - n;
    let mut k = 0;
    while left > 0 {
        let rows = left.min(1_000_000);
        let acct = c.account(&format!("other-{k}")).await;
        let m = c.machine(acct, "laptop").await;
        let session = uuid::Uuid::now_v7();
        let t = Instant::now();
        let mut from = 0;
        while from < rows {
            let to = (from + BATCH).min(rows) - 1;
            observations(c, &m, session, from, to).await;
            from = to + 1;
        }
        eprintln!(
            "  another account: {rows} observations ({:.0} s)",
            t.elapsed().as_secs_f64()
        );
        left -= rows;
        k += 1;
    }
}

async fn timed_search(c: &Central, m: &Machine, body: &serde_json::Value) -> (Duration, usize) {
    let t = Instant::now();
    let r = c
        .client
        .post(c.at("/memory/search"))
        .bearer_auth(&m.jwt)
        .json(body)
        .send()
        .await
        .expect("search");
    assert_eq!(r.status(), 200);
    let found: SearchResponse = r.json().await.expect("answer");
    assert!(found.notice.is_none(), "{:?}", found.notice);
    (t.elapsed(), found.hits.len())
}

async fn timed_baseline(c: &Central, m: &Machine) -> Duration {
    let t = Instant::now();
    let r = c
        .client
        .get(c.at("/memory/machines"))
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("GET");
    assert_eq!(r.status(), 200);
    r.bytes().await.expect("body");
    t.elapsed()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The ids of the 10 nearest of `q`, through the index walking `ef_search`
/// candidates, or exactly (`None`).
async fn nearest_ten(
    c: &Central,
    m: &Machine,
    model_id: i32,
    q: &[f32],
    ef_search: Option<usize>,
) -> (Vec<uuid::Uuid>, Duration) {
    let mut tx = c.storage.pool().begin().await.expect("tx");
    let setting = match ef_search {
        Some(ef) => format!("SET LOCAL hnsw.ef_search = {ef}"),
        None => "SET LOCAL enable_indexscan = off".to_string(),
    };
    sqlx::query(sqlx::AssertSqlSafe(setting))
        .execute(&mut *tx)
        .await
        .expect("set");
    let t = Instant::now();
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT record_id FROM memory_vectors
         WHERE account_id = $1 AND model_id = {model_id} AND embedding IS NOT NULL
         ORDER BY embedding::vector({DIMENSION}) <=> $2::real[]::vector({DIMENSION}) LIMIT 10"
    )))
    .bind(m.account.0)
    .bind(q)
    .fetch_all(&mut *tx)
    .await
    .expect("nearest");
    let took = t.elapsed();
    tx.commit().await.expect("commit");
    (
        rows.iter()
            .map(|r| r.get::<uuid::Uuid, _>("record_id"))
            .collect(),
        took,
    )
}

/// One push of `records` (and `vectors`, when given); its time.
async fn push(
    c: &Central,
    m: &Machine,
    records: &[WireRecord],
    vectors: &[WireEmbedding],
) -> Duration {
    let body = serde_json::json!({"records": records, "embeddings": vectors});
    let t = Instant::now();
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .json(&body)
        .send()
        .await
        .expect("push");
    assert_eq!(r.status(), 200);
    let out: SyncResponse = r.json().await.expect("answer");
    assert_eq!(out.results.len(), records.len());
    assert!(
        out.embeddings_refused.is_empty(),
        "{:?}",
        out.embeddings_refused.first()
    );
    t.elapsed()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: i64 = std::env::var("SOLARIA_BENCH_VECTORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let table_rows: i64 = std::env::var("SOLARIA_BENCH_TABLE_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10 * n);
    let c = Central::start_with(Options::bench()).await;
    assert!(
        c.storage.meaning().is_on(),
        "{}",
        c.storage.meaning().line()
    );
    let acct = c.account("bench").await;
    let m = c.machine(acct, "bench-laptop").await;
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let space = Space::new(&mut rng);

    eprintln!("preloading other accounts' records to {table_rows} in the table…");
    other_accounts(&c, n, table_rows).await;
    eprintln!("preloading {n} records with their vectors…");
    let t = Instant::now();
    let model_id = preload(&c, &m, &space, n).await;
    let preload_time = t.elapsed();
    sql(
        &c,
        "ANALYZE memory_vectors; ANALYZE memory_observations_remote",
    )
    .await;

    // The index, built as the service builds it at start (memory for the graph:
    // the server's setting, raised here as docs/PRODUCTION.md advises).
    sql(&c, "ALTER SYSTEM SET maintenance_work_mem = '4GB'").await;
    sql(&c, "ALTER SYSTEM SET max_parallel_maintenance_workers = 1").await;
    sql(&c, "SELECT pg_reload_conf()").await;
    eprintln!("building the HNSW index…");
    let t = Instant::now();
    let meaning = c.storage.prepare_meaning().await.expect("prepare");
    let build = t.elapsed();
    assert!(meaning.is_on(), "{}", meaning.line());
    let index_bytes: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT pg_relation_size('memory_vectors_hnsw_{model_id}')"
    )))
    .fetch_one(c.storage.pool())
    .await
    .expect("index size");

    // Recall against exact search, and the exact search's time.
    let queries: Vec<(Vec<f32>, String)> = (0..200)
        .map(|i| {
            (
                space.question(&mut rng),
                format!("{} {}", WORDS[i % 30], WORDS[(i / 30) % 30]),
            )
        })
        .collect();
    let mut exact = Vec::new();
    let mut exact_times = Vec::new();
    for (q, _) in queries.iter().take(50) {
        let (ids, took) = nearest_ten(&c, &m, model_id, q, None).await;
        exact.push(ids);
        exact_times.push(took);
    }
    // The index's recall and time for each candidate count, the service's among them.
    let mut sweep = Vec::new();
    for ef in [100, 400, EF_SEARCH] {
        let (mut found, mut times) = (0, Vec::new());
        for ((q, _), exact) in queries.iter().zip(&exact) {
            let (approx, took) = nearest_ten(&c, &m, model_id, q, Some(ef)).await;
            times.push(took);
            found += approx.iter().filter(|id| exact.contains(id)).count();
        }
        sweep.push((ef, found as f64 / (exact.len() * 10) as f64, times));
    }

    // Remote search over TLS, each beside its baseline.
    let mut results = Vec::new();
    for mode in ["semantic", "hybrid"] {
        let (mut took, mut base) = (Vec::new(), Vec::new());
        for (q, words) in &queries {
            let body = serde_json::json!({
                "q": words, "mode": mode, "limit": 20,
                "vector": {"model": MODEL, "values": q},
            });
            let (d, hits) = timed_search(&c, &m, &body).await;
            assert_eq!(hits, 20);
            took.push(d);
            base.push(timed_baseline(&c, &m).await);
        }
        results.push((mode, took, base));
    }

    // A 1,000-record push with its vectors, beside the same push without them.
    let s = session(m.id, Hlc::new(UnixMillis::now().0 as u64, 0));
    push(&c, &m, &[wire(s.clone())], &[]).await;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 0..10u64 {
        for vectors in [true, false] {
            let mut records = Vec::new();
            let mut embeddings = Vec::new();
            for k in 0..1000u64 {
                let o = observation(
                    m.id,
                    s.id,
                    Hlc::new(UnixMillis::now().0 as u64, round * 2000 + k),
                    &rng.words(WORDS, 6),
                );
                if vectors {
                    let v = space.question(&mut rng);
                    embeddings.push(WireEmbedding::encode(
                        *o.id.as_uuid(),
                        o.meta.updated,
                        MODEL,
                        &v,
                    ));
                }
                records.push(wire(o));
            }
            let d = push(&c, &m, &records, &embeddings).await;
            if vectors {
                with.push(d)
            } else {
                without.push(d)
            }
        }
    }

    println!(
        "central search by meaning, {n} records with {DIMENSION}-dimension vectors in one account ({TOPICS} topics), {table_rows} records in the table"
    );
    println!(
        "preload (SQL inside the server): {:.0} s",
        preload_time.as_secs_f64()
    );
    println!(
        "HNSW index build at start (m {HNSW_M}, ef_construction {HNSW_EF_CONSTRUCTION}): {:.0} s ({:.0} MB; maintenance_work_mem 4GB, 1 parallel worker)",
        build.as_secs_f64(),
        index_bytes as f64 / 1e6
    );
    println!(
        "nearest 10 in SQL, exact (the index forbidden): p50 {:.1} ms p95 {:.1} ms",
        ms(pct(&mut exact_times, 0.5)),
        ms(pct(&mut exact_times, 0.95)),
    );
    for (ef, recall, mut times) in sweep {
        let service = if ef == EF_SEARCH {
            " (the service's)"
        } else {
            ""
        };
        println!(
            "through the index, ef_search {ef}{service}: recall@10 {recall:.3} against exact (50 queries), p50 {:.1} ms p95 {:.1} ms",
            ms(pct(&mut times, 0.5)),
            ms(pct(&mut times, 0.95)),
        );
    }
    for (mode, mut took, mut base) in results {
        let (p50, p95) = (pct(&mut took, 0.5), pct(&mut took, 0.95));
        let (b50, b95) = (pct(&mut base, 0.5), pct(&mut base, 0.95));
        println!(
            "remote {mode} search over TLS (200 queries, limit 20): p50 {:.1} ms p95 {:.1} ms; baseline GET /memory/machines p50 {:.1} ms p95 {:.1} ms ({:.1}× / {:.1}×)",
            ms(p50),
            ms(p95),
            ms(b50),
            ms(b95),
            ms(p50) / ms(b50).max(0.001),
            ms(p95) / ms(b95).max(0.001),
        );
    }
    let (w50, w95) = (pct(&mut with, 0.5), pct(&mut with, 0.95));
    let (o50, o95) = (pct(&mut without, 0.5), pct(&mut without, 0.95));
    println!(
        "1,000-record push with vectors p50 {:.0} ms p95 {:.0} ms; without p50 {:.0} ms p95 {:.0} ms ({:.1}×)",
        ms(w50),
        ms(w95),
        ms(o50),
        ms(o95),
        ms(w50) / ms(o50).max(0.001)
    );
}
