//! `solaria serve`: the background agent — syncs on a schedule (hourly by default,
//! with jitter so a fleet does not hit the server at once) and applies the retention
//! policy weekly. Run it as a user service (`deploy/edge/solaria.service`).

use super::{App, sync};
use crate::store::retention::{self, Policy};
use crate::sync::SyncOptions;
use solaria_shared::UnixMillis;
use std::io::Write;
use std::time::Duration;

const WEEK_MS: i64 = 7 * 86_400_000;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Seconds between syncs (default: the config's `sync.interval_minutes`, 60).
    #[arg(long)]
    every: Option<u64>,
    /// Run one round (sync if logged in, prune if due) and exit.
    #[arg(long)]
    once: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let every = Duration::from_secs(
            self.every
                .unwrap_or(app.config.sync.interval_minutes.max(1) * 60)
                .max(1),
        );
        log(
            app,
            &format!("serving: sync every {every:?} (±10%), prune weekly"),
        );
        loop {
            self.round(app);
            if self.once {
                return Ok(());
            }
            std::thread::sleep(jittered(every));
        }
    }

    /// One round; failures are logged, never fatal: the next round tries again.
    fn round(&self, app: &App) {
        match app.credentials() {
            Ok(Some(creds)) => {
                let outcome = app
                    .store()
                    .map_err(|e| e.to_string())
                    .and_then(|mut store| {
                        let options = SyncOptions {
                            deadline: sync::SCHEDULED_DEADLINE,
                            kind: "batch",
                            local_only: app.config.sync.local_only_projects.clone(),
                        };
                        let result = crate::sync::run(&mut store, &creds, &options, |_| {});
                        let _ = crate::sync::record_outcome(&mut store, &result);
                        result.map_err(|e| e.to_string())
                    });
                match outcome {
                    Ok(r) => log(
                        app,
                        &format!(
                            "sync: pushed {}, pulled {}, conflicts {}",
                            r.pushed, r.pulled, r.conflicts
                        ),
                    ),
                    Err(e) => log(app, &format!("sync failed: {e}")),
                }
            }
            Ok(None) => {}
            Err(e) => log(app, &format!("cannot read credentials: {e}")),
        }
        if let Err(e) = prune_if_due(app) {
            log(app, &format!("prune failed: {e}"));
        }
    }
}

fn prune_if_due(app: &App) -> anyhow::Result<()> {
    let mut store = app.store()?;
    let now = UnixMillis::now();
    let last: i64 = crate::store::sync::state(store.conn(), "last_prune_at")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if now.0 - last < WEEK_MS {
        return Ok(());
    }
    let r = &app.config.retention;
    let policy = Policy {
        observations_days: r.observations_days,
        summaries_days: r.summaries_days,
        server_configured: app.server_configured(),
    };
    let counts = retention::prune(&mut store, policy, now)?;
    store.write(|w| w.set_state("last_prune_at", &now.0.to_string()))?;
    log(
        app,
        &format!("prune: {} record(s) past retention removed", counts.total()),
    );
    Ok(())
}

/// `every` ±10%, so that machines started together spread out.
fn jittered(every: Duration) -> Duration {
    let r = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0; // 0..=1
    every.mul_f64(0.9 + 0.2 * r)
}

fn log(app: &App, message: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let path = app.paths.data_dir.join("logs").join("serve.log");
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let line = format!(
        "{} {message}\n",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
    );
    eprint!("{line}");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}
