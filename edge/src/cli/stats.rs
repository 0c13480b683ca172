//! `solaria stats`: counts and facts about the local memory.

use super::App;
use crate::store::views;
use crate::timefmt;
use solaria_shared::UnixMillis;

#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let store = app.store()?;
        let stats = views::stats(store.conn(), store.machine_id())?;
        let semantic = crate::semantic::status(&app.config, &app.paths, &store)?;
        let size = ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", store.path().display())).ok())
            .map(|m| m.len())
            .sum::<u64>();
        if self.json {
            let mut v = crate::present::stats_json(
                &stats,
                &app.paths.data_dir,
                store.machine_id(),
                &semantic,
            )?;
            v["store_bytes"] = size.into();
            v["server"] = app
                .credentials()?
                .map(|c| c.server)
                .or(app.config.sync.server.clone())
                .into();
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(());
        }
        println!("data dir:      {}", app.paths.data_dir.display());
        println!(
            "machine:       {} ({})",
            app.config.machine_name(),
            store.machine_id()
        );
        println!("store:         {:.1} MiB", size as f64 / 1_048_576.0);
        println!("sessions:      {}", stats.sessions);
        let kinds: Vec<String> = stats
            .by_kind
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        println!(
            "observations:  {} ({})",
            stats.observations,
            kinds.join(", ")
        );
        println!("summaries:     {}", stats.summaries);
        println!(
            "projects:      {}   machines: {}",
            stats.projects, stats.machines
        );
        if let (Some(o), Some(n)) = (stats.oldest, stats.newest) {
            println!(
                "span:          {} … {}",
                timefmt::full(UnixMillis(o)),
                timefmt::full(UnixMillis(n))
            );
        }
        println!("tombstones:    {}", stats.tombstones);
        println!("search:        {}", semantic.describe());
        match &app.config.sync.server {
            Some(server) => println!(
                "sync:          {server}; {} change(s) not yet pushed",
                stats.pending_push
            ),
            None => println!("sync:          not configured (memory stays on this machine)"),
        }
        Ok(())
    }
}
