//! `solaria conflicts`: local changes that lost to newer versions from elsewhere.

use solaria_edge::app::App;
use solaria_edge::ops::maintenance;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Mark them seen (all listed, or these ids).
    #[arg(long)]
    ack: bool,
    /// Conflict ids to acknowledge (with --ack).
    ids: Vec<i64>,
    /// Include acknowledged ones.
    #[arg(long)]
    all: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        if self.ack {
            let n = maintenance::acknowledge_conflicts(app, &self.ids)?;
            println!("{}", solaria_edge::present::maintenance::acknowledged(n));
            return Ok(());
        }
        let page = maintenance::conflicts(app, self.all)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&page.conflicts)?);
        } else {
            print!("{}", page.text());
        }
        Ok(())
    }
}
