//! How long one short search query takes to embed with a model directory: the
//! median and p95 of 200 runs after a warm-up, the figure that dominates a
//! semantic search's latency (docs/BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -q -p solaria-embed --example query_latency -- DIR [RUNS]
//! ```

use solaria_embed::Embedder;
use std::path::PathBuf;
use std::time::Instant;

const QUERY: &str = "how did we handle token refresh in the auth middleware?";

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: query_latency MODEL_DIR [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args
        .next()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200)
        .max(1);
    let started = Instant::now();
    let model = match Embedder::load(&dir) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{}: {e}", dir.display());
            std::process::exit(1);
        }
    };
    let loaded = started.elapsed();
    for _ in 0..10 {
        let _ = model.embed_query(QUERY);
    }
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let _ = std::hint::black_box(model.embed_query(QUERY));
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{}: loaded in {:.0} ms; query embedding p50 {:.2} ms, p95 {:.2} ms ({runs} runs)",
        model.info().name,
        loaded.as_secs_f64() * 1000.0,
        at(0.5),
        at(0.95)
    );
}
