//! Central service benchmarks, against a throwaway PostgreSQL cluster and
//! the real server over TLS on loopback:
//!
//! * ingest: `POST /memory/sync` with 1000-record batches into a table already holding
//!   `SOLARIA_BENCH_PRELOAD` observations (default 1,000,000) from 100 machines, beside
//!   PostgreSQL's own `COPY` into the same table with the same indexes — the practical
//!   limit — measured in the same run, reported as a ratio;
//! * search: `GET /memory/search` over TLS on that table, a mix of common and rare
//!   words, English and Spanish, with and without filters: p50 / p95.
//!
//! ```sh
//! cargo bench -p solaria-tests --bench central
//! SOLARIA_BENCH_PRELOAD=200000 cargo bench -p solaria-tests --bench central
//! ```

use solaria_shared::wire::{SearchResponse, SyncResponse, WireRecord};
use solaria_shared::{Hlc, MachineId, UnixMillis};
use solaria_tests::bench::{Rng, pct};
use solaria_tests::central::{Central, Machine, Options};
use solaria_tests::records::{observation, session, wire};
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "error",
    "src",
    "test",
    "cargo",
    "build",
    "refresh",
    "token",
    "migration",
    "database",
    "session",
    "renew_jwt",
    "handler",
    "config",
    "deploy",
    "cache",
    "retry",
    "timeout",
    "schema",
    "index",
    "query",
    "fails",
    "fixed",
    "panic",
    "async",
    "tokio",
    "axum",
    "sqlx",
    "rows",
    "commit",
    "branch",
    "sesión",
    "migración",
    "base",
    "datos",
    "falla",
    "prueba",
    "despliegue",
    "configuración",
    "error",
    "tabla",
];

/// Copies `rows` observations of `machines` into the account with PostgreSQL's COPY.
async fn copy_rows(
    c: &Central,
    account: uuid::Uuid,
    machines: &[MachineId],
    rows: usize,
    seed: u64,
) -> Duration {
    let mut rng = Rng(seed | 1);
    let mut data = String::with_capacity(rows * 700);
    let now = UnixMillis::now().0;
    for i in 0..rows {
        let m = machines[i % machines.len()];
        // One row in 5,000 carries a rare word: found only deep in the history.
        let rare = if i % 5_000 == 0 { " zebrafish" } else { "" };
        let title = format!("Bash: {}{rare}", rng.words(WORDS, 5));
        let input = format!("{{\"command\": \"{}\"}}", rng.words(WORDS, 12));
        let response = format!("{{\"stdout\": \"{}\"}}", rng.words(WORDS, 60));
        let project = format!("github.com/bench/project-{}", rng.draw() % 20);
        data.push_str(&format!(
            "{account}\t{}\t{}\t{m}\t{}\tf\t{}\t{project}\t{}\ttool_use\tBash\t{title}\t{input}\t{response}\t[]\t{{}}\t[]\t{}\n",
            uuid::Uuid::now_v7(),
            uuid::Uuid::now_v7(),
            Hlc::new(now as u64, i as u64).as_i64(),
            1_000_000_000 + i as i64 + (seed as i64 % 1000) * 10_000_000,
            project.rsplit('/').next().unwrap_or("p"),
            now - (i as i64 % (60 * 86_400)) * 1000,
        ));
    }
    let start = Instant::now();
    let mut conn = c.storage.pool().acquire().await.expect("connection");
    let mut copy = conn
        .copy_in_raw(
            "COPY memory_observations_remote (account_id, id, session_id, machine_id, updated, deleted, seq, \
             project_key, project_name, kind, tool_name, title, input, response, files, metadata, tags, created_at) \
             FROM STDIN",
        )
        .await
        .expect("copy in");
    copy.send(data.into_bytes()).await.expect("copy data");
    copy.finish().await.expect("copy finish");
    start.elapsed()
}

/// An observation the size of the COPY rows (5-word title, 12-word command, 60-word
/// output), so both paths ingest the same amount of text.
fn bench_observation(
    m: MachineId,
    s: solaria_shared::SessionId,
    k: u64,
    rng: &mut Rng,
) -> WireRecord {
    let mut o = observation(m, s, Hlc::new(UnixMillis::now().0 as u64, k), "x");
    o.title = format!("Bash: {}", rng.words(WORDS, 5));
    o.input = format!("{{\"command\": \"{}\"}}", rng.words(WORDS, 12));
    o.response = format!("{{\"stdout\": \"{}\"}}", rng.words(WORDS, 60));
    wire(o)
}

async fn push(c: &Central, m: &Machine, records: &[WireRecord]) -> Duration {
    let body = serde_json::to_vec(&serde_json::json!({ "records": records })).expect("json");
    let start = Instant::now();
    let r = c
        .client
        .post(c.at("/memory/sync"))
        .bearer_auth(&m.jwt)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("push");
    assert_eq!(r.status(), 200);
    let out: SyncResponse = r.json().await.expect("response");
    assert_eq!(out.results.len(), records.len());
    start.elapsed()
}

