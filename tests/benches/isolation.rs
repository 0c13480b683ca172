//! The long run of the team-isolation property: the simulation of
//! `solaria_tests::isolation` (the suite runs it on two seeds, in
//! `tests/isolation_property.rs`) on many seeds and more rounds each. Prints one
//! line per seed, stops at the first failure with its seed and round, and ends
//! with the totals.
//!
//! ```sh
//! cargo build --release -p solaria-edge --bins
//! cargo bench -p solaria-tests --bench isolation                 # seeds 1..=200, 5 rounds
//! SOLARIA_ISOLATION_SEEDS=1000 SOLARIA_ISOLATION_ROUNDS=8 cargo bench -p solaria-tests --bench isolation
//! SOLARIA_ISOLATION_FROM=4242 cargo bench -p solaria-tests --bench isolation  # another range
//! ```
//!
//! It needs what the suite needs: `SOLARIA_TEST_DATABASE_URL` (a PostgreSQL with
//! pgvector, as `deploy/test.sh` starts one).

use std::time::Instant;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn main() {
    let seeds = env("SOLARIA_ISOLATION_SEEDS", 200);
    let from = env("SOLARIA_ISOLATION_FROM", 1);
    let rounds = env("SOLARIA_ISOLATION_ROUNDS", 5) as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    let mut total = solaria_tests::isolation::Report::default();
    for seed in from..from + seeds {
        let at = Instant::now();
        match runtime.block_on(solaria_tests::isolation::run(seed, rounds)) {
            Ok(r) => {
                println!(
                    "seed {seed}: {} rounds, {} honest records, hostile {} taken / {} refused, {} reads, {:.1} s",
                    r.rounds,
                    r.honest_records,
                    r.hostile_taken,
                    r.hostile_refused,
                    r.reads,
                    at.elapsed().as_secs_f64()
                );
                total.rounds += r.rounds;
                total.honest_records += r.honest_records;
                total.hostile_taken += r.hostile_taken;
                total.hostile_refused += r.hostile_refused;
                total.reads += r.reads;
            }
            Err(failure) => {
                eprintln!("{failure}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "isolation: {seeds} seeds from {from}, {} rounds, {} honest records, hostile {} taken / {} refused, {} reads, no failure, {:.0} s",
        total.rounds,
        total.honest_records,
        total.hostile_taken,
        total.hostile_refused,
        total.reads,
        started.elapsed().as_secs_f64()
    );
}
