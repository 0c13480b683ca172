//! The long soak of the seeded team simulation (`tests/support/simulation.rs`):
//! many seeds, more rounds each, one line per seed; the first broken promise stops
//! it with its seed (replay: `SOLARIA_SIM_SEEDS=N cargo test -p solaria-tests --test
//! behaviour -- simulation`).
//!
//! ```sh
//! cargo build --release --workspace --bins
//! SOLARIA_SIM_COUNT=100 SOLARIA_SIM_FROM=1000 cargo bench -p solaria-tests --bench simulation
//! ```

use solaria_tests::simulation::{Plan, run};

fn number(var: &str, default: u64) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn main() {
    let from = number("SOLARIA_SIM_FROM", 100);
    let seeds = number("SOLARIA_SIM_COUNT", 50);
    let rounds = number("SOLARIA_SIM_ROUNDS", 5) as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let started = std::time::Instant::now();
    for seed in from..from + seeds {
        let report = runtime.block_on(run(Plan {
            seed,
            rounds,
            steps_per_round: 40,
        }));
        println!("{report}");
    }
    println!(
        "{seeds} seeds × {rounds} rounds: every promise held ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
}
