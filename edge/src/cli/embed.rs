//! `solaria embed`: make the vectors that records wait for, now, in the foreground
//! (what `solaria serve` does in the background).

use solaria_edge::app::App;
use solaria_edge::ops::maintenance;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop after this many seconds (the rest waits for the next run).
    #[arg(long)]
    budget: Option<u64>,
    /// Embed records of any age, past `[retention] embeddings_days` when it is set.
    #[arg(long)]
    all: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let budget = self.budget.map(Duration::from_secs);
        let report = maintenance::embed(app, self.all, budget, |r| {
            eprint!("\r{} embedded, {} removed…", r.embedded, r.removed);
        })?;
        eprintln!();
        print!("{}", report.text());
        Ok(())
    }
}
