//! `solaria prune`: apply the retention policy now, on this machine only, or
//! (`--dry-run`) say what it would remove.

use solaria_edge::app::App;
use solaria_edge::store::retention::{self, Pruned, RetentionMode};
use solaria_edge::timefmt;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Say what would be removed (counts per kind, the dates), removing nothing.
    #[arg(long)]
    dry_run: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let retention = app.retention();
        println!("Retention is {}.", retention.describe());
        if !retention.is_on() {
            println!("Nothing was removed.");
            return Ok(());
        }
        let now = UnixMillis::now();
        let mut store = app.store()?;
        let pruned = if self.dry_run {
            retention::plan(&store, &retention, now)?
        } else {
            retention::prune(&mut store, &retention, now)?
        };
        let verb = if self.dry_run {
            "Would remove"
        } else {
            "Removed"
        };
        println!("{verb} {}.", what(&pruned));
        if retention.mode == RetentionMode::AfterServer {
            println!("Changes not yet pushed to the server are kept.");
        }
        if self.dry_run {
            println!("Nothing was removed (dry run).");
        }
        Ok(())
    }
}

/// `3 observation(s) (2 tool_use, 1 prompt), 1 summar(y/ies), 0 empty session(s), created 2026-01-02 10:00Z … 2026-02-01 09:00Z`.
fn what(p: &Pruned) -> String {
    let kinds: Vec<String> = p.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let kinds = if kinds.is_empty() {
        String::new()
    } else {
        format!(" ({})", kinds.join(", "))
    };
    let span = match (p.oldest, p.newest) {
        (Some(o), Some(n)) => format!(
            ", created {} … {}",
            timefmt::full(UnixMillis(o)),
            timefmt::full(UnixMillis(n))
        ),
        _ => String::new(),
    };
    format!(
        "{} observation(s){kinds}, {} summar(y/ies), {} empty session(s){span}",
        p.counts.observations, p.counts.summaries, p.counts.sessions
    )
}
