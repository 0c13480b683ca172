//! `solaria timeline ID`: the events of a record's session around it.

use super::App;
use crate::store::views;
use crate::timefmt;
use solaria_shared::UnixMillis;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// An observation, session or summary id (as printed by search).
    id: String,
    /// Events shown before the anchor.
    #[arg(long, short, default_value_t = 5)]
    before: usize,
    /// Events shown after the anchor.
    #[arg(long, short, default_value_t = 5)]
    after: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let store = app.store()?;
        let t = views::timeline(store.conn(), &self.id, self.before, self.after)?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&t)?);
            return Ok(());
        }
        let now = UnixMillis::now();
        let s = &t.session;
        println!(
            "[S#{}] {} session in {} ({}), started {}{}",
            s.id,
            s.agent,
            s.project.name,
            s.cwd,
            timefmt::full(s.started_at),
            s.ended_at
                .map(|e| format!(", ended {}", timefmt::full(e)))
                .unwrap_or_default()
        );
        if let Some(summary) = &t.summary {
            println!("  summary: {}", summary.text);
        }
        if t.hidden_before > 0 {
            println!("  … {} earlier event(s)", t.hidden_before);
        }
        for o in &t.entries {
            let here = if t.anchor.as_deref() == Some(&o.id.to_string()) {
                ">"
            } else {
                " "
            };
            let err = if o.metadata.get("error").and_then(|v| v.as_bool()) == Some(true) {
                "  [error]"
            } else {
                ""
            };
            println!(
                "{here} [O#{}] {} {:<8} {}{err}",
                o.id,
                timefmt::short(o.created_at, now),
                o.kind.as_str(),
                o.title
            );
        }
        if t.hidden_after > 0 {
            println!("  … {} later event(s)", t.hidden_after);
        }
        Ok(())
    }
}
