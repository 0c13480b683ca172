//! `solaria prune`: apply the retention policy now, on this machine only.

use solaria_edge::app::App;
use solaria_edge::store::retention::{self, Policy};
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let r = &app.config.retention;
        let policy = Policy {
            observations_days: r.observations_days,
            summaries_days: r.summaries_days,
            embeddings_days: r.embeddings_days,
            server_configured: app.server_configured(),
        };
        let mut store = app.store()?;
        let counts = retention::prune(&mut store, policy, UnixMillis::now())?;
        println!(
            "Pruned {} observation(s) older than {} days, {} summar(y/ies) older than {} days, {} empty session(s).",
            counts.observations,
            r.observations_days,
            counts.summaries,
            r.summaries_days,
            counts.sessions
        );
        if policy.server_configured {
            println!("Changes not yet pushed to the server were kept.");
        }
        Ok(())
    }
}
