//! `solaria show ID…`: full records.

use super::App;
use crate::store::records;
use crate::store::views::{self, AnyRecord};
use crate::timefmt;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Record ids (observation, session or summary), as printed by search.
    #[arg(required = true, num_args = 1..)]
    ids: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Args {
    pub fn run(self, app: &App) -> anyhow::Result<()> {
        let store = app.store()?;
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for id in &self.ids {
            match views::resolve(store.conn(), id) {
                Ok(r) => found.push(r),
                Err(crate::store::StoreError::NotFound(_)) => missing.push(id.clone()),
                Err(e) => return Err(e.into()),
            }
        }
        if self.json {
            println!("{}", serde_json::to_string_pretty(&found)?);
        } else {
            for r in &found {
                print_record(store.conn(), r);
                println!();
            }
        }
        if !missing.is_empty() {
            anyhow::bail!(
                "no record with id {} (ids come from `solaria search`)",
                missing.join(", ")
            );
        }
        Ok(())
    }
}

fn print_record(conn: &rusqlite::Connection, r: &AnyRecord) {
    match r {
        AnyRecord::Observation(o) => {
            println!("[O#{}] {} {}", o.id, o.kind, o.title);
            println!(
                "  when: {}   machine: {}   project: {} ({})",
                timefmt::full(o.created_at),
                records::machine_name(conn, o.meta.machine_id),
                o.project.name,
                o.project.key
            );
            println!("  session: [S#{}]", o.session_id);
            if o.meta.deleted {
                println!("  (forgotten: content erased)");
                return;
            }
            if let Some(tool) = &o.tool_name {
                println!("  tool: {tool}");
            }
            if !o.files.is_empty() {
                println!("  files: {}", o.files.join(", "));
            }
            if !o.tags.is_empty() {
                println!("  tags: {}", o.tags.join(", "));
            }
            println!("  metadata: {}", o.metadata);
            println!("--- input\n{}", pretty(&o.input));
            if !o.response.is_empty() {
                println!("--- response\n{}", pretty(&o.response));
            }
        }
        AnyRecord::Session(s) => {
            println!("[S#{}] {} session ({})", s.id, s.agent, s.source);
            println!(
                "  project: {} ({})   cwd: {}   machine: {}",
                s.project.name,
                s.project.key,
                s.cwd,
                records::machine_name(conn, s.meta.machine_id)
            );
            println!(
                "  started: {}   ended: {}",
                timefmt::full(s.started_at),
                s.ended_at.map(timefmt::full).unwrap_or_else(|| "-".into())
            );
            if let Ok(Some(summary)) = records::summary_of_session(conn, s.id) {
                for point in &summary.key_points {
                    println!("  - {point}");
                }
            }
        }
        AnyRecord::Summary(s) => {
            println!(
                "[S#{}] summary of {} observations",
                s.session_id, s.observation_count
            );
            println!("  id: {}   written: {}", s.id, timefmt::full(s.created_at));
            for point in &s.key_points {
                println!("  - {point}");
            }
        }
    }
}

/// Pretty-prints JSON text; other text is shown as it is.
fn pretty(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| match v {
            serde_json::Value::String(s) => Some(s),
            other => serde_json::to_string_pretty(&other).ok(),
        })
        .unwrap_or_else(|| text.to_string())
}