#[tokio::main]
async fn main() {
    let preload: usize = std::env::var("SOLARIA_BENCH_PRELOAD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let c = Central::start_with(Options {
        tls: true,
        rate_limit_per_sec: 100_000,
        ..Options::default()
    })
    .await;
    let account = c.account("bench").await;
    // The preloaded rows are written by machines of no one in particular: a shared
    // project is what lets the account's person see them (`storage::visibility`).
    c.storage
        .share_projects(account, "github.com/bench/*", "bench")
        .await
        .expect("share");
    let mut machines = Vec::new();
    for i in 0..4 {
        machines.push(c.machine(account, &format!("pusher-{i}")).await);
    }
    let others: Vec<MachineId> = (0..100).map(|_| MachineId::new()).collect();

    eprintln!("preloading {preload} observations with COPY…");
    let mut loaded = 0;
    let chunk = 100_000;
    let t = Instant::now();
    while loaded < preload {
        let n = chunk.min(preload - loaded);
        copy_rows(&c, account.0, &others, n, loaded as u64 + 7).await;
        loaded += n;
    }
    sqlx::query("ANALYZE memory_observations_remote")
        .execute(c.storage.pool())
        .await
        .expect("analyze");
    eprintln!("  preloaded in {:.0} s", t.elapsed().as_secs_f64());

    // The practical limit: COPY of 50k more rows into the same, already big table.
    let copy_n = 50_000;
    let copy_time = copy_rows(&c, account.0, &others, copy_n, 999_983).await;
    let copy_rate = copy_n as f64 / copy_time.as_secs_f64();

    // The API: 50 batches of 1000 observations over TLS, one machine at a time…
    let batches = 50;
    let mut latencies = Vec::new();
    let start = Instant::now();
    for b in 0..batches {
        let m = &machines[b % machines.len()];
        let s = session(m.id, Hlc::new(UnixMillis::now().0 as u64, 0));
        let mut records = vec![wire(s.clone())];
        let mut rng = Rng(b as u64 * 7919 + 13);
        records.extend((0..999).map(|k| bench_observation(m.id, s.id, k, &mut rng)));
        latencies.push(push(&c, m, &records).await);
    }
    let sequential = (batches * 1000) as f64 / start.elapsed().as_secs_f64();
    // … and four machines pushing at once.
    let c = std::sync::Arc::new(c);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for m in machines.clone() {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..(batches / 4) {
                let s = session(m.id, Hlc::new(UnixMillis::now().0 as u64, 0));
                let mut records = vec![wire(s.clone())];
                let mut rng = Rng(m.id.as_uuid().as_u128() as u64 | 1);
                records.extend((0..999).map(|k| bench_observation(m.id, s.id, k, &mut rng)));
                push(&c, &m, &records).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("pusher");
    }
    let parallel = ((batches / 4) * 4 * 1000) as f64 / start.elapsed().as_secs_f64();

    println!(
        "\ningest into a table of {preload}+ observations (GIN full-text index, English + Spanish)\n"
    );
    println!("| path | records/s | ratio to COPY |");
    println!("|---|---|---|");
    println!("| PostgreSQL COPY, same table and indexes (the limit) | {copy_rate:.0} | 1.00 |");
    println!(
        "| POST /memory/sync over TLS, 1 machine, 1000/batch | {sequential:.0} | {:.2} |",
        sequential / copy_rate
    );
    println!(
        "| POST /memory/sync over TLS, 4 machines at once | {parallel:.0} | {:.2} |",
        parallel / copy_rate
    );
    let p50 = pct(&mut latencies, 0.5);
    let p95 = pct(&mut latencies, 0.95);
    println!(
        "\n1000-record batch latency (1 machine): p50 {:.0} ms, p95 {:.0} ms",
        p50.as_secs_f64() * 1000.0,
        p95.as_secs_f64() * 1000.0
    );
    search_bench(&c, &machines[0], preload).await;
    if let Ok(c) = std::sync::Arc::try_unwrap(c) {
        c.stop().await;
    }
}

async fn search_bench(c: &Central, m: &Machine, preload: usize) {
    let queries: &[(&str, &str)] = &[
        ("common word", "q=error"),
        ("common word", "q=cargo"),
        ("two common words", "q=cargo%20test"),
        ("phrase-like pair", "q=refresh%20token"),
        ("identifier", "q=renew_jwt"),
        ("Spanish", "q=migraci%C3%B3n%20base%20datos"),
        ("rare word, only in old rows", "q=zebrafish"),
        ("no match", "q=zzqqxxyy"),
        (
            "common word, project filter",
            "q=error&project=github.com%2Fbench%2Fproject-7",
        ),
        (
            "common word, current project weights",
            "q=deploy&current_project=github.com%2Fbench%2Fproject-3",
        ),
        ("question", "q=why%20does%20the%20schema%20migration%20fail"),
    ];
    let runs = 30;
    let mut all = Vec::new();
    println!("\nsearch over TLS, {preload}+ observations from 100 machines (limit 20)\n");
    println!("| query | n | hits | p50 | p95 |");
    println!("|---|---|---|---|---|");
    for (label, qs) in queries {
        let url = c.at(&format!("/memory/search?{qs}&limit=20"));
        for _ in 0..3 {
            let r = c
                .client
                .get(&url)
                .bearer_auth(&m.jwt)
                .send()
                .await
                .expect("search");
            assert_eq!(r.status(), 200, "{label}");
        }
        let mut samples = Vec::new();
        let mut hits = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let r = c
                .client
                .get(&url)
                .bearer_auth(&m.jwt)
                .send()
                .await
                .expect("search");
            let body: SearchResponse = r.json().await.expect("search json");
            samples.push(t.elapsed());
            hits = body.hits.len();
        }
        all.extend(samples.iter().copied());
        let p50 = pct(&mut samples, 0.5);
        let p95 = pct(&mut samples, 0.95);
        println!(
            "| {label} (`{qs}`) | {runs} | {hits} | {:.1} ms | {:.1} ms |",
            p50.as_secs_f64() * 1e3,
            p95.as_secs_f64() * 1e3
        );
    }
    let p50 = pct(&mut all, 0.5);
    let p95 = pct(&mut all, 0.95);
    println!(
        "| **all** | {} | | **{:.1} ms** | **{:.1} ms** |",
        all.len(),
        p50.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
}
