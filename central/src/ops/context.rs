//! A project's context: the one context of `solaria_shared::render::context`, built
//! from PostgreSQL exactly as the edge builds it from SQLite (`core/src/context.rs`)
//! — the project's decisions and memories (`place_in_context` decides which stand),
//! its active iteration, its recent sessions with something in them, the errors
//! among its recent events with what came next, its recent commits — from every
//! machine of the account, in UTC. Each context served is logged with the sessions
//! and observations it cites.

use super::{Caller, OpError, given};
use crate::storage::Storage;
use solaria_shared::context::{
    COMMITS_WEIGHED, DEFAULT_MAX_EVENTS, DEFAULT_MAX_SESSIONS, KNOWLEDGE_WEIGHED,
    SCANNED_PER_EVENT, estimate_tokens,
};
use solaria_shared::knowledge::IterationStatus;
use solaria_shared::render::context::{
    ContextParts, EventHead, SessionLine, errors, nothing_yet, render,
};
use solaria_shared::render::{Reader, TimeStyle};
use solaria_shared::wire::{CONTEXT_DEFAULT_BUDGET, CONTEXT_MAX_BUDGET, ContextResponse};
use solaria_shared::{KnowledgeKind, MachineId, Project, UnixMillis};
use uuid::Uuid;

/// A context as asked: `GET /memory/context/{project}?budget=&session=`, or the
/// `memory_get_context` tool.
#[derive(Debug, Default)]
pub struct ContextParams {
    /// The project's key or name.
    pub project: String,
    /// Tokens at most (clamped to `1..=CONTEXT_MAX_BUDGET`).
    pub budget: Option<usize>,
    /// The agent session the context is for (logged with the injection).
    pub session: Option<String>,
}

/// The project's context within its budget; logged as served to the caller.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn context(
    storage: &Storage,
    caller: Caller,
    p: ContextParams,
) -> Result<ContextResponse, OpError> {
    let budget = p
        .budget
        .unwrap_or(CONTEXT_DEFAULT_BUDGET)
        .clamp(1, CONTEXT_MAX_BUDGET);
    let projects = storage
        .resolve_project(caller.viewer(), p.project.trim())
        .await?;
    let Some(first) = projects.first() else {
        let shown: String = p.project.chars().take(200).collect();
        return Err(OpError::NotFound(format!(
            "project `{shown}` not found: name it by its key (URL-encoded, e.g. github.com%2Facme%2Fapi) or its name"
        )));
    };
    let keys: Vec<String> = projects.iter().map(|p| p.key.clone()).collect();
    let viewer = caller.viewer();
    let knowledge = storage
        .recent_knowledge(
            viewer,
            &keys,
            &[KnowledgeKind::Decision, KnowledgeKind::Memory],
            None,
            KNOWLEDGE_WEIGHED,
        )
        .await?;
    let active_iteration = storage
        .recent_knowledge(
            viewer,
            &keys,
            &[KnowledgeKind::Iteration],
            Some(IterationStatus::Active.as_str()),
            1,
        )
        .await?
        .into_iter()
        .next();
    let recent = storage
        .context_sessions(viewer, &keys, DEFAULT_MAX_SESSIONS)
        .await?;
    let scanned = storage
        .recent_event_heads(viewer, &keys, DEFAULT_MAX_EVENTS * SCANNED_PER_EVENT)
        .await?;
    let commits = storage
        .recent_knowledge(
            viewer,
            &keys,
            &[KnowledgeKind::Commit],
            None,
            COMMITS_WEIGHED,
        )
        .await?;
    let machines: Vec<MachineId> = knowledge
        .iter()
        .chain(&commits)
        .chain(&active_iteration)
        .map(|k| k.meta.machine_id)
        .chain(recent.iter().map(|s| s.machine_id))
        .chain(scanned.iter().map(|e| e.machine_id))
        .collect();
    let names = storage.machine_labels(viewer, &machines).await?;

    let sessions: Vec<SessionLine<'_>> = recent
        .iter()
        .map(|s| SessionLine {
            session: s.id,
            started_at: s.started_at,
            machine: s.machine_id,
            agent: &s.agent,
            summary: s.summary.as_deref(),
            first_prompt: s.first_prompt.as_deref(),
            events: u64::try_from(s.events).unwrap_or_default(),
        })
        .collect();
    let heads: Vec<EventHead<'_>> = scanned
        .iter()
        .map(|e| EventHead {
            id: e.id,
            at: e.created_at,
            machine: e.machine_id,
            session: e.session_id,
            tool: e.tool_name.as_deref(),
            title: &e.title,
            error: e.error,
        })
        .collect();
    let errors = errors(&heads);
    // A name several projects share reads all of them; the heading names each key.
    let shown = Project {
        key: keys.join(", "),
        name: first.name.clone(),
    };
    let parts = ContextParts {
        project: &shown,
        knowledge: &knowledge,
        changed: &Default::default(),
        active_iteration: active_iteration.as_ref(),
        sessions: &sessions,
        errors: &errors,
        scanned: scanned.len(),
        commits: &commits,
        conflicts: 0,
        conflicts_step: None,
        max_sessions: DEFAULT_MAX_SESSIONS,
        now: UnixMillis::now(),
    };
    let rendered = render(&parts, Reader::agent(TimeStyle::Utc), &names, budget);
    let target: Option<String> = given(p.session).map(|s| s.chars().take(200).collect());
    let cited_sessions: Vec<Uuid> = rendered.sessions.iter().map(|s| *s.as_uuid()).collect();
    let cited_observations: Vec<Uuid> =
        rendered.observations.iter().map(|o| *o.as_uuid()).collect();
    storage
        .log_context_injection(
            viewer.account,
            caller.machine,
            target.as_deref(),
            &cited_sessions,
            &cited_observations,
        )
        .await?;
    let (text, budget) = match rendered.text {
        Some(text) => (text, rendered.budget),
        None => {
            let text = nothing_yet(first);
            let tokens = estimate_tokens(&text);
            (text, budget.max(tokens))
        }
    };
    Ok(ContextResponse {
        project: first.clone(),
        tokens: estimate_tokens(&text),
        budget,
        text,
        sessions: rendered.sessions,
        observations: rendered.observations,
    })
}
