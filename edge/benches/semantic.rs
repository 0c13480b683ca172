//! Semantic search costs (issue 6): the embedding pass's throughput (records/s,
//! as the daemon runs it) and hybrid search latency at 100k observations with
//! the model loaded, the query's embedding included (target p95 < 25 ms), with
//! lexical search measured in the same run as the baseline.
//!
//!     bash deploy/models/fetch.sh
//!     cargo bench -p solaria-edge --bench semantic -- \
//!         --model ~/.cache/solaria/models/multilingual-e5-small
//!
//! Last, what showing the hits found by meaning alone costs a search
//! (`--passages-only`: that part alone, without the 100k store).
//!
//! Vectors for 100k records would take the model an hour to make, and the cost of
//! a nearest-neighbour search does not depend on what the vectors say, only on
//! how many there are: so the first EMBEDDED records get real vectors (that is the
//! throughput measurement) and the others get a real vector plus noise, normalised.

use solaria_store::rusqlite;
mod support;

use solaria_edge::semantic::{self, PassOptions};
use solaria_edge::store::Store;
use solaria_edge::store::hybrid::{self, SearchMode};
use solaria_edge::store::search::{RecordType, SearchQuery};
use solaria_edge::store::vectors::{self, EmbedBound, Source};
use solaria_embed::Embedder;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::*;

const COUNT: usize = 100_000;
const EMBEDDED: usize = 256;
const RUNS: usize = 20;

fn model_dir() -> PathBuf {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--model"
            && let Some(d) = args.next()
        {
            return PathBuf::from(d);
        }
    }
    if let Some(d) = std::env::var_os("SOLARIA_BENCH_MODEL") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".cache/solaria/models/multilingual-e5-small")
}

fn queries() -> Vec<(&'static str, SearchQuery)> {
    let q = |text: &str| SearchQuery {
        text: text.to_string(),
        limit: 20,
        current_project: Some(project(0).key),
        ..SearchQuery::default()
    };
    let mut list = vec![
        ("common word (error)", q("error")),
        ("two common words (cargo test)", q("cargo test")),
        ("identifier", q(&format!("{}_{}", word(10), word(20)))),
        (
            "question, stopwords",
            q("why did the build fail with mismatched types"),
        ),
        (
            "paraphrase, no shared word",
            q("how do we keep people signed in once their credentials lapse"),
        ),
        (
            "Spanish question",
            q("¿por qué falla la compilación con tipos incompatibles?"),
        ),
        ("no match", q("zzqqxxyy")),
    ];
    let mut filtered = q("error");
    filtered.project = Some(project(7).name);
    list.push(("common word, --project filter", filtered));
    let mut typed = q("cargo");
    typed.record_type = Some(RecordType::Prompt);
    list.push(("common word, --type prompt", typed));
    list
}

/// Xorshift noise in -1..1.
fn noise(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % 2_000_001) as f32 / 1_000_000.0 - 1.0
}

