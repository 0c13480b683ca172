//! `solaria stats`: counts and facts about the local memory.

use solaria_edge::app::App;
use solaria_edge::ops::status;

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let report = status::stats(app)?;
        super::print(self.json, &report, || report.text())
    }
}
