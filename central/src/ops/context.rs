//! A project's context: its newest summaries and observations from every machine of
//! the account, cut to a token budget, as text that cites each line; each context
//! served is logged with the observations it showed.

use super::{Caller, OpError, given};
use crate::storage::{RecentObservation, RecentSummary, Storage};
use crate::timefmt::utc;
use solaria_shared::Citation;
use solaria_shared::context::{
    ACTIVITY_HEADING, ContextPlace, KNOWLEDGE_HEADING, KNOWLEDGE_SHARE, SESSIONS_HEADING,
    SUMMARY_SHARE, Section, assemble_sections, estimate_tokens, place_in_context,
};
use solaria_shared::text::clip_line;
use solaria_shared::wire::{CONTEXT_DEFAULT_BUDGET, CONTEXT_MAX_BUDGET, ContextResponse};
use solaria_shared::{Knowledge, MachineId, ObservationId, Project, SessionId, UnixMillis};
use std::collections::HashMap;
use uuid::Uuid;

/// The longest summary line of a context, in characters.
const MAX_SUMMARY_LINE: usize = 400;
/// Decisions and memories weighed for a context (newest first), as on the edge.
const MAX_KNOWLEDGE: i64 = 60;

/// What a context is made from, newest first.
#[derive(Debug)]
struct Recent<'a> {
    knowledge: &'a [Knowledge],
    summaries: &'a [RecentSummary],
    observations: &'a [RecentObservation],
}

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
        .resolve_project(caller.account, p.project.trim())
        .await?;
    if projects.is_empty() {
        let shown: String = p.project.chars().take(200).collect();
        return Err(OpError::NotFound(format!(
            "project `{shown}` not found: name it by its key (URL-encoded, e.g. github.com%2Facme%2Fapi) or its name"
        )));
    }
    let keys: Vec<String> = projects.iter().map(|p| p.key.clone()).collect();
    // About one line per 15 tokens at most: read no more rows than could fit.
    let rows = (budget / 15 + 1).min(1000) as i64;
    let summaries = storage
        .recent_summaries(caller.account, &keys, rows)
        .await?;
    let observations = storage
        .recent_observations(caller.account, &keys, rows)
        .await?;
    let knowledge = storage
        .context_knowledge(caller.account, &keys, MAX_KNOWLEDGE)
        .await?;
    let mut machines: Vec<MachineId> = summaries.iter().map(|s| s.machine_id).collect();
    machines.extend(observations.iter().map(|o| o.machine_id));
    machines.extend(knowledge.iter().map(|k| k.meta.machine_id));
    let names = storage.machine_names(caller.account, &machines).await?;
    let recent = Recent {
        knowledge: &knowledge,
        summaries: &summaries,
        observations: &observations,
    };
    let built = build_context(&projects, budget, &recent, &names, UnixMillis::now());
    let sources: Vec<Uuid> = built.observations.iter().map(|o| *o.as_uuid()).collect();
    let target: Option<String> = given(p.session).map(|s| s.chars().take(200).collect());
    storage
        .log_context_injection(caller.account, caller.machine, target.as_deref(), &sources)
        .await?;
    Ok(ContextResponse {
        project: projects[0].clone(),
        tokens: estimate_tokens(&built.text),
        budget: built.budget,
        text: built.text,
        sessions: built.sessions,
        observations: built.observations,
    })
}

#[derive(Debug)]
struct BuiltContext {
    text: String,
    budget: usize,
    sessions: Vec<SessionId>,
    observations: Vec<ObservationId>,
}

