//! The context injected at SessionStart, knowledge first: the project's standing
//! decisions, principles and preferences, open questions and active iteration;
//! then one line per recent session; then only notable events (errors and what
//! came after them, commits). Each line is citable, the whole within the token
//! budget and under Claude Code's character cap. `explain` says what was left out.

use crate::config::ContextConfig;
use crate::store::knowledge::{self as kstore, KnowledgeFilter};
use crate::store::{Store, StoreError, records, views};
use crate::timefmt;
use serde_json::json;
use solaria_shared::context::{
    ContextPlace, KNOWLEDGE_HEADING, KNOWLEDGE_SHARE, Section, assemble_sections, place_in_context,
};
use solaria_shared::knowledge::KnowledgeBody;
use solaria_shared::{Citation, KnowledgeKind, MachineId, Project, UnixMillis};
use std::collections::HashMap;

pub use solaria_shared::context::estimate_tokens;

/// Share of what is left that session lines may take before events get the rest.
const SESSIONS_SHARE: f64 = 0.6;
/// Most decisions considered (newest first).
const MAX_DECISIONS: usize = 30;
/// Most memories considered.
const MAX_MEMORIES: usize = 30;
/// Most commits considered.
const MAX_COMMITS: usize = 10;
/// Characters of a rationale or memory on its line.
const GIST_CHARS: usize = 140;

const SESSIONS_HEADING: &str = "\n## Recent sessions\n";
const EVENTS_HEADING: &str = "\n## Notable events\n";

/// A context and why it holds what it holds.
#[derive(Debug, Clone, Default)]
pub struct Built {
    /// `None` when there is nothing to say.
    pub text: Option<String>,
    /// One sentence per choice made (`solaria context --explain`).
    pub explanation: Vec<String>,
}

/// The context for `project`, or `None` when there is nothing to say.
pub fn build(
    store: &Store,
    project: &Project,
    cfg: &ContextConfig,
    now: UnixMillis,
) -> Result<Option<String>, StoreError> {
    Ok(build_explained(store, project, cfg, now)?.text)
}

