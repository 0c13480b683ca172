//! Local search latency (target: p95 < 2 ms at 100k observations) over a realistic
//! mix of queries — common words included, since ranking cost grows with the number
//! of matching rows — at 100k and 1M observations.
//!
//!     cargo bench -p solaria-edge --bench search            # 100k and 1M
//!     SOLARIA_BENCH_SIZES=100000 cargo bench -p solaria-edge --bench search

mod support;

use solaria_edge::store::Store;
use solaria_edge::store::search::{self, RecordType, SearchQuery};
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
    let store = Store::open(&path, "bench").expect("open");
    header(&format!(
        "search, {count} observations (in process, limit 20)"
    ));
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

fn main() {
    let sizes = std::env::var("SOLARIA_BENCH_SIZES").unwrap_or_else(|_| "100000,1000000".into());
    for size in sizes.split(',').filter_map(|s| s.trim().parse().ok()) {
        bench_size(size);
    }
}
