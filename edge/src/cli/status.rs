//! `solaria status`: the sync state of this machine.

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
        let state = status::sync_state(app)?;
        super::print(self.json, &state, || state.text())
    }
}
