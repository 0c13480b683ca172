//! Team isolation as a property. A seeded simulation of two accounts: in `acme`,
//! two honest people (Alice, Carol) work in the shared project and in personal
//! ones, through real edges (the `solaria` binary: hooks, `decide`, `sync`) and
//! through machines that push hand-made honest batches (`honest.rs`), while a
//! hostile member (Bob) and a stranger of another account (Mallory) push batches
//! built to break isolation (`hostile.rs`). After each round every read path, as
//! each of them reads it, is held against an oracle of who may see what and who
//! wrote it (`oracle.rs`, `reads.rs`): any text of a personal record reaching
//! another person, any text shown in the name of someone who did not write it, any
//! honest record lost or rewritten, a session showing what its person did not
//! write, an honest personal decision superseded by someone else, or a push that
//! adds a vector model, fails the run with its seed and round.

mod honest;
mod hostile;
mod oracle;
mod reads;
mod world;

pub use world::Person;

use crate::bench::Rng;
use honest::{Clock, Held};
use oracle::Oracle;
use world::World;

/// What a run did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Report {
    pub rounds: usize,
    pub honest_records: usize,
    pub hostile_taken: usize,
    pub hostile_refused: usize,
    pub reads: usize,
}

/// Runs `rounds` rounds of the simulation from `seed`; `Err` says what broke,
/// with the seed and round to replay it.
pub async fn run(seed: u64, rounds: usize) -> Result<Report, String> {
    let world = World::new().await;
    let mut oracle = Oracle::new(seed);
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut clock = Clock::now();
    let mut held = Held::default();
    let models = world.c.count("memory_vector_models").await;
    let mut report = Report::default();
    for round in 1..=rounds {
        let at = |e: String| format!("seed {seed}, round {round}: {e}");
        report.honest_records +=
            honest::api_round(&world, &mut oracle, &mut rng, &mut clock, &mut held)
                .await
                .map_err(at)?;
        honest::edge_round(&world, &mut oracle, &mut rng, round).map_err(at)?;
        for person in [Person::Bob, Person::Mallory] {
            let (taken, refused) =
                hostile::round(&world, &mut oracle, &mut rng, &mut clock, person)
                    .await
                    .map_err(at)?;
            report.hostile_taken += taken;
            report.hostile_refused += refused;
        }
        for e in &world.edges {
            honest::sync(e).map_err(at)?;
        }
        let mut failures = Vec::new();
        for reader in Person::ALL {
            report.reads += reads::central(&world, &oracle, &mut rng, reader, &mut failures)
                .await
                .map_err(at)?;
        }
        for e in &world.edges {
            report.reads += reads::edge(&world, &oracle, e, &mut failures).map_err(at)?;
        }
        let now = world.c.count("memory_vector_models").await;
        if now != models {
            failures.push(format!(
                "the vector model registry went from {models} to {now} models"
            ));
        }
        if !failures.is_empty() {
            failures.sort();
            failures.dedup();
            return Err(at(format!(
                "{} failure(s):\n  {}",
                failures.len(),
                failures.join("\n  ")
            )));
        }
        report.rounds = round;
    }
    Ok(report)
}
