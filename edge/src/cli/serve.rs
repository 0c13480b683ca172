//! `solaria serve`: run the background agent (`solaria_edge::daemon`) in this process.

use solaria_edge::app::App;
use solaria_edge::daemon::{self, Options};
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Seconds between syncs (default: the config's `sync.interval_minutes`, 60).
    #[arg(long)]
    every: Option<u64>,
    /// Run one round (sync if logged in, prune if due, complete commits, summarize
    /// the sessions waiting when `[summarizer]` is on, embed what waits) and exit,
    /// without the local HTTP API.
    #[arg(long)]
    once: bool,
    /// Seconds between looks at the records waiting for vectors.
    #[arg(long, default_value_t = 30)]
    embed_every: u64,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        daemon::run(
            app,
            &Options {
                every: self.every.map(Duration::from_secs),
                once: self.once,
                embed_every: Duration::from_secs(self.embed_every),
            },
        );
        Ok(())
    }
}
