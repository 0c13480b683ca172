//! The context injected at SessionStart, read from this machine's store: the
//! project's knowledge (decisions, principles and preferences, open questions,
//! the active iteration), its recent sessions and its notable events (errors and
//! what came after them, commits). What fits, how each line reads and the data
//! block around them are the shared renderer's (`solaria_shared::render::context`),
//! the same as the central service's `memory_get_context`.

use crate::config::ContextConfig;
use crate::store::knowledge::{self as kstore, KnowledgeFilter};
use crate::store::{Store, StoreError, records, views};
use serde_json::json;
use solaria_shared::context::{COMMITS_WEIGHED, KNOWLEDGE_WEIGHED, SCANNED_PER_EVENT};
use solaria_shared::render::context::{ContextParts, EventHead, SessionLine, errors, render};
use solaria_shared::render::{self, TimeStyle};
use solaria_shared::{KnowledgeKind, MachineId, Project, UnixMillis};
use std::collections::BTreeMap;

pub use solaria_shared::context::estimate_tokens;

/// A context, the records it cites and why it holds what it holds.
#[derive(Debug, Clone, Default)]
pub struct Built {
    /// `None` when there is nothing to say.
    pub text: Option<String>,
    /// One sentence per choice made (`solaria context --explain`).
    pub explanation: Vec<String>,
    /// Every record the text cites, in the order it reads them.
    pub cited: Vec<solaria_shared::Citation>,
}

/// The context for `project` (its text `None` when there is nothing to say), what
/// it cites, and what was chosen and left out; on `branch`, that branch's recent
/// sessions first.
pub fn build(
    store: &Store,
    (project, branch): (&Project, Option<&str>),
    cfg: &ContextConfig,
    now: UnixMillis,
) -> Result<Built, StoreError> {
    let _snapshot = store.snapshot()?;
    let conn = store.conn();
    let knowledge = kstore::list_knowledge(
        conn,
        &KnowledgeFilter {
            include_inactive: true,
            ..KnowledgeFilter::standing_in(
                &project.key,
                &[KnowledgeKind::Decision, KnowledgeKind::Memory],
                KNOWLEDGE_WEIGHED,
            )
        },
        now,
    )?;
    // What the daemon last found changed in their code: read, never worked out here.
    let changed = crate::store::staleness::of_records(conn, knowledge.iter().map(|k| k.id))?;
    let active_iteration = kstore::active_iteration(conn, &project.key)?;
    let recent = views::recent_sessions(conn, &project.key, cfg.max_sessions, branch)?;
    let sessions: Vec<SessionLine<'_>> = recent.iter().map(views::RecentSession::line).collect();
    let scanned = views::recent_observation_heads(
        conn,
        &project.key,
        cfg.max_observations * SCANNED_PER_EVENT,
    )?;
    let heads: Vec<EventHead<'_>> = scanned
        .iter()
        .map(|o| EventHead {
            id: o.id,
            at: o.created_at,
            machine: o.machine_id,
            session: o.session_id,
            tool: o.tool_name.as_deref(),
            title: &o.title,
            error: o.error,
        })
        .collect();
    let errors = errors(&heads);
    let commits = kstore::list_knowledge(
        conn,
        &KnowledgeFilter::standing_in(&project.key, &[KnowledgeKind::Commit], COMMITS_WEIGHED),
        now,
    )?;
    let conflicts = usize::try_from(views::open_conflicts(conn)?).unwrap_or_default();
    let mut names: BTreeMap<MachineId, String> = BTreeMap::new();
    let machines = knowledge
        .iter()
        .chain(&commits)
        .chain(&active_iteration)
        .map(|k| k.meta.machine_id)
        .chain(recent.iter().map(|r| r.session.meta.machine_id))
        .chain(scanned.iter().map(|o| o.machine_id));
    for m in machines {
        names
            .entry(m)
            .or_insert_with(|| records::machine_name(conn, m));
    }
    let parts = ContextParts {
        project,
        knowledge: &knowledge,
        changed: &changed,
        active_iteration: active_iteration.as_ref(),
        sessions: &sessions,
        errors: &errors,
        scanned: scanned.len(),
        commits: &commits,
        conflicts,
        conflicts_step: Some("`solaria conflicts`"),
        max_sessions: cfg.max_sessions,
        now,
    };
    // Every line names its machine, as the central service's context does: the
    // same records read the same wherever an agent asks.
    let out = render(
        &parts,
        render::Reader::agent(TimeStyle::Local),
        &names,
        cfg.token_budget,
    );
    Ok(Built {
        text: out.text,
        explanation: out.explanation,
        cited: out.cited,
    })
}

/// The JSON Claude Code reads from a hook's stdout to add `text` to what the
/// model sees (`event`: `SessionStart` for the context, `UserPromptSubmit` for
/// what a prompt recalls).
pub fn hook_output(event: &str, text: &str) -> String {
    let v = json!({
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": text,
        }
    });
    format!("{v}\n")
}
