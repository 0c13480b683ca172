//! The central service's deployment shapes on this machine, measured in one run with
//! rounds interleaved: pushes and searches per second through one replica (the
//! baseline) and through three on the same database, with the reads on a streaming
//! standby, and through PgBouncer in transaction mode. Everything shares this
//! machine's cores — PostgreSQL, its standby, PgBouncer and the replicas — so the
//! ratios say what each shape costs here, not what it gains on separate hosts.
//!
//! ```sh
//! bash deploy/pg.sh install    # PgBouncer (as root)
//! cargo bench -p solaria-tests --bench replicas
//! ```

use solaria_central::storage::{Databases, Storage};
use solaria_shared::MachineId;
use solaria_shared::wire::WireRecord;
use solaria_tests::bench::{Rng, pct};
use solaria_tests::central::{Central, Machine, Options};
use solaria_tests::pg::Server;
use solaria_tests::records::{observation, session, stamp, wire};
use sqlx::{Connection, PgConnection};
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "error",
    "cargo",
    "build",
    "refresh",
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
    "query",
    "panic",
    "tokio",
    "axum",
    "sqlx",
    "commit",
    "branch",
    "migración",
    "datos",
    "prueba",
];
const MACHINES: usize = 8;
const PRELOAD_PUSHES: usize = 80;
const ROUNDS: usize = 5;
const PUSHES_EACH: usize = 6;
const SEARCHES_EACH: usize = 20;

/// One shape: the servers a request may go to, in turn.
struct Shape {
    name: &'static str,
    servers: Vec<Central>,
}

/// A push of `n` notes in a new session of `m`.
fn batch(m: MachineId, n: usize, rng: &mut Rng) -> Vec<WireRecord> {
    let s = session(m, stamp(0));
    let mut records = vec![wire(s.clone())];
    for i in 0..n {
        records.push(wire(observation(
            m,
            s.id,
            stamp(i as i64 + 1),
            &rng.words(WORDS, 8),
        )));
    }
    records
}

/// Pushes or searches of every machine at once; per-request latencies and the
/// wall time of all of them.
async fn load(
    shape: &Shape,
    machines: &[Machine],
    pushing: bool,
    seed: u64,
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let each = machines.iter().enumerate().map(|(k, m)| {
        let servers = &shape.servers;
        async move {
            let mut rng = Rng(seed ^ ((k as u64 + 1) * 0x9E37));
            let mut took = Vec::new();
            let n = if pushing { PUSHES_EACH } else { SEARCHES_EACH };
            for i in 0..n {
                let c = &servers[(k + i) % servers.len()];
                let t = Instant::now();
                if pushing {
                    let records = batch(m.id, 50, &mut rng);
                    let r = c.push(m, &records).await;
                    assert!(r.status().is_success(), "push: {}", r.status());
                } else {
                    let q = rng.words(WORDS, 2).replace(' ', "+");
                    let r = c
                        .client
                        .get(c.at(&format!("/memory/search?q={q}")))
                        .bearer_auth(&m.jwt)
                        .send()
                        .await
                        .expect("search");
                    assert!(r.status().is_success(), "search: {}", r.status());
                }
                took.push(t.elapsed());
            }
            took
        }
    });
    let took: Vec<Duration> = futures_util::future::join_all(each)
        .await
        .into_iter()
        .flatten()
        .collect();
    (took, started.elapsed())
}

async fn serve(databases: Databases<'_>) -> Central {
    let storage = Storage::connect_to(databases).await.expect("connect");
    Central::serve(storage, Options::bench()).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let primary = Server::primary();
    let standby = primary.standby();
    let pooler = primary.pooler();
    let mut admin = PgConnection::connect(&primary.url).await.expect("admin");
    sqlx::raw_sql("CREATE DATABASE solaria")
        .execute(&mut admin)
        .await
        .expect("db");
    let direct = primary.database("solaria");
    let pooled = pooler.database("solaria");
    let reads = standby.database("solaria");
    let only = |primary| Databases {
        primary,
        pooled: None,
        standby: None,
        max_connections: 16,
    };

    let setup = serve(only(&direct)).await;
    setup.storage.migrate().await.expect("migrate");
    let account = setup.account("bench").await;
    let mut machines = Vec::new();
    for i in 0..MACHINES {
        machines.push(setup.machine(account, &format!("m{i}")).await);
    }
    eprintln!("preloading {} notes…", PRELOAD_PUSHES * 500);
    let mut rng = Rng(7);
    for i in 0..PRELOAD_PUSHES {
        let m = &machines[i % MACHINES];
        setup.push_ok(m, &batch(m.id, 500, &mut rng)).await;
    }

    let shapes = vec![
        Shape {
            name: "one replica (baseline)",
            servers: vec![serve(only(&direct)).await],
        },
        Shape {
            name: "three replicas",
            servers: vec![
                serve(only(&direct)).await,
                serve(only(&direct)).await,
                serve(only(&direct)).await,
            ],
        },
        Shape {
            name: "reads on the standby",
            servers: vec![
                serve(Databases {
                    primary: &direct,
                    pooled: None,
                    standby: Some((&reads, Duration::from_secs(1))),
                    max_connections: 16,
                })
                .await,
            ],
        },
        Shape {
            name: "through PgBouncer (transaction mode)",
            servers: vec![
                serve(Databases {
                    primary: &direct,
                    pooled: Some(&pooled),
                    standby: None,
                    max_connections: 16,
                })
                .await,
            ],
        },
    ];
    // The standby answers only once it is measured within its bound.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !matches!(
        shapes[2].servers[0].storage.standby_state(),
        Some(solaria_central::storage::StandbyState::Serving { .. })
    ) {
        assert!(Instant::now() < deadline, "the standby never caught up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut pushes: Vec<(Vec<Duration>, Vec<f64>)> =
        shapes.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut searches = pushes.clone();
    for round in 0..ROUNDS {
        for (s, shape) in shapes.iter().enumerate() {
            let seed = (round * 10 + s) as u64;
            let (took, wall) = load(shape, &machines, true, seed).await;
            pushes[s].1.push(took.len() as f64 / wall.as_secs_f64());
            pushes[s].0.extend(took);
            let (took, wall) = load(shape, &machines, false, seed).await;
            searches[s].1.push(took.len() as f64 / wall.as_secs_f64());
            searches[s].0.extend(took);
        }
        eprintln!("round {} of {ROUNDS} done", round + 1);
    }

    let median = |xs: &mut Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    for (what, results) in [
        ("pushes (50 notes each)", &mut pushes),
        ("searches by words", &mut searches),
    ] {
        println!("\n{what}, {MACHINES} machines at once, {ROUNDS} rounds interleaved:");
        let base = median(&mut results[0].1.clone());
        for (s, shape) in shapes.iter().enumerate() {
            let rate = median(&mut results[s].1);
            let (p50, p95) = (pct(&mut results[s].0, 0.5), pct(&mut results[s].0, 0.95));
            println!(
                "  {:<40} {:>7.1}/s = {:.2}×   p50 {:>6.1} ms  p95 {:>6.1} ms",
                shape.name,
                rate,
                rate / base,
                p50.as_secs_f64() * 1e3,
                p95.as_secs_f64() * 1e3
            );
        }
    }
    for shape in shapes {
        for c in shape.servers {
            c.stop().await;
        }
    }
    setup.stop().await;
}
