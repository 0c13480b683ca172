//! `solaria conflicts`: local changes that lost to newer versions from elsewhere.

use solaria_edge::app::App;
use solaria_edge::store::records;
use solaria_edge::store::sync as store_sync;
use solaria_edge::timefmt;
use solaria_shared::UnixMillis;

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
        let mut store = app.store()?;
        if self.ack {
            let ids = self.ids.clone();
            let n = store.write(|w| w.acknowledge_conflicts(&ids))?;
            println!("Acknowledged {n} conflict(s).");
            return Ok(());
        }
        let list = store_sync::conflicts(store.conn(), self.all)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&list)?);
            return Ok(());
        }
        if list.is_empty() {
            println!("No conflicts.");
            return Ok(());
        }
        let now = UnixMillis::now();
        for c in &list {
            let winner = c
                .winner_machine
                .parse()
                .map(|m| records::machine_name(store.conn(), m))
                .unwrap_or_default();
            println!(
                "#{} {} {} — your change of {} lost to {winner}'s of {} (detected {}){}",
                c.id,
                c.kind,
                c.record_id,
                c.local_updated,
                c.winner_updated,
                timefmt::short(c.detected_at, now),
                if c.acknowledged { " [seen]" } else { "" }
            );
        }
        println!(
            "`solaria show ID` shows the version kept; `solaria conflicts --ack` marks these seen."
        );
        Ok(())
    }
}
