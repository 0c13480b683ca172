//! The context injected at SessionStart: this project's recent session summaries
//! and observations, newest first, each line citable by id, within a token budget.

use crate::config::ContextConfig;
use crate::store::{Store, StoreError, records, views};
use crate::timefmt;
use serde_json::{Value, json};
use solaria_shared::Citation;
use solaria_shared::context::assemble;
use solaria_shared::{MachineId, Project, UnixMillis};
use std::collections::HashMap;

pub use solaria_shared::context::estimate_tokens;

/// The context for `project`, or `None` when there is nothing to say.
pub fn build(
    store: &Store,
    project: &Project,
    cfg: &ContextConfig,
    now: UnixMillis,
) -> Result<Option<String>, StoreError> {
    let conn = store.conn();
    let summaries = views::recent_summaries(conn, &project.key, cfg.max_sessions)?;
    let observations = views::recent_observations(conn, &project.key, cfg.max_observations)?;
    let conflicts = views::open_conflicts(conn)?;
    if summaries.is_empty() && observations.is_empty() && conflicts == 0 {
        return Ok(None);
    }
    let me = store.machine_id();
    let mut names: HashMap<MachineId, String> = HashMap::new();
    let mut label = |m: MachineId| -> String {
        if m == me {
            return String::new();
        }
        let name = names
            .entry(m)
            .or_insert_with(|| records::machine_name(conn, m));
        format!(" ({name})")
    };

    let mut out = format!(
        "# SOLARIA memory: project {} ({})\n\
         Earlier work on this project, newest first. Cite ids as evidence; \
         `solaria show ID` or the memory_get_observations tool returns a full record, \
         `solaria timeline ID` what happened around it.\n",
        project.name, project.key
    );
    if conflicts > 0 {
        out.push_str(&format!(
            "\nSync conflicts: {conflicts} local change(s) lost to newer versions from other \
             machines; run `solaria conflicts` to review.\n"
        ));
    }
    let summary_lines: Vec<String> = summaries
        .iter()
        .map(|s| {
            format!(
                "{} {}{} {}\n",
                Citation::session(s.session_id),
                timefmt::short(s.created_at, now),
                label(s.meta.machine_id),
                s.text
            )
        })
        .collect();
    let observation_lines: Vec<String> = observations
        .iter()
        .map(|o| {
            let flag = if o.metadata.get("error").and_then(Value::as_bool) == Some(true) {
                " [error]"
            } else {
                ""
            };
            format!(
                "{} {}{} {}{flag}\n",
                Citation::observation(o.id),
                timefmt::short(o.created_at, now),
                label(o.meta.machine_id),
                o.title
            )
        })
        .collect();
    let out = assemble(out, &summary_lines, &observation_lines, cfg.token_budget).text;
    Ok(Some(out))
}

/// The JSON Claude Code reads from a SessionStart hook's stdout.
pub fn hook_output(context: &str) -> String {
    let v = json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }
    });
    format!("{v}\n")
}
