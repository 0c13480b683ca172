//! The context injected at SessionStart: this project's recent session summaries
//! and observations, newest first, each line citable by id, within a token budget.

use crate::config::ContextConfig;
use crate::store::{Store, StoreError, records, views};
use crate::timefmt;
use serde_json::{Value, json};
use solaria_shared::{MachineId, Project, UnixMillis};
use std::collections::HashMap;

/// Share of the budget that session summaries may take before observations.
const SUMMARY_SHARE: f64 = 0.6;

/// Approximate tokens of a text (about four characters per token).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

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
    let budget = cfg.token_budget.max(estimate_tokens(&out) + 1);
    let mut used = estimate_tokens(&out);
    let summary_budget = used + ((budget - used) as f64 * SUMMARY_SHARE) as usize;

    const SESSIONS_HEADING: &str = "\n## Sessions\n";
    const ACTIVITY_HEADING: &str = "\n## Recent activity\n";
    let mut summary_lines = Vec::new();
    for s in &summaries {
        let line = format!(
            "[S#{}] {}{} {}\n",
            s.session_id,
            timefmt::short(s.created_at, now),
            label(s.meta.machine_id),
            s.text
        );
        let heading = if summary_lines.is_empty() {
            SESSIONS_HEADING
        } else {
            ""
        };
        let cost = estimate_tokens(&line) + estimate_tokens(heading);
        if used + cost > summary_budget {
            break;
        }
        used += cost;
        summary_lines.push(line);
    }
    let mut observation_lines = Vec::new();
    for o in &observations {
        let flag = if o.metadata.get("error").and_then(Value::as_bool) == Some(true) {
            " [error]"
        } else {
            ""
        };
        let line = format!(
            "[O#{}] {}{} {}{flag}\n",
            o.id,
            timefmt::short(o.created_at, now),
            label(o.meta.machine_id),
            o.title
        );
        let heading = if observation_lines.is_empty() {
            ACTIVITY_HEADING
        } else {
            ""
        };
        let cost = estimate_tokens(&line) + estimate_tokens(heading);
        if used + cost > budget {
            break;
        }
        used += cost;
        observation_lines.push(line);
    }
    if !summary_lines.is_empty() {
        out.push_str(SESSIONS_HEADING);
        summary_lines.iter().for_each(|l| out.push_str(l));
    }
    if !observation_lines.is_empty() {
        out.push_str(ACTIVITY_HEADING);
        observation_lines.iter().for_each(|l| out.push_str(l));
    }
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
