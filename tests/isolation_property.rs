//! Team isolation as a property, not as seven cases: the seeded simulation of
//! `solaria_tests::isolation` (two honest people working through real edges and
//! hand-made batches, a hostile member and a stranger of another account pushing
//! everything they can build, every read path held against an oracle of who may
//! see what and who wrote it), run here on fixed seeds. A failure names its seed
//! and round: `SOLARIA_ISOLATION_SEEDS=<seed> SOLARIA_ISOLATION_ROUNDS=<round>` runs
//! that one again.
//!
//! With the central context's session parts read by session id alone again
//! (finding 1 of the security review: `of_the_session` in
//! `central/src/storage/context.rs`), seed 1 fails at its second round: a prompt
//! Alice made in her personal project, first in a session of the shared project
//! that has no summary yet, is the session's line in Bob's and Carol's context of
//! the shared project.
//!
//! The long run is a command of its own: `cargo bench -p solaria-tests --bench
//! isolation` (docs/BENCHMARKS.md).

use solaria_tests::isolation;

/// The seeds of the suite's bounded run.
const SEEDS: [u64; 2] = [1, 2];
/// Rounds per seed.
const ROUNDS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_hostile_push_shows_anyone_what_is_not_theirs_or_speaks_in_their_name() {
    let seeds: Vec<u64> = match std::env::var("SOLARIA_ISOLATION_SEEDS") {
        Ok(list) => list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect(),
        Err(_) => SEEDS.to_vec(),
    };
    let rounds = std::env::var("SOLARIA_ISOLATION_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS);
    for seed in seeds {
        let report = isolation::run(seed, rounds)
            .await
            .unwrap_or_else(|failure| panic!("{failure}"));
        assert!(
            report.hostile_refused > 0 && report.hostile_taken > 0 && report.reads > 100,
            "the run did what it is for: {report:?}"
        );
    }
}