/// The observations that have a vector.
fn embedded_rows(conn: &rusqlite::Connection) -> Vec<i64> {
    conn.prepare("SELECT row FROM observation_embeddings")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// Gives every record without a vector a real vector plus noise (see the header).
fn fill_synthetic(path: &Path) -> usize {
    let mut conn = rusqlite::Connection::open(path).expect("open");
    let rows = embedded_rows(&conn);
    let dimension = vectors::index_model(&conn)
        .expect("model")
        .expect("vectors made")
        .dimension;
    let reals: Vec<Vec<f32>> = rows
        .iter()
        .filter_map(|row| {
            vectors::stored_vector(&conn, Source::Observations, *row, dimension).expect("read")
        })
        .collect();
    let missing: Vec<i64> = conn
        .prepare("SELECT row FROM vector_queue WHERE source = 0")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let centre = vectors::centre(&conn).expect("centre").unwrap_or_default();
    let tx = conn.transaction().expect("tx");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for (i, row) in missing.iter().enumerate() {
        let base = &reals[i % reals.len()];
        let mut v: Vec<f32> = base.iter().map(|x| x + 0.05 * noise(&mut state)).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        let blob = vectors::blob_of(&v);
        tx.execute(
            "INSERT INTO observation_vectors (rowid, coarse) VALUES (?1, vec_quantize_binary(?2))",
            rusqlite::params![row, vectors::coarse_blob(&v, &centre)],
        )
        .expect("insert");
        tx.execute(
            "INSERT INTO observation_embeddings (row, embedding) VALUES (?1, ?2)",
            rusqlite::params![row, blob],
        )
        .expect("insert");
    }
    tx.execute("DELETE FROM vector_queue", []).expect("queue");
    tx.commit().expect("commit");
    missing.len()
}

/// The store file, vacuumed, as kept (vectors in int8), with every vector written
/// in float32 instead (how they were kept before), and without vectors: what
/// keeping a vector for every record costs on disk at COUNT records.
fn disk_sizes(path: &Path) {
    let vacuumed_size = |label: &str, change: &dyn Fn(&rusqlite::Connection)| -> f64 {
        let dir = tempfile::tempdir().expect("tempdir");
        let copy = dir.path().join("memory.db");
        std::fs::copy(path, &copy).expect("copy");
        let conn = rusqlite::Connection::open(&copy).expect("open");
        change(&conn);
        conn.execute_batch("VACUUM").expect("vacuum");
        drop(conn);
        let mb = std::fs::metadata(&copy).expect("size").len() as f64 / 1e6;
        println!("store file, {label}: {mb:.1} MB");
        mb
    };
    let dimension = {
        let conn = rusqlite::Connection::open(path).expect("open");
        vectors::index_model(&conn)
            .expect("model")
            .expect("vectors")
            .dimension
    };
    println!("\non disk, {COUNT} observations with vectors (each file vacuumed):");
    let int8 = vacuumed_size("vectors in int8 (as kept)", &|_| {});
    let float32 = vacuumed_size("vectors in float32 (as kept before)", &|conn| {
        let rows = embedded_rows(conn);
        conn.execute_batch("BEGIN").expect("begin");
        for row in rows {
            let v = vectors::stored_vector(conn, Source::Observations, row, dimension)
                .expect("read")
                .expect("a vector");
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            conn.execute(
                "UPDATE observation_embeddings SET embedding = ?1 WHERE row = ?2",
                rusqlite::params![bytes, row],
            )
            .expect("rewrite");
        }
        conn.execute_batch("COMMIT").expect("commit");
    });
    let none = vacuumed_size("without vectors", &|conn| {
        conn.execute_batch("DELETE FROM observation_embeddings; DELETE FROM observation_vectors;")
            .expect("drop vectors");
    });
    println!(
        "vectors cost {:.1} MB in int8, {:.1} MB in float32 ({:.0}% of the file without them, against {:.0}%)",
        int8 - none,
        float32 - none,
        100.0 * (int8 - none) / none,
        100.0 * (float32 - none) / none
    );
}

fn main() {
    let dir = model_dir();
    let t = Instant::now();
    let mut model = Embedder::load(&dir).unwrap_or_else(|e| {
        eprintln!(
            "{}: {e}\n(give --model DIR; see deploy/models/fetch.sh)",
            dir.display()
        );
        std::process::exit(2)
    });
    model.set_max_tokens(128).expect("max tokens");
    let load = t.elapsed();
    println!(
        "model: {} ({}d), loaded in {:.0} ms",
        model.info().name,
        model.info().dimension,
        load.as_secs_f64() * 1000.0
    );
    if std::env::args().any(|a| a == "--passages-only") {
        passages_shown(&model);
        return;
    }

    // The embedding pass, as the daemon runs it, on the newest EMBEDDED records.
    let (_dir, path) = store_copy(COUNT);
    let mut store = Store::open(&path, "bench").expect("open");
    let mut samples = Vec::new();
    let mut made = 0;
    let started = Instant::now();
    while made < EMBEDDED {
        let t = Instant::now();
        let report = semantic::run_pass(
            &mut store,
            &model,
            PassOptions {
                batch: 32,
                bound: EmbedBound::Every,
                budget: Duration::ZERO,
            },
            |_| {},
        )
        .expect("pass");
        made += report.embedded;
        samples.push(t.elapsed());
    }
    let total = started.elapsed();
    let s = summarize(&mut samples);
    println!(
        "\nembedding pass: {made} records in {:.1} s = {:.1} records/s; per batch of 32: p50 {} ms, p95 {} ms",
        total.as_secs_f64(),
        made as f64 / total.as_secs_f64(),
        ms(s.p50),
        ms(s.p95)
    );
    let synthetic = fill_synthetic(&path);
    println!("(+{synthetic} records given synthetic vectors, see the header)");
    disk_sizes(&path);
    let store = Store::open(&path, "bench").expect("reopen");

    // The first semantic search of a process loads the first-pass keys.
    let first = queries().remove(0).1;
    let vector = model.embed_query(&first.text).expect("embed");
    let t = Instant::now();
    std::hint::black_box(
        hybrid::search(store.conn(), &first, SearchMode::Hybrid, Some(&vector)).expect("search"),
    );
    println!(
        "first hybrid search of the process (loads the first-pass keys; embedding excluded): {} ms",
        ms(t.elapsed())
    );

    header(&format!(
        "search, {COUNT} observations with vectors (in process, model loaded, limit 20)"
    ));
    // As `solaria search` runs them (the query embedded on a second thread while
    // the lexical side is gathered), and hybrid done one step after the other as
    // the baseline of that overlap.
    let variants = [
        ("lexical", SearchMode::Lexical, true),
        ("semantic", SearchMode::Semantic, true),
        ("hybrid", SearchMode::Hybrid, true),
        ("hybrid, sequential", SearchMode::Hybrid, false),
    ];
    let mut by_variant: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
    let mut embed_only = Vec::new();
    for (label, query) in queries() {
        for ((name, mode, overlapped), all) in variants.iter().zip(by_variant.iter_mut()) {
            let mut samples = Vec::with_capacity(RUNS);
            for run in 0..=RUNS {
                let t = Instant::now();
                let hits = if *overlapped {
                    hybrid::search_while_embedding(store.conn(), &query, *mode, || {
                        model.embed_query(&query.text).map_err(anyhow::Error::from)
                    })
                    .expect("search")
                } else {
                    let vector = model.embed_query(&query.text).expect("embed");
                    hybrid::search(store.conn(), &query, *mode, Some(&vector)).expect("search")
                };
                std::hint::black_box(hits);
                if run > 0 {
                    // Run 0 warms the page and statement caches.
                    samples.push(t.elapsed());
                }
            }
            all.extend_from_slice(&samples);
            row(&format!("{label} [{name}]"), summarize(&mut samples));
        }
        for _ in 0..5 {
            let t = Instant::now();
            std::hint::black_box(model.embed_query(&query.text).expect("embed"));
            embed_only.push(t.elapsed());
        }
    }
    println!();
    for ((name, _, _), all) in variants.iter().zip(by_variant.iter_mut()) {
        row(&format!("ALL QUERIES [{name}]"), summarize(all));
    }
    row("query embedding alone", summarize(&mut embed_only));
    passages_shown(&model);
}

/// Sentences as records hold them, for [`passages_shown`].
const SENTENCES: &[&str] = &[
    "Deployed the new build to staging on Tuesday afternoon.",
    "After the upgrade the login page refused every password.",
    "The migration added an index on the orders table.",
    "Tests pass locally but the CI job times out after ten minutes.",
    "We rotate the refresh token on every renewal.",
    "Lunch is at noon on Fridays.",
];

/// What showing the hits found by meaning alone adds to a search at most: the
/// closest of as many passages as one search weighs (`MEANING_PASSAGES`
/// sentences, two hits of three, embedded in one batch), against the query's own
/// embedding, interleaved.
fn passages_shown(model: &Embedder) {
    use solaria_edge::ops::passages::MEANING_PASSAGES;
    let passages: Vec<String> = SENTENCES
        .iter()
        .cycle()
        .take(MEANING_PASSAGES)
        .map(|s| s.to_string())
        .collect();
    let lists: Vec<Vec<String>> = passages.chunks(3).map(<[String]>::to_vec).collect();
    let (mut query, mut closest) = (Vec::new(), Vec::new());
    for run in 0..=RUNS {
        let t = Instant::now();
        let vector = model.embed_query("why did the login fail").expect("embed");
        let embedded = t.elapsed();
        let t = Instant::now();
        std::hint::black_box(semantic::closest_passages(model, &vector, &lists).expect("passages"));
        if run > 0 {
            query.push(embedded);
            closest.push(t.elapsed());
        }
    }
    header(&format!(
        "showing hits found by meaning: the closest of {MEANING_PASSAGES} passages"
    ));
    row("query embedding alone", summarize(&mut query));
    row("closest passages", summarize(&mut closest));
}