fn gist(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = one
        .split_inclusive(". ")
        .next()
        .unwrap_or(&one)
        .trim_end()
        .to_string();
    if first.chars().count() <= max {
        return first;
    }
    let mut cut: String = first.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The context for `project` and what was chosen and left out.
pub fn build_explained(
    store: &Store,
    project: &Project,
    cfg: &ContextConfig,
    now: UnixMillis,
) -> Result<Built, StoreError> {
    let _snapshot = store.snapshot()?;
    let conn = store.conn();
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
    let mut why: Vec<String> = Vec::new();

    // Knowledge: the active iteration, decisions that stand, principles and
    // preferences stated or strongly implied, open questions.
    let knowledge = kstore::list_knowledge(
        conn,
        &KnowledgeFilter {
            kinds: vec![KnowledgeKind::Decision, KnowledgeKind::Memory],
            projects: Some(vec![project.key.clone()]),
            include_inactive: true,
            limit: MAX_DECISIONS + MAX_MEMORIES,
        },
        now,
    )?;
    let mut knowledge_lines: Vec<String> = Vec::new();
    if let Some(it) = kstore::active_iteration(conn, &project.key)?
        && let KnowledgeBody::Iteration(i) = &it.body
    {
        knowledge_lines.push(format!(
            "{} active iteration ({}): {}, since {}\n",
            it.citation(),
            i.iteration_kind,
            i.title,
            timefmt::short(i.started_at, now)
        ));
    }
    let (mut decisions, mut set_aside, mut principles, mut questions, mut other_memories) =
        (Vec::new(), 0, Vec::new(), Vec::new(), 0);
    for k in &knowledge {
        match (place_in_context(k, now), &k.body) {
            (ContextPlace::NotStanding, _) => set_aside += 1,
            (ContextPlace::LeftOut, _) => other_memories += 1,
            (ContextPlace::Decision, KnowledgeBody::Decision(d)) => {
                let mut line = format!(
                    "{} {}{} decision: {} — chose {}",
                    k.citation(),
                    timefmt::short(k.created_at, now),
                    label(k.meta.machine_id),
                    d.title,
                    gist(&d.chosen, 80)
                );
                if !d.rationale.is_empty() {
                    line.push_str(&format!(" (why: {})", gist(&d.rationale, GIST_CHARS)));
                }
                line.push('\n');
                decisions.push(line);
            }
            (ContextPlace::OpenQuestion, KnowledgeBody::Memory(m)) => questions.push(format!(
                "{} open question: {}\n",
                k.citation(),
                gist(&m.content, GIST_CHARS)
            )),
            (ContextPlace::Principle, KnowledgeBody::Memory(m)) => principles.push(format!(
                "{} {}: {}\n",
                k.citation(),
                m.memory_type,
                gist(&m.content, GIST_CHARS)
            )),
            _ => {}
        }
    }
    why.push(format!(
        "knowledge: {} decision(s) that stand, {} principle(s)/preference(s), {} open question(s){}; \
         {set_aside} superseded, retracted or expired left out; {other_memories} other memories \
         (facts, inferred ones) left out — they are found by `solaria why` and search",
        decisions.len(),
        principles.len(),
        questions.len(),
        if knowledge_lines.is_empty() {
            String::new()
        } else {
            ", the active iteration".into()
        }
    ));
    knowledge_lines.extend(decisions);
    knowledge_lines.extend(principles);
    knowledge_lines.extend(questions);

    // Sessions: one line each, those in which something happened: the summary,
    // or the first prompt of one not summed up (yet).
    let sessions = views::recent_sessions(conn, &project.key, cfg.max_sessions)?;
    let session_lines: Vec<String> = sessions
        .iter()
        .map(|r| {
            let gist_text = match (&r.summary, &r.first_prompt) {
                (Some(s), _) => gist(&s.text, 200),
                (None, Some(p)) => {
                    format!("(no summary yet, {} events) {}", r.events, gist(p, 200))
                }
                (None, None) => format!("(no summary yet, {} events)", r.events),
            };
            format!(
                "{} {}{} {}\n",
                Citation::session(r.session.id),
                timefmt::short(r.session.started_at, now),
                label(r.session.meta.machine_id),
                gist_text
            )
        })
        .collect();
    why.push(format!(
        "sessions: the {} most recent in which something was captured (at most {}); empty sessions are never listed",
        session_lines.len(),
        cfg.max_sessions
    ));

    // Notable events: errors (with what came next in their session), commits.
    let scanned = views::recent_observation_heads(conn, &project.key, cfg.max_observations * 5)?;
    let mut events: Vec<(UnixMillis, String)> = Vec::new();
    for (i, o) in scanned.iter().enumerate() {
        if !o.error {
            continue;
        }
        // Newest first: what came after an error is before it in the list.
        let next = scanned[..i]
            .iter()
            .rev()
            .find(|n| n.session_id == o.session_id && n.tool_name == o.tool_name && !n.error);
        let mut line = format!(
            "{} {}{} [error] {}",
            Citation::observation(o.id),
            timefmt::short(o.created_at, now),
            label(o.machine_id),
            o.title
        );
        if let Some(n) = next {
            line.push_str(&format!(
                " → then {} {}",
                Citation::observation(n.id),
                n.title
            ));
        }
        line.push('\n');
        events.push((o.created_at, line));
    }
    let errors = events.len();
    let commits = kstore::list_knowledge(
        conn,
        &KnowledgeFilter {
            kinds: vec![KnowledgeKind::Commit],
            projects: Some(vec![project.key.clone()]),
            include_inactive: false,
            limit: MAX_COMMITS,
        },
        now,
    )?;
    for c in &commits {
        events.push((
            c.created_at,
            format!(
                "{} {}{} commit: {}\n",
                c.citation(),
                timefmt::short(c.created_at, now),
                label(c.meta.machine_id),
                c.title()
            ),
        ));
    }
    events.sort_by_key(|e| std::cmp::Reverse(e.0));
    let event_lines: Vec<String> = events.into_iter().map(|(_, l)| l).collect();
    why.push(format!(
        "events: of the {} most recent, {errors} error(s) kept (each with what came next in its session) \
         and {} commit(s); file reads, searches and routine tool calls are left out (the session \
         lines sum them up; search finds them)",
        scanned.len(),
        commits.len()
    ));

    let conflicts = views::open_conflicts(conn)?;
    if knowledge_lines.is_empty()
        && session_lines.is_empty()
        && event_lines.is_empty()
        && conflicts == 0
    {
        why.push("nothing to say: no knowledge, no session with events, no notable event".into());
        return Ok(Built {
            text: None,
            explanation: why,
        });
    }
    let mut header = format!(
        "# SOLARIA memory: project {} ({})\n\
         What was decided and what happened before, newest first. Cite ids as evidence; \
         `solaria show ID` or the memory_get_observations tool returns a full record, \
         memory_why the reasons behind a decision.\n",
        project.name, project.key
    );
    if conflicts > 0 {
        header.push_str(&format!(
            "\nSync conflicts: {conflicts} local change(s) lost to newer versions from other \
             machines; run `solaria conflicts` to review.\n"
        ));
    }
    let sections = [
        Section {
            heading: KNOWLEDGE_HEADING,
            lines: &knowledge_lines,
            share: KNOWLEDGE_SHARE,
        },
        Section {
            heading: SESSIONS_HEADING,
            lines: &session_lines,
            share: SESSIONS_SHARE,
        },
        Section {
            heading: EVENTS_HEADING,
            lines: &event_lines,
            share: 1.0,
        },
    ];
    let out = assemble_sections(header, &sections, cfg.token_budget);
    for (section, taken) in sections.iter().zip(&out.taken) {
        if *taken < section.lines.len() {
            why.push(format!(
                "budget: {} of {} line(s) under \"{}\" fit; the rest was cut",
                taken,
                section.lines.len(),
                section.heading.trim().trim_start_matches("## ")
            ));
        }
    }
    why.push(format!(
        "size: about {} of {} tokens ({} characters; Claude Code shows at most {} whole)",
        estimate_tokens(&out.text),
        out.budget,
        out.text.chars().count(),
        solaria_shared::context::HOOK_OUTPUT_MAX_CHARS
    ));
    Ok(Built {
        text: Some(out.text),
        explanation: why,
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
