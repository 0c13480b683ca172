//! `solaria search --remote` as a person runs it, timed from the start of the
//! process to its end: by meaning with the daemon up (it embeds the query with
//! the model it keeps loaded), against by words in the same run, and by meaning
//! with no daemon (the CLI loads the model for the one query). A central service on
//! loopback with TLS, a laptop that pushed 300 prompts with their vectors, a desktop
//! that asks.
//!
//! ```sh
//! cargo build --release -p solaria-edge --bins
//! cargo bench -p solaria-tests --bench remote_search
//! SOLARIA_REMOTE_PAIRS=50 cargo bench -p solaria-tests --bench remote_search
//! ```
//!
//! It needs `SOLARIA_TEST_DATABASE_URL` (a PostgreSQL with pgvector, as
//! `deploy/test.sh` starts one) and `SOLARIA_TEST_MULTILINGUAL_MODEL_DIR`
//! (`deploy/models/fetch.sh`).

use solaria_tests::central::{Central, Options};
use solaria_tests::edge::Edge;
use std::time::{Duration, Instant};

/// The questions asked, in turn: Spanish, about English records.
const QUESTIONS: &[&str] = &[
    "el teléfono se cuelga si el usuario rechaza el acceso a la cámara",
    "¿por qué la conexión del websocket se cae al minimizar la app?",
    "las migraciones de la base de datos fallan en staging",
];

/// What the laptop worked on: 300 prompts from these, each with a number.
const TOPICS: &[&str] = &[
    "the mobile app crashes when the camera permission is denied",
    "the websocket reconnect loop drops messages after the app is backgrounded",
    "database migrations fail on staging because the lock times out",
    "add rate limiting to the login endpoint",
    "cache the exchange rates for an hour",
    "upgrade tokio and fix the deprecation warnings",
];

fn pairs() -> usize {
    std::env::var("SOLARIA_REMOTE_PAIRS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(20)
}

/// One `solaria search --remote --json --mode MODE Q` run: how long it took.
fn timed(edge: &Edge, mode: &str, q: &str) -> Duration {
    let started = Instant::now();
    let out = edge
        .cmd()
        .args(["search", "--remote", "--json", "--mode", mode, q])
        .output()
        .expect("run solaria");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{mode} {q:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json hits");
    assert!(
        !hits.is_empty() || mode == "lexical",
        "{mode} {q:?} found nothing"
    );
    took
}

/// Median and 95th percentile, in milliseconds.
fn figures(mut runs: Vec<Duration>) -> (f64, f64) {
    runs.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |p: f64| ms(runs[((runs.len() - 1) as f64 * p).round() as usize]);
    (at(0.5), at(0.95))
}

fn main() {
    let Some(model) = solaria_tests::semantic::multilingual() else {
        eprintln!("SOLARIA_TEST_MULTILINGUAL_MODEL_DIR is not set: nothing to measure");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let c = runtime.block_on(Central::start_with(Options {
        tls: true,
        ..Options::default()
    }));
    let (laptop, desktop) =
        runtime.block_on(solaria_tests::semantic::laptop_and_desktop(&c, &model));
    for n in 0..300 {
        let topic = TOPICS[n % TOPICS.len()];
        laptop.prompt(&format!("s{}", n / 30), &format!("{topic} (case {n})"));
    }
    laptop.ok(&["embed"]);
    laptop.ok(&["sync"]);

    let pairs = pairs();
    // No daemon: the model is loaded by each search.
    let mut alone = Vec::new();
    for n in 0..pairs.min(5) {
        alone.push(timed(&desktop, "semantic", QUESTIONS[n % QUESTIONS.len()]));
    }
    let serve = solaria_tests::daemon::serve_with(
        &desktop,
        &format!("[search]\nmodel_dir = '{}'", model.display()),
    );
    // Warm: the daemon loads its model on the first query, the server its caches.
    for q in QUESTIONS {
        timed(&desktop, "semantic", q);
        timed(&desktop, "lexical", q);
    }
    let (mut meaning, mut words) = (Vec::new(), Vec::new());
    for n in 0..pairs {
        let q = QUESTIONS[n % QUESTIONS.len()];
        // Each pair in turn starts with the other mode.
        if n % 2 == 0 {
            meaning.push(timed(&desktop, "semantic", q));
            words.push(timed(&desktop, "lexical", q));
        } else {
            words.push(timed(&desktop, "lexical", q));
            meaning.push(timed(&desktop, "semantic", q));
        }
    }
    drop(serve);
    let (meaning, words, alone) = (figures(meaning), figures(words), figures(alone));
    println!(
        "remote search, {pairs} pairs: by meaning with the daemon median {:.0} ms, p95 {:.0} ms; \
         by words median {:.0} ms, p95 {:.0} ms; ratio {:.2} (median), {:.2} (p95); \
         by meaning without a daemon median {:.0} ms, p95 {:.0} ms",
        meaning.0,
        meaning.1,
        words.0,
        words.1,
        meaning.0 / words.0,
        meaning.1 / words.1,
        alone.0,
        alone.1
    );
}
