//! `solaria prune`: apply the retention policy now, on this machine only, or
//! (`--dry-run`) say what it would remove.

use solaria_edge::app::App;
use solaria_edge::ops::maintenance;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Say what would be removed (counts per kind, the dates), removing nothing.
    #[arg(long)]
    dry_run: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        print!("{}", maintenance::prune(app, self.dry_run)?.text());
        Ok(())
    }
}
