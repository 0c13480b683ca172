//! The seeded team simulation (`tests/support/simulation.rs`) in the suite: a few
//! seeds, each a few rounds of faults and operations, the oracle asked after each.
//! `SOLARIA_SIM_SEEDS=7,42` replays those seeds; the long soak is
//! `cargo bench -p solaria-tests --bench simulation`.

use solaria_tests::simulation::{Plan, run};

/// The seeds the suite runs (each about 20 s here).
const SEEDS: [u64; 2] = [1, 2];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeded_team_under_faults_converges_and_keeps_every_promise() {
    let seeds: Vec<u64> = match std::env::var("SOLARIA_SIM_SEEDS") {
        Ok(seeds) => seeds
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("SOLARIA_SIM_SEEDS: numbers, comma-separated")
            })
            .collect(),
        Err(_) => SEEDS.to_vec(),
    };
    for seed in seeds {
        let report = run(Plan {
            seed,
            rounds: 3,
            steps_per_round: 30,
        })
        .await;
        eprintln!("simulation: {report}");
        assert!(
            report.injected.dropped + report.injected.lost + report.injected.duplicated > 0,
            "seed {seed} injected no fault: {report}"
        );
    }
}
