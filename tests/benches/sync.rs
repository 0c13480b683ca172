//! Sync benchmarks, the real `solaria` binary against the real central
//! service over TLS on loopback, on a throwaway PostgreSQL cluster:
//!
//! * first sync (push) of `SOLARIA_BENCH_SYNC_N` observations (default 100,000) from a
//!   machine's store, and restore (pull) of all of them into a fresh machine;
//! * a steady sync of 1,000 new observations (the hourly case), several runs;
//! * 200 simulated machines pushing a 100-record batch each at once: errors and
//!   p50/p99 batch latency.
//!
//! ```sh
//! cargo build --release -p solaria-edge && cargo bench -p solaria-tests --bench sync
//! ```

use solaria_edge::store::Store;
use solaria_shared::{
    Hlc, Observation, ObservationId, ObservationKind, Project, RecordMeta, Session, SessionId,
    UnixMillis,
};
use solaria_tests::central::{Central, Options};
use solaria_tests::edge::Edge;
use solaria_tests::records::{observation, session, wire};
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "error",
    "src",
    "test",
    "cargo",
    "refresh",
    "token",
    "migration",
    "database",
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
];

/// Writes `n` observations into an edge's store through the store API.
fn fill(edge: &Edge, n: usize) {
    let mut store = Store::open(&edge.data().join("memory.db"), "bench").expect("store");
    let me = store.machine_id();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut word = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        WORDS[(x % WORDS.len() as u64) as usize]
    };
    let project = Project {
        key: "github.com/acme/api".into(),
        name: "api".into(),
    };
    for chunk in 0..n.div_ceil(1000) {
        store
            .write(|w| {
                let updated = w.tick();
                let s = Session {
                    id: SessionId::new(),
                    meta: RecordMeta {
                        machine_id: me,
                        updated,
                        deleted: false,
                    },
                    project: project.clone(),
                    agent_session_id: format!("bench-{chunk}"),
                    cwd: "/work/api".into(),
                    agent: "claude-code".into(),
                    source: "startup".into(),
                    started_at: UnixMillis::now(),
                    ended_at: None,
                };
                w.insert_session(&s)?;
                for _ in 0..1000.min(n - chunk * 1000) {
                    let text: Vec<&str> = (0..60).map(|_| word()).collect();
                    let updated = w.tick();
                    w.insert_observation(&Observation {
                        id: ObservationId::new(),
                        meta: RecordMeta {
                            machine_id: me,
                            updated,
                            deleted: false,
                        },
                        session_id: s.id,
                        project: project.clone(),
                        kind: ObservationKind::ToolUse,
                        tool_name: Some("Bash".into()),
                        title: format!("Bash: cargo test {}", word()),
                        input: format!("{{\"command\": \"cargo test {}\"}}", word()),
                        response: format!("{{\"stdout\": \"{}\"}}", text.join(" ")),
                        files: vec![],
                        metadata: serde_json::json!({}),
                        tags: vec![],
                        created_at: UnixMillis::now(),
                    })?;
                }
                Ok(())
            })
            .expect("fill");
    }
}

fn timed(edge: &Edge, args: &[&str]) -> Duration {
    let t = Instant::now();
    edge.ok(args);
    t.elapsed()
}

fn pct(v: &mut [Duration], q: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::var("SOLARIA_BENCH_SYNC_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let c = Central::start_with(Options {
        tls: true,
        rate_limit_per_sec: 100_000,
        ..Options::default()
    })
    .await;
    let acct = c.account("bench").await;
    let a = Edge::new("laptop");
    a.enroll(&c, acct).await;
    eprintln!("filling the laptop with {n} observations…");
    fill(&a, n);

    let push = tokio::task::block_in_place(|| timed(&a, &["sync"]));
    let fresh = Edge::new("desktop");
    fresh.enroll(&c, acct).await;
    let pull = tokio::task::block_in_place(|| timed(&fresh, &["restore"]));

    let mut steady = Vec::new();
    for _ in 0..5 {
        fill(&a, 1000);
        steady.push(tokio::task::block_in_place(|| timed(&a, &["sync"])));
    }

    println!("\nsync over TLS, the real `solaria` binary (process start included)\n");
    println!("| case | records | seconds | records/s |");
    println!("|---|---|---|---|");
    let rate = |d: Duration, k: usize| k as f64 / d.as_secs_f64();
    println!(
        "| first sync (push) | {} | {:.1} | {:.0} |",
        n + n.div_ceil(1000),
        push.as_secs_f64(),
        rate(push, n)
    );
    println!(
        "| restore (pull) into a fresh machine | {} | {:.1} | {:.0} |",
        n + n.div_ceil(1000),
        pull.as_secs_f64(),
        rate(pull, n)
    );
    let p50 = pct(&mut steady, 0.5);
    println!(
        "| steady sync of 1,000 new observations (median of 5) | 1001 | {:.2} | {:.0} |",
        p50.as_secs_f64(),
        rate(p50, 1001)
    );

    // 200 machines at once, each pushing one batch of 100.
    let machines_n = 200;
    let mut machines = Vec::new();
    for i in 0..machines_n {
        let acct = if i % 2 == 0 {
            acct
        } else {
            c.account(&format!("team-{i}")).await
        };
        machines.push(c.machine(acct, &format!("sim-{i}")).await);
    }
    let c = std::sync::Arc::new(c);
    let start = Instant::now();
    let tasks: Vec<_> = machines
        .into_iter()
        .map(|m| {
            let c = c.clone();
            tokio::spawn(async move {
                let s = session(m.id, Hlc::new(UnixMillis::now().0 as u64, 0));
                let mut records = vec![wire(s.clone())];
                records.extend((0..99).map(|k| {
                    wire(observation(
                        m.id,
                        s.id,
                        Hlc::new(UnixMillis::now().0 as u64, k + 1),
                        "simulated",
                    ))
                }));
                let t = Instant::now();
                let r = c.push(&m, &records).await;
                (r.status().as_u16(), t.elapsed())
            })
        })
        .collect();
    let mut errors = 0;
    let mut latencies = Vec::new();
    for t in tasks {
        let (status, d) = t.await.expect("task");
        if status != 200 {
            errors += 1;
        }
        latencies.push(d);
    }
    let wall = start.elapsed();
    println!(
        "\n{machines_n} machines (half in one account, half in accounts of their own) pushing 100 records each at once: \
         {errors} errors, batch latency p50 {:.0} ms, p99 {:.0} ms, all done in {:.1} s",
        pct(&mut latencies, 0.5).as_secs_f64() * 1000.0,
        pct(&mut latencies, 0.99).as_secs_f64() * 1000.0,
        wall.as_secs_f64()
    );
}
