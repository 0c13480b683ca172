//! What the central benches share: a tiny deterministic generator of text and the
//! percentile of a sample. Each bench keeps its own word list (its data).

use std::time::Duration;

/// Xorshift: the same sequence for the same seed, on every machine.
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn draw(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` words drawn from `words`, joined by spaces.
    pub fn words(&mut self, words: &[&str], n: usize) -> String {
        (0..n)
            .map(|_| words[(self.draw() % words.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The `q` quantile of `samples` (sorted in place), nearest rank.
pub fn pct(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}
