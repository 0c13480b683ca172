//! `solaria sync`: push this machine's changes and pull the others', now.

use super::App;
use crate::sync::{self, Progress, SyncOptions};
use std::io::IsTerminal;
use std::time::Duration;

/// SPEC §6: a manual sync has a 2-minute overall timeout.
const MANUAL_DEADLINE: Duration = Duration::from_secs(120);

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
        let options = SyncOptions {
            deadline: MANUAL_DEADLINE,
            kind: "manual",
            local_only: app.config.sync.local_only_projects.clone(),
        };
        let tty = std::io::stderr().is_terminal() && !self.json;
        let outcome = sync::run(&mut store, &creds, &options, |p| {
            let line = match p {
                Progress::Pushed { done, left } => format!("pushed {done}, {left} left"),
                Progress::Pulled { done } => format!("pulled {done}"),
            };
            if tty {
                eprint!("\r\x1b[2K{line}");
            } else if !self.json {
                eprintln!("{line}");
            }
        });
        if tty {
            eprint!("\r\x1b[2K");
        }
        sync::record_outcome(&mut store, &outcome)?;
        let report = outcome?;
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
