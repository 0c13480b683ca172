//! `solaria sync` and `solaria restore`: push this machine's changes and pull the
//! others' now; or pull the account's whole memory.

use solaria_edge::app::App;
use solaria_edge::ops::{self, OpResult};
use solaria_edge::present::sync::SyncOutcome;
use solaria_edge::sync::Progress;
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        self.report(app, |progress| ops::sync::sync_now(app, progress))
    }

    /// Runs `sync` with a spinner on a terminal (plain lines otherwise: logs,
    /// pipes, Claude Code), then prints what it did. Refused records make the
    /// exit code non-zero.
    fn report(
        &self,
        app: &App,
        sync: impl FnOnce(&mut dyn FnMut(Progress)) -> OpResult<SyncOutcome>,
    ) -> anyhow::Result<()> {
        let server = app.credentials()?.map(|c| c.server).unwrap_or_default();
        let bar = (std::io::stderr().is_terminal() && !self.json).then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(format!("syncing with {server}"));
            bar
        });
        let mut progress = |p: Progress| {
            let line = match p {
                Progress::Pushed { done, left } => format!("pushed {done}, {left} left"),
                Progress::Pulled { done } => format!("pulled {done}"),
            };
            match &bar {
                Some(bar) => bar.set_message(line),
                None if !self.json => eprintln!("{line}"),
                None => {}
            }
        };
        let outcome = sync(&mut progress);
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let outcome = outcome?;
        super::print(self.json, &outcome, || outcome.text())?;
        let refused = outcome.report.rejected.len();
        if refused > 0 {
            anyhow::bail!("{refused} record(s) were refused by the server (see above)");
        }
        Ok(())
    }
}

/// `solaria restore`: fill this machine with the account's whole memory.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {}

impl RestoreArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        Args::default().report(app, |progress| ops::sync::restore(app, progress))
    }
}
