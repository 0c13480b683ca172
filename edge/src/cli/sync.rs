//! `solaria sync`: push this machine's changes and pull the others', now.

use super::App;
use crate::sync::{self, Progress};
use std::io::IsTerminal;
use std::time::Duration;

/// A scheduled sync may take longer (a first sync of a big store); it resumes anyway.
pub const SCHEDULED_DEADLINE: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let creds = app.credentials()?.ok_or(sync::SyncError::NotLoggedIn)?;
        let mut store = app.store()?;
        // A spinner on a terminal; plain lines otherwise (logs, pipes, Claude Code).
        let bar = (std::io::stderr().is_terminal() && !self.json).then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(format!("syncing with {}", creds.server));
            bar
        });
        let local_only = app.config.sync.local_only_projects.clone();
        let outcome = sync::run_manual(&mut store, &creds, local_only, |p| {
            let line = match p {
                Progress::Pushed { done, left } => format!("pushed {done}, {left} left"),
                Progress::Pulled { done } => format!("pulled {done}"),
            };
            match &bar {
                Some(bar) => bar.set_message(line),
                None if !self.json => eprintln!("{line}"),
                None => {}
            }
        });
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let report = outcome??;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            println!(
                "Synced with {}: pushed {}, pulled {}, conflicts {}, in {:.1} s.",
                creds.server,
                report.pushed,
                report.pulled,
                report.conflicts,
                report.duration_ms as f64 / 1000.0
            );
            if report.conflicts > 0 {
                println!(
                    "Some local changes lost to newer versions from other machines: see `solaria conflicts`."
                );
            }
            for r in &report.rejected {
                println!("refused by the server: {r}");
            }
        }
        if !report.rejected.is_empty() {
            anyhow::bail!(
                "{} record(s) were refused by the server (see above)",
                report.rejected.len()
            );
        }
        Ok(())
    }
}

/// `solaria restore`: fill this machine with the account's whole memory.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {}

impl RestoreArgs {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        app.credentials()?.ok_or(sync::SyncError::NotLoggedIn)?;
        let mut store = app.store()?;
        // From the start of the feed: every record of the account, tombstones
        // included, applied with last-write-wins over what is here.
        store.write(|w| w.set_state(crate::store::sync::PULL_CURSOR_KEY, "0"))?;
        drop(store);
        Args::default().run(app)
    }
}
