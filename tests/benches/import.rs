//! `solaria import claude-mem` of a large claude-mem database, as a person runs
//! it: the real binary into an empty memory, timed from the start of the process
//! to its end. Its baseline, interleaved in the same run: `solaria import
//! solaria` of the export of what the first import stored, the same records
//! through SOLARIA's own format into another empty memory.
//!
//! The database is made with claude-mem 13.15.3's DDL (`support/claude_mem.rs`):
//! 1,000 sessions in 10 projects, each with 2 prompts, 100 observations (a title,
//! a narrative, three facts, concepts and files) and a summary; cached under
//! `target/bench-data/`.
//!
//! ```sh
//! cargo build --release -p solaria-edge --bins
//! cargo bench -p solaria-tests --bench import
//! SOLARIA_IMPORT_RUNS=5 cargo bench -p solaria-tests --bench import
//! ```

use solaria_tests::bench::{Rng, pct};
use solaria_tests::claude_mem::{self, Observed};
use solaria_tests::edge::Edge;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SESSIONS: usize = 1_000;
const OBSERVATIONS_A_SESSION: usize = 100;
const PROJECTS: usize = 10;
/// 2026-10-01, when the first session began; one every hour after it.
const FIRST: i64 = 1_790_812_800_000;

/// This bench's vocabulary (its data).
const WORDS: &[&str] = &[
    "refresh",
    "token",
    "rotation",
    "session",
    "migration",
    "index",
    "query",
    "cache",
    "timeout",
    "retry",
    "queue",
    "worker",
    "schema",
    "column",
    "deploy",
    "staging",
    "build",
    "test",
    "flaky",
    "panic",
    "lock",
    "mutex",
    "channel",
    "stream",
    "parser",
    "config",
    "logging",
    "metrics",
    "latency",
    "memory",
    "leak",
    "handler",
    "router",
    "endpoint",
    "payload",
    "webhook",
    "billing",
    "invoice",
    "customer",
    "account",
    "permission",
    "role",
    "audit",
    "export",
    "import",
    "backup",
    "restore",
    "replica",
    "failover",
    "vector",
];
const KINDS: &[&str] = &[
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
];

fn runs() -> usize {
    std::env::var("SOLARIA_IMPORT_RUNS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(3)
}

/// The database, made once.
fn database() -> PathBuf {
    let dir = solaria_tests::workspace().join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench data dir");
    let path = dir.join(format!(
        "claude-mem-{}.db",
        SESSIONS * OBSERVATIONS_A_SESSION
    ));
    if path.exists() {
        return path;
    }
    let partial = path.with_extension("partial");
    let _ = std::fs::remove_file(&partial);
    let db = claude_mem::create(&partial);
    db.execute_batch("BEGIN").expect("begin");
    let mut rng = Rng(0x1a2b_3c4d_5e6f_7081);
    for s in 0..SESSIONS {
        let at = FIRST + s as i64 * 3_600_000;
        let project = format!("project-{}", s % PROJECTS);
        let (content, memory) = (format!("cc-{s}"), format!("mem-{s}"));
        let row = claude_mem::session(&db, &content, &memory, &project, at);
        for p in 0..2 {
            let text = rng.words(WORDS, 30);
            claude_mem::prompt(&db, row, &content, p + 1, &text, at + p * 1_000);
        }
        for o in 0..OBSERVATIONS_A_SESSION {
            let title = rng.words(WORDS, 8);
            let narrative = rng.words(WORDS, 60);
            let facts = [
                rng.words(WORDS, 10),
                rng.words(WORDS, 10),
                rng.words(WORDS, 10),
            ];
            let file = format!("src/{}/{}.rs", rng.words(WORDS, 1), rng.words(WORDS, 1));
            claude_mem::observation(
                &db,
                &Observed {
                    memory: &memory,
                    project: &project,
                    kind: KINDS[o % KINDS.len()],
                    title: &title,
                    narrative: &narrative,
                    facts: &[&facts[0], &facts[1], &facts[2]],
                    concepts: &["how-it-works", "problem-solution"],
                    files_modified: &[&file],
                    at: at + 10_000 + o as i64 * 1_000,
                },
            );
        }
        let parts = [
            rng.words(WORDS, 12),
            rng.words(WORDS, 20),
            rng.words(WORDS, 20),
            rng.words(WORDS, 12),
        ];
        claude_mem::summary(
            &db,
            &memory,
            &project,
            [&parts[0], &parts[1], &parts[2], &parts[3]],
            at + 500_000,
        );
    }
    db.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("commit");
    drop(db);
    std::fs::rename(&partial, &path).expect("the database in place");
    path
}

/// One `solaria import SOURCE FILE --json` into `edge`: how long it took and
/// how many records it stored.
fn timed(edge: &Edge, source: &str, file: &Path) -> (Duration, u64) {
    let started = Instant::now();
    let out = edge
        .cmd_in(&edge.project)
        .args(["import", source])
        .arg(file)
        .arg("--json")
        .output()
        .expect("run solaria");
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{source}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report");
    let stored = report["stored"]
        .as_object()
        .map(|o| o.values().filter_map(serde_json::Value::as_u64).sum())
        .unwrap_or(0);
    (took, stored)
}

fn main() {
    let db = database();
    let runs = runs();
    let mut claude: Vec<Duration> = Vec::new();
    let mut own: Vec<Duration> = Vec::new();
    let mut stored = 0;
    let export_dir = tempfile::tempdir().expect("tempdir");
    let export = export_dir.path().join("export.json");
    for run in 0..runs {
        let edge = Edge::new("laptop");
        let (took, n) = timed(&edge, "claude-mem", &db);
        claude.push(took);
        stored = n;
        if run == 0 {
            edge.ok_in(&edge.project, &["export", export.to_str().expect("path")]);
        }
        let other = Edge::new("desktop");
        let (took, n) = timed(&other, "solaria", &export);
        assert_eq!(n, stored, "the export holds what the first import stored");
        own.push(took);
    }
    let line = |label: &str, samples: &mut Vec<Duration>| {
        let (p50, p95) = (pct(samples, 0.5), pct(samples, 0.95));
        println!(
            "{label:<36} p50 {:>8.2} s  p95 {:>8.2} s  {:>7.0} records/s",
            p50.as_secs_f64(),
            p95.as_secs_f64(),
            stored as f64 / p50.as_secs_f64()
        );
        (p50, p95)
    };
    println!(
        "import of {} claude-mem records ({} observations), {runs} runs interleaved",
        stored,
        SESSIONS * OBSERVATIONS_A_SESSION
    );
    let (c50, c95) = line("solaria import claude-mem", &mut claude);
    let (s50, s95) = line("solaria import solaria (baseline)", &mut own);
    println!(
        "ratio: {:.2}x (p50), {:.2}x (p95)",
        c50.as_secs_f64() / s50.as_secs_f64(),
        c95.as_secs_f64() / s95.as_secs_f64()
    );
}
