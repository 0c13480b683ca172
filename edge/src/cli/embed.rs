//! `solaria embed`: make the vectors that records wait for, now, in the foreground
//! (what `solaria serve` does in the background).

use solaria_edge::app::App;
use solaria_edge::semantic::{self, PassOptions};
use solaria_shared::UnixMillis;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop after this many seconds (the rest waits for the next run).
    #[arg(long)]
    budget: Option<u64>,
    /// Embed records of any age (default: those within `retention.embeddings_days`).
    #[arg(long)]
    all: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let model = semantic::load_model(&app.config, &app.paths)?.ok_or_else(|| {
            anyhow::anyhow!(
                "no embedding model in {}: run `solaria model install` first",
                semantic::model_dir(&app.config, &app.paths).display()
            )
        })?;
        let mut store = app.store()?;
        if self.all {
            // Records past the embeddings' retention left the queue without a vector.
            solaria_edge::store::vectors::queue_missing(&mut store)?;
        }
        let started = Instant::now();
        let options = PassOptions {
            batch: app.config.search.embed_batch,
            embed_since: if self.all {
                UnixMillis(i64::MIN)
            } else {
                semantic::embed_since(&app.config, UnixMillis::now())
            },
            budget: Duration::from_secs(self.budget.unwrap_or(u64::MAX / 4)),
        };
        let report = semantic::run_pass(&mut store, &model, options, |r| {
            eprint!("\r{} embedded, {} removed…", r.embedded, r.removed);
        })?;
        eprintln!();
        if report.rebuilt {
            println!(
                "the model changed: the old vectors were discarded and every record re-queued"
            );
        }
        println!(
            "{} vector(s) made, {} removed in {:.1} s; {} record(s) still waiting",
            report.embedded,
            report.removed,
            started.elapsed().as_secs_f64(),
            report.remaining
        );
        Ok(())
    }
}