/// The context text: a header, then the project's standing decisions, principles
/// and open questions (`place_in_context`), the summaries and the observations that
/// fit the budget (the shared rule of `solaria_shared::context`), each group newest
/// first, each line citing its id, UTC time and machine.
fn build_context(
    projects: &[Project],
    budget: usize,
    recent: &Recent<'_>,
    names: &HashMap<MachineId, String>,
    now: UnixMillis,
) -> BuiltContext {
    let (summaries, observations) = (recent.summaries, recent.observations);
    let name = |m: &MachineId| {
        names
            .get(m)
            .map_or("unknown machine", String::as_str)
            .to_string()
    };
    let keys: Vec<&str> = projects.iter().map(|p| p.key.as_str()).collect();
    let mut header = format!(
        "# SOLARIA memory: project {} ({})\n\
         The project's standing decisions and knowledge, then earlier work from every machine of \
         the account, newest first (times in UTC). Cite ids as evidence; the memory_timeline tool \
         (or GET /memory/timeline/ID) shows what happened around one, memory_why a decision's \
         reasons.\n",
        projects.first().map_or("", |p| p.name.as_str()),
        keys.join(", ")
    );
    let (mut decisions, mut principles, mut questions) = (Vec::new(), Vec::new(), Vec::new());
    for k in recent.knowledge {
        let line = format!(
            "{} {} ({}) {}\n",
            k.citation(),
            utc(k.created_at),
            name(&k.meta.machine_id),
            k.gist()
        );
        match place_in_context(k, now) {
            ContextPlace::Decision => decisions.push(line),
            ContextPlace::Principle => principles.push(line),
            ContextPlace::OpenQuestion => questions.push(line),
            ContextPlace::NotStanding | ContextPlace::LeftOut | ContextPlace::Proposal => {}
        }
    }
    let mut knowledge_lines = decisions;
    knowledge_lines.extend(principles);
    knowledge_lines.extend(questions);
    if knowledge_lines.is_empty() && summaries.is_empty() && observations.is_empty() {
        header.push_str("\nNothing recorded for this project yet.\n");
    }
    let summary_lines: Vec<String> = summaries
        .iter()
        .map(|s| {
            format!(
                "{} {} ({}) {}\n",
                Citation::session(s.session_id),
                utc(s.created_at),
                name(&s.machine_id),
                clip_line(&s.text, MAX_SUMMARY_LINE)
            )
        })
        .collect();
    let observation_lines: Vec<String> = observations
        .iter()
        .map(|o| {
            let flag = if o.error { " [error]" } else { "" };
            format!(
                "{} {} ({}) {}{flag}\n",
                Citation::observation(o.id),
                utc(o.created_at),
                name(&o.machine_id),
                clip_line(&o.title, MAX_SUMMARY_LINE)
            )
        })
        .collect();
    let built = assemble_sections(
        header,
        &[
            Section {
                heading: KNOWLEDGE_HEADING,
                lines: &knowledge_lines,
                share: KNOWLEDGE_SHARE,
            },
            Section {
                heading: SESSIONS_HEADING,
                lines: &summary_lines,
                share: SUMMARY_SHARE,
            },
            Section {
                heading: ACTIVITY_HEADING,
                lines: &observation_lines,
                share: 1.0,
            },
        ],
        budget,
    );
    BuiltContext {
        text: built.text,
        budget: built.budget,
        sessions: summaries[..built.taken[1]]
            .iter()
            .map(|s| s.session_id)
            .collect(),
        observations: observations[..built.taken[2]]
            .iter()
            .map(|o| ObservationId::from_uuid(o.id))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_never_exceeds_its_budget() {
        let m = MachineId::new();
        let names = HashMap::from([(m, "laptop".to_string())]);
        let summaries: Vec<RecentSummary> = (0..50)
            .map(|i| RecentSummary {
                session_id: SessionId::new(),
                machine_id: m,
                created_at: UnixMillis(1_700_000_000_000 - i),
                text: format!("Session {i}: fixed the refresh flow\nand more"),
            })
            .collect();
        let observations: Vec<RecentObservation> = (0..200)
            .map(|i| RecentObservation {
                id: Uuid::now_v7(),
                machine_id: m,
                created_at: UnixMillis(1_700_000_000_000 - i),
                title: format!("Bash: cargo test {i}"),
                error: i == 0,
            })
            .collect();
        let project = [Project {
            key: "github.com/acme/api".into(),
            name: "api".into(),
        }];
        let recent = Recent {
            knowledge: &[],
            summaries: &summaries,
            observations: &observations,
        };
        for budget in [1, 100, 500, 2000] {
            let built = build_context(&project, budget, &recent, &names, UnixMillis::now());
            assert!(
                estimate_tokens(&built.text) <= built.budget,
                "{budget}: {}",
                built.text
            );
            assert_eq!(built.budget, budget.max(built.budget));
        }
        let built = build_context(&project, 2000, &recent, &names, UnixMillis::now());
        assert!(!built.sessions.is_empty() && !built.observations.is_empty());
        assert!(built.text.contains(&format!(
            "[S#{}] 2023-11-14 22:13Z (laptop) Session 0: fixed the refresh flow and more",
            summaries[0].session_id
        )));
        assert!(built.text.contains(&format!("[O#{}]", observations[0].id)));
        assert!(built.text.contains("[error]"));
    }
}
