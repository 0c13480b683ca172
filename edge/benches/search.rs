//! Local search latency (target: p95 < 2 ms at 100k observations) over a realistic
//! mix of queries — common words included, since ranking cost grows with the number
//! of matching rows — at 100k and 1M observations.
//!
//!     cargo bench -p solaria-edge --bench search            # 100k and 1M
//!     SOLARIA_BENCH_SIZES=100000 cargo bench -p solaria-edge --bench search
//!
//! Each size also measures what the index's tokenizer costs: the same rows indexed
//! by FTS5's `porter` and by `solaria_stem`, alternately, and the upgrade of a
//! store whose index `porter` made (migration 0020).

mod support;

use solaria_edge::store::search::{self, RecordType, SearchQuery};
use solaria_edge::store::text::readable;
use solaria_edge::store::{Store, pairs, stemming};
use std::time::{Duration, Instant};
use support::*;

const RUNS: usize = 40;

fn queries() -> Vec<(&'static str, SearchQuery)> {
    let q = |text: &str| SearchQuery {
        text: text.to_string(),
        limit: 20,
        current_project: Some(project(0).key),
        ..SearchQuery::default()
    };
    let mut list = vec![
        ("common word (error)", q("error")),
        ("common word (test)", q("test")),
        ("common word (cargo)", q("cargo")),
        ("common word (src)", q("src")),
        ("two common words (cargo test)", q("cargo test")),
        (
            "phrase in many rows (mismatched types)",
            q("mismatched types"),
        ),
        ("mid-frequency word", q(&word(40))),
        ("rare word", q(&word(15_000))),
        ("identifier", q(&format!("{}_{}", word(10), word(20)))),
        ("error code in many rows (E0308)", q("E0308")),
        ("path", q(&format!("src/{}/{}.rs", word(3), word(40)))),
        (
            "identifier and common words",
            q(&format!("cargo test {}_{} failed", word(10), word(20))),
        ),
        ("CamelCase and dotted name", q("HttpClient std.io.Error")),
        (
            "error code absent (ERR_OSSL_EVP_UNSUPPORTED)",
            q("ERR_OSSL_EVP_UNSUPPORTED"),
        ),
        // A term in ~3k rows (cut at the bound, then checked) with one in ~40.
        (
            "word in 3k rows and a rare word",
            q(&format!("{} {}", word(100), word(8000))),
        ),
        (
            "identifier, rare word, absent word",
            q(&format!(
                "{}_{} {} zzqqxxyy",
                word(10),
                word(20),
                word(8000)
            )),
        ),
        (
            "question, stopwords",
            q("why did the build fail with mismatched types"),
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

fn bench_size(count: usize) {
    let (_dir, path) = store_copy(count);
    tokenizer_cost(&path, count);
    let mut store = Store::open(&path, "bench").expect("open");
    // The cached store predates identifier pairs (or was built before this run's
    // code): measured first as an upgraded store is until the daemon indexes it
    // (identifiers as phrases), then with every record's pairs.
    if pairs::complete(store.conn()).expect("pairs") {
        store
            .conn()
            .execute("UPDATE observations SET pairs = NULL", [])
            .expect("as before pairs");
    }
    measure(
        &store,
        &format!("search, {count} observations, identifiers as phrases (before pairs)"),
    );
    let t = Instant::now();
    let mut batches = Vec::new();
    loop {
        let b = Instant::now();
        if pairs::backfill(&mut store, 100).expect("backfill") == 0 {
            break;
        }
        batches.push(b.elapsed());
    }
    let indexed = t.elapsed();
    let t = Instant::now();
    let mut steps = Vec::new();
    loop {
        let s = Instant::now();
        let more = pairs::merge_step(&mut store).expect("merge");
        steps.push(s.elapsed());
        if !more {
            break;
        }
    }
    eprintln!(
        "identifier pairs for {count} observations: {:.1} s in {} batches of 100 (a batch: {:?}); \
         then the index merged in {:.1} s, {} steps (a step: {:?})",
        indexed.as_secs_f64(),
        batches.len(),
        summarize(&mut batches),
        t.elapsed().as_secs_f64(),
        steps.len(),
        summarize(&mut steps)
    );
    measure(
        &store,
        &format!("search, {count} observations, identifiers by their pairs"),
    );
    against_bm25(&store);
}

/// The observations' full-text rows indexed by `porter` and by `solaria_stem`, three
/// times each, alternately, into a table of the same shape as the store's; then the
/// store set back to its index as version 19 had it and opened: the upgrade's time.
fn tokenizer_cost(path: &std::path::Path, count: usize) {
    /// The `tokenize` option of the store's indexes until version 20.
    const PORTER: &str = "porter unicode61 remove_diacritics 2";
    const ROUNDS: usize = 3;
    let store = Store::open(path, "bench").expect("open");
    let index_with = |tokenizer: &str| -> Duration {
        store
            .conn()
            .execute_batch(&format!(
                "DROP TABLE IF EXISTS temp.tokenized;
                 CREATE VIRTUAL TABLE temp.tokenized USING fts5 (
                     title, body, tool, scope, content = '', contentless_delete = 1,
                     tokenize = '{tokenizer}')"
            ))
            .expect("a table to fill");
        let t = Instant::now();
        store
            .conn()
            .execute(
                "INSERT INTO temp.tokenized (rowid, title, body, tool, scope)
                 SELECT row, title, body, tool, scope FROM observations_searched",
                [],
            )
            .expect("indexed");
        t.elapsed()
    };
    let (mut porter, mut stem) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        porter.push(index_with(PORTER));
        stem.push(index_with(stemming::TOKENIZE));
    }
    store
        .conn()
        .execute_batch("DROP TABLE temp.tokenized")
        .expect("drop");
    let (porter, stem) = (summarize(&mut porter), summarize(&mut stem));
    eprintln!(
        "indexing {count} observations' full-text rows, median of {ROUNDS}: porter {:.2} s, \
         solaria_stem {:.2} s = {:.2}x",
        porter.p50.as_secs_f64(),
        stem.p50.as_secs_f64(),
        stem.p50.as_secs_f64() / porter.p50.as_secs_f64()
    );
    store
        .conn()
        .execute_batch(&format!(
            "DROP TABLE observations_fts;
             CREATE VIRTUAL TABLE observations_fts USING fts5 (
                 title, body, tool, scope, content = '', contentless_delete = 1,
                 tokenize = '{PORTER}');
             INSERT INTO observations_fts (rowid, title, body, tool, scope)
             SELECT row, title, body, tool, scope FROM observations_searched;
             PRAGMA user_version = 19;"
        ))
        .expect("back to version 19's index");
    drop(store);
    let t = Instant::now();
    drop(Store::open(path, "bench").expect("upgraded"));
    eprintln!(
        "opening the store of version 19 (its three indexes made again): {:.2} s",
        t.elapsed().as_secs_f64()
    );
}

/// Every query of [`queries`], [`RUNS`] times each after a warm-up.
fn measure(store: &Store, title: &str) {
    header(&format!("{title} (in process, limit 20)"));
    let mut all: Vec<Duration> = Vec::new();
    for (label, query) in queries() {
        // Warm the page cache and the statement cache, as a running agent would.
        for _ in 0..3 {
            search::search(store.conn(), &query).expect("search");
        }
        let mut samples = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let t = Instant::now();
            let hits = search::search(store.conn(), &query).expect("search");
            samples.push(t.elapsed());
            std::hint::black_box(hits);
        }
        all.extend(&samples);
        row(label, summarize(&mut samples));
    }
    row("ALL QUERIES", summarize(&mut all));
}

/// Identifier-heavy queries made from the store's own records: does the bounded
/// ranking's top 5 hold plain FTS5 bm25's best record (an OR of the same terms,
/// `ORDER BY bm25()`, no weights)? Each query takes an identifier or path of a
/// record, then that record's words, and (half of them) a word the record lacks —
/// from the record as a person reads it (`text::readable`: a tool call's strings,
/// not its JSON field names, which are not searched).
fn against_bm25(store: &Store) {
    let conn = store.conn();
    let total: i64 = conn
        .query_row("SELECT max(rowid) FROM observations", [], |r| r.get(0))
        .expect("rows");
    let mut rng = Rng::new(11);
    let (mut asked, mut kept) = (0usize, 0usize);
    let mut bm25_time = Vec::new();
    let mut ours_time = Vec::new();
    while asked < 300 {
        let rowid = 1 + rng.below(total as usize) as i64;
        let Ok((title, input, response)): Result<(String, String, String), _> = conn.query_row(
            "SELECT title, input, response FROM observations WHERE rowid = ?1",
            [rowid],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        ) else {
            continue;
        };
        let text = format!("{title} {} {}", readable(&input), readable(&response));
        let tokens: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || "\"{}(),:;".contains(c))
            .filter(|t| t.contains('_') || (t.contains('/') && t.contains('.')))
            .collect();
        let Some(ident) = tokens.get(rng.below(tokens.len().max(1))) else {
            continue;
        };
        let plain: Vec<&str> = text
            .split_whitespace()
            .filter(|w| w.len() > 3 && w.chars().all(|c| c.is_ascii_alphabetic()))
            .collect();
        let mut words = vec![ident.to_string()];
        for _ in 0..rng.below(3) {
            if let Some(w) = plain.get(rng.below(plain.len().max(1))) {
                words.push(w.to_string());
            }
        }
        if rng.below(2) == 0 {
            words.push(word(rng.zipf(20_000)));
        }
        let text = words.join(" ");
        let terms = search::query_terms(&text);
        let expr = format!("{{title body tool}} : ({})", terms.join(" OR "));
        let t = Instant::now();
        let best: Option<String> = conn
            .query_row(
                "SELECT o.id FROM observations_fts f JOIN observations o ON o.rowid = f.rowid
                 WHERE observations_fts MATCH ?1 ORDER BY bm25(observations_fts) LIMIT 1",
                [&expr],
                |r| r.get(0),
            )
            .ok();
        bm25_time.push(t.elapsed());
        let Some(best) = best else { continue };
        let t = Instant::now();
        let hits = search::search(
            conn,
            &SearchQuery {
                text,
                limit: 5,
                ..SearchQuery::default()
            },
        )
        .expect("search");
        ours_time.push(t.elapsed());
        asked += 1;
        if hits.iter().any(|h| h.id == best) {
            kept += 1;
        }
    }
    println!(
        "\nidentifier queries: bm25's best record in our top 5 for {kept} of {asked} ({:.1}%)",
        kept as f64 * 100.0 / asked as f64
    );
    row("these queries, ours (limit 5)", summarize(&mut ours_time));
    row(
        "these queries, plain bm25 (LIMIT 1)",
        summarize(&mut bm25_time),
    );
}

fn main() {
    let sizes = std::env::var("SOLARIA_BENCH_SIZES").unwrap_or_else(|_| "100000,1000000".into());
    for size in sizes.split(',').filter_map(|s| s.trim().parse().ok()) {
        bench_size(size);
    }
}
