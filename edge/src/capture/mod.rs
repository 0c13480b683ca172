//! `solaria hook <event>`: what the four agents do, captured into the store. The
//! contract: never break or slow the agent. Every failure is logged to the hook log
//! and the process still exits 0; only a session's start (the context) and a prompt
//! (what it recalls, when anything does) print.
//!
//! The path of one event, in order: the hook process (`process.rs`) or the
//! daemon's relay (`relayed.rs`: [`handle_event`]) hands the event with a
//! [`Capturing`] (when, the config, the paths, the store's [`StoreSlot`]) to its
//! agent's adapter (`claude_code.rs`, `opencode.rs`, `codex.rs`, `gemini.rs`),
//! which maps it to the payload Claude Code sends; [`capture`] finds its project
//! and skips what the config skips; then one step per kind of event
//! (`session_started`, `prompt_submitted`, `tool_used`, `session_stopped`) reads
//! and writes the store.

mod claude_code;
pub mod codex;
mod commit;
pub mod gemini;
pub mod observe;
pub mod opencode;
pub mod payload;
mod process;
mod relayed;
mod slot;
mod transcript;

pub use claude_code::{AGENT, handle, run};
pub use relayed::{
    Captured, SpoolFile, capture_logged, capture_spool_file, forget_spooled, handle_event,
};
pub use slot::StoreSlot;
/// The largest payload read from stdin; beyond it the event is dropped.
pub use solaria_hook::protocol::MAX_PAYLOAD_BYTES;

use crate::config::{Config, Paths};
use crate::context;
use crate::ops;
use crate::project;
use crate::store::injected::{self, Handed};
use crate::store::{StoreError, Writer, records};
use observe::Bounds;
use payload::Payload;
use solaria_hook::protocol::HookEvent;
use solaria_shared::knowledge::Commit;
use solaria_shared::redact::redact;
use solaria_shared::summary;
use solaria_shared::{
    Observation, ObservationId, ObservationKind, RecordMeta, Session, SessionId, Summary,
    SummaryId, UnixMillis,
};
use std::path::Path;

/// How an agent whose hooks read `hookSpecificOutput` JSON (Claude Code, Codex and
/// Gemini CLI) is answered: under its name for the event, by the agent name its
/// sessions are recorded under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answering {
    /// The agent's name for the event (`SessionStart`, `BeforeAgent`, …).
    pub name: &'static str,
    /// The agent name recorded on its sessions.
    pub agent: &'static str,
}

impl Answering {
    /// Captures `payload` as `event` and answers what it prints as that JSON, to
    /// a client waiting early too.
    pub(crate) fn capture(
        self,
        event: HookEvent,
        payload: &Payload,
        cx: &mut Capturing<'_>,
    ) -> Result<Option<String>, HookError> {
        let name = self.name;
        cx.slot
            .format_early(move |t| context::hook_output(name, &t));
        let text = capture(event, payload, self.agent, cx)?;
        Ok(text.map(|t| context::hook_output(name, &t)))
    }
}

/// Why an event was not captured.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("no payload: stdin is a terminal (hooks are run by the agent with JSON on stdin)")]
    Terminal,
    #[error("cannot read stdin: {0}")]
    Read(std::io::Error),
    #[error("payload larger than {MAX_PAYLOAD_BYTES} bytes; dropped")]
    TooLarge,
    #[error("{0}; payload dropped")]
    Payload(#[from] payload::PayloadError),
    #[error("{0}; event dropped")]
    OpenCode(#[from] opencode::AdaptError),
    #[error("unknown Claude Code hook event \"{0}\"; dropped")]
    UnknownEvent(String),
    #[error(
        "unknown Codex hook event \"{0}\" (handled: session-start, user-prompt-submit, post-tool-use, stop, session-end); dropped"
    )]
    UnknownCodexEvent(String),
    #[error(
        "unknown Gemini CLI hook event \"{0}\" (handled: session-start, before-agent, after-tool, after-agent, session-end); dropped"
    )]
    UnknownGeminiEvent(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One event being captured: when its hook ran (`at`; a relayed event may be
/// written a moment later), the config and paths in force, and the store it goes
/// into. Every agent's handler and every event's step take this one value.
#[derive(Debug)]
pub struct Capturing<'a> {
    pub at: UnixMillis,
    pub config: &'a Config,
    pub paths: &'a Paths,
    pub slot: &'a mut StoreSlot,
}

/// What one event is and where it happened: its payload, the agent recorded on
/// its session, and the project and branch of its directory.
struct Arrival<'p> {
    event: HookEvent,
    payload: &'p Payload,
    agent: &'p str,
    project: solaria_shared::Project,
    branch: Option<String>,
}

/// Captures one parsed payload for `agent` (the name recorded on its session);
/// returns what to print (SessionStart's context, UserPromptSubmit's recall).
/// Events of a skipped project or tool are not captured; each event kind is one
/// step below.
pub fn capture(
    event: HookEvent,
    payload: &Payload,
    agent: &str,
    cx: &mut Capturing<'_>,
) -> Result<Option<String>, StoreError> {
    let cwd = Path::new(payload.cwd.as_deref().unwrap_or("/"));
    let project = {
        // A path is text the user controls too: no secret reaches disk through it.
        let p = project::detect(cwd);
        solaria_shared::Project {
            key: redact(&p.key).into_owned(),
            name: redact(&p.name).into_owned(),
        }
    };
    let capture = &cx.config.capture;
    if capture
        .skip_projects
        .iter()
        .any(|p| *p == project.key || *p == project.name)
    {
        return Ok(None);
    }
    if let HookEvent::PostToolUse | HookEvent::PostToolUseFailure = event {
        let tool = payload.tool_name.as_deref().unwrap_or("");
        let input = payload
            .tool_input
            .as_ref()
            .unwrap_or(&serde_json::Value::Null);
        if capture.skip_tools.iter().any(|t| t == tool) || observe::is_own_tool(tool, input) {
            return Ok(None);
        }
    }
    let arrival = Arrival {
        event,
        payload,
        agent,
        project,
        // The branch the event happened on, text the user controls like the path.
        branch: project::branch(cwd).map(|b| redact(&b).into_owned()),
    };
    match event {
        HookEvent::SessionStart => session_started(&arrival, cx),
        HookEvent::UserPromptSubmit => prompt_submitted(&arrival, cx),
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => tool_used(&arrival, cx),
        HookEvent::Stop | HookEvent::SessionEnd => session_stopped(&arrival, cx),
    }
}

/// How much of a tool call's input and response is kept.
fn bounds(config: &Config) -> Bounds {
    Bounds {
        max_input_bytes: config.capture.max_input_bytes,
        max_response_bytes: config.capture.max_response_bytes,
    }
}

/// SessionStart: the project's context, answered first; then the session, opened
/// again if it had ended, and what it was handed.
fn session_started(a: &Arrival<'_>, cx: &mut Capturing<'_>) -> Result<Option<String>, StoreError> {
    let now = cx.at;
    let store = cx.slot.get()?;
    let built = context::build(
        store,
        (&a.project, a.branch.as_deref()),
        &cx.config.context,
        now,
    )?;
    cx.slot.answered(built.text.as_deref());
    if cx.slot.answers_only {
        return Ok(built.text);
    }
    cx.slot.get()?.write(|w| {
        let (session, created) = ensure_session(w, a, now)?;
        if !created && session.ended_at.is_some() {
            w.set_session_ended(session.id, None)?;
        }
        // What the agent was handed, for the viewer to say why it knew it.
        injected::record(w, session.id, Handed::Context, &built.cited, now)
    })?;
    Ok(built.text)
}

/// UserPromptSubmit: what the prompt recalls, answered as soon as it is known; the
/// prompt itself; and what was recalled, remembered for the session and the viewer.
fn prompt_submitted(a: &Arrival<'_>, cx: &mut Capturing<'_>) -> Result<Option<String>, StoreError> {
    let prompt = a.payload.prompt.as_deref().unwrap_or("");
    if prompt.trim().is_empty() {
        return Ok(None);
    }
    let now = cx.at;
    let answers_only = cx.slot.answers_only;
    let content = observe::prompt(prompt, bounds(cx.config)).on_branch(a.branch.as_deref());
    let write_prompt = |w: &mut Writer<'_>| {
        let (session, _) = ensure_session(w, a, now)?;
        let kind = ObservationKind::Prompt;
        let prompt = insert(w, &session, &a.project, kind, None, content, now)?;
        Ok((session.id, prompt))
    };
    // A session already known is recalled against (and answered) before its
    // prompt is written; a new one is written first, to have its id.
    let store = cx.slot.get()?;
    let known =
        records::find_session_by_agent(store.conn(), a.agent, &a.payload.session_id)?.map(|s| s.id);
    let (session, mut write_prompt, mut prompt_id) = match known {
        Some(id) => (id, Some(write_prompt), None),
        // A session with nothing stored yet has no records to leave out.
        None if answers_only => (SessionId::new(), None, None),
        None => {
            let (session, prompt) = store.write(write_prompt)?;
            (session, None, Some(prompt))
        }
    };
    let agent_session = (a.payload.session_id.as_str(), session);
    // Recall fails open (logged, nothing added).
    let recalled = recall(cx, prompt, &a.project.key, agent_session);
    let text = match &recalled {
        Ok(Some(recall)) => recall.additional_context(),
        _ => None,
    };
    cx.slot.answered(text.as_deref());
    if answers_only {
        return Ok(text);
    }
    if let Some(write) = write_prompt.take() {
        prompt_id = Some(cx.slot.get()?.write(write)?.1);
    }
    // Remembered, so that the session is not told the same thing twice, and so
    // that the viewer can say which prompt recalled what.
    let remembered = recalled.and_then(|recall| match (recall, prompt_id) {
        (Some(recall), Some(prompt)) => {
            ops::recall::remember_recalled(cx.slot.get()?, agent_session, prompt, &recall, now)
        }
        _ => Ok(()),
    });
    if let Err(e) = remembered {
        let message = format!("recall skipped: {e}");
        log_line(cx.paths, a.event.claude_name(), &message);
        return Ok(None);
    }
    Ok(text)
}

/// PostToolUse (and its failure): the call, and the commits a shell command made,
/// in one transaction.
fn tool_used(a: &Arrival<'_>, cx: &mut Capturing<'_>) -> Result<Option<String>, StoreError> {
    let payload = a.payload;
    let tool = payload
        .tool_name
        .clone()
        .unwrap_or_else(|| "unknown".into());
    let response = match a.event {
        HookEvent::PostToolUseFailure => serde_json::json!({
            "error": payload.error.clone().unwrap_or_else(|| "tool failed".into()),
            "is_error": true,
            "interrupted": payload.is_interrupt.unwrap_or(false),
        }),
        _ => payload.tool_response.clone().unwrap_or_default(),
    };
    let content = observe::tool_use(
        &tool,
        payload.tool_input.clone().unwrap_or_default(),
        response,
        payload.tool_use_id.as_deref(),
        payload.cwd.as_deref(),
        bounds(cx.config),
    )
    .on_branch(a.branch.as_deref());
    let commits = match a.event {
        HookEvent::PostToolUse if tool == "Bash" => seen_commits(payload),
        _ => SeenCommits::default(),
    };
    let now = cx.at;
    // The commits go in the observation's transaction: one lock, one fsync.
    let notes = cx.slot.get()?.write(|w| {
        let (session, _) = ensure_session(w, a, now)?;
        let kind = ObservationKind::ToolUse;
        insert(w, &session, &a.project, kind, Some(tool), content, now)?;
        let mut notes = Vec::new();
        for (commit_project, c) in commits.found {
            let stored = ops::commits::store_commit(w, &commit_project, Some(session.id), c, true)?;
            notes.extend(stored.unresolved.iter().map(|r| {
                format!(
                    "commit {}: trailer D#{r} names no decision here; not linked",
                    stored.record.citation()
                )
            }));
        }
        Ok(notes)
    })?;
    for note in commits.unresolved.iter().chain(&notes) {
        log_line(cx.paths, a.event.claude_name(), note);
    }
    Ok(None)
}

/// Stop and SessionEnd: the session's summary written again from its events and
/// the agent's last words, and the session marked ended.
fn session_stopped(a: &Arrival<'_>, cx: &mut Capturing<'_>) -> Result<Option<String>, StoreError> {
    let payload = a.payload;
    let outcome = payload.last_assistant_message.clone().or_else(|| {
        payload
            .transcript_path
            .as_deref()
            .and_then(transcript::last_assistant_text)
    });
    let now = cx.at;
    // The end of a session nothing was seen of, with nothing said in it, is no
    // session: Claude Code ends its `claude plugin …` commands this way.
    let known =
        records::find_session_by_agent(cx.slot.get()?.conn(), a.agent, &payload.session_id)?;
    if known.is_none() && outcome.as_deref().is_none_or(|o| o.trim().is_empty()) {
        return Ok(None);
    }
    cx.slot.get()?.write(|w| {
        let (session, _) = ensure_session(w, a, now)?;
        let observations = records::observations_summarized(w.tx(), session.id)?;
        // The agent's last words belong to where it stopped, as its events do:
        // said in another project, they stay out of this project's summary.
        let outcome = outcome.filter(|_| a.project.key == session.project.key);
        let draft = summary::summarize(&observations, outcome.as_deref());
        let previous = records::summary_of_session(w.tx(), session.id)?;
        let stamp = w.tick();
        let machine_id = w.machine_id();
        w.upsert_summary(&Summary {
            id: previous.as_ref().map_or_else(SummaryId::new, |p| p.id),
            meta: RecordMeta {
                machine_id,
                updated: stamp,
                deleted: false,
            },
            session_id: session.id,
            project: session.project.clone(),
            text: draft.text,
            key_points: draft.key_points,
            tags: draft.tags,
            observation_count: observations.len() as u32,
            created_at: previous.map_or(now, |p| p.created_at),
        })?;
        w.set_session_ended(session.id, Some(now))
    })?;
    Ok(None)
}

/// The commits a Bash call made (see `commit.rs`), each with its project and
/// its sha made full from the repository's files; and a note for each commit
/// whose sha could not be made full (left to `solaria commits import`).
#[derive(Default)]
struct SeenCommits {
    found: Vec<(solaria_shared::Project, Commit)>,
    unresolved: Vec<String>,
}

fn seen_commits(payload: &Payload) -> SeenCommits {
    let mut out = SeenCommits::default();
    let cwd = payload.cwd.as_deref().unwrap_or("/");
    let command = payload
        .tool_input
        .as_ref()
        .and_then(|i| i.get("command"))
        .and_then(|c| c.as_str())
        .unwrap_or("");
    let stdout = match payload.tool_response.as_ref() {
        Some(serde_json::Value::String(s)) => s.as_str(),
        Some(r) => r.get("stdout").and_then(|s| s.as_str()).unwrap_or(""),
        None => "",
    };
    // To the second, like git's own commit time (which the daemon fills in).
    let now = UnixMillis(UnixMillis::now().0.div_euclid(1000) * 1000);
    for seen in commit::seen(command, stdout, Path::new(cwd)) {
        let full = crate::gitdir::locate(&seen.dir)
            .and_then(|dirs| Some((dirs.full_sha(&seen.abbrev)?, dirs.work)));
        let Some((sha, work)) = full else {
            out.unresolved.push(format!(
                "commit {} in {}: sha not found in the repository's files; \
                 `solaria commits import` there records it",
                seen.abbrev,
                redact(&seen.dir.display().to_string())
            ));
            continue;
        };
        let commit = Commit {
            sha,
            message: seen.message.unwrap_or(seen.subject),
            branch: seen.branch,
            committed_at: now,
            complete: false,
            ..Commit::default()
        };
        out.found.push((ops::repository::project_at(&work), commit));
    }
    out
}

/// What the memory holds that `prompt` touches (`None` when recall is off),
/// recalled with the daemon's model when the daemon captures.
fn recall(
    cx: &mut Capturing<'_>,
    prompt: &str,
    project_key: &str,
    agent_session: (&str, SessionId),
) -> Result<Option<ops::recall::Recall>, StoreError> {
    let config = cx.config;
    if !config.recall.enabled {
        return Ok(None);
    }
    let daemon = cx.slot.daemon.clone();
    let store = cx.slot.get()?;
    let now = cx.at;
    let recall = match &daemon {
        Some(app) => ops::recall::for_relayed_hook(
            app,
            config,
            store,
            prompt,
            project_key,
            agent_session,
            now,
        )?,
        None => ops::recall::for_hook(
            store,
            config,
            cx.paths,
            prompt,
            project_key,
            agent_session,
            now,
        )?,
    };
    Ok(Some(recall))
}

/// The session this payload belongs to, created on first sight (a missed
/// SessionStart must not lose the events that follow it).
fn ensure_session(
    w: &mut Writer<'_>,
    a: &Arrival<'_>,
    now: UnixMillis,
) -> Result<(Session, bool), StoreError> {
    let (payload, agent, project) = (a.payload, a.agent, &a.project);
    if let Some(s) = records::find_session_by_agent(w.tx(), agent, &payload.session_id)? {
        return Ok((s, false));
    }
    let stamp = w.tick();
    let session = Session {
        id: SessionId::new(),
        meta: RecordMeta {
            machine_id: w.machine_id(),
            updated: stamp,
            deleted: false,
        },
        project: project.clone(),
        agent_session_id: payload.session_id.clone(),
        cwd: redact(payload.cwd.as_deref().unwrap_or_default()).into_owned(),
        agent: agent.to_string(),
        source: payload
            .source
            .clone()
            .unwrap_or_else(|| "unknown".to_string()),
        started_at: now,
        ended_at: None,
    };
    w.insert_session(&session)?;
    Ok((session, true))
}

/// Stores one event of `session` under `project`, the project of the event's own
/// `cwd`: a session that moves into another project (`cd` in a shell) records what
/// it does there as that project's, so a local-only project's events stay local
/// whichever project the session started in.
fn insert(
    w: &mut Writer<'_>,
    session: &Session,
    project: &solaria_shared::Project,
    kind: ObservationKind,
    tool_name: Option<String>,
    content: observe::Content,
    now: UnixMillis,
) -> Result<ObservationId, StoreError> {
    let stamp = w.tick();
    let observation = Observation {
        id: ObservationId::new(),
        meta: RecordMeta {
            machine_id: w.machine_id(),
            updated: stamp,
            deleted: false,
        },
        session_id: session.id,
        project: project.clone(),
        kind,
        tool_name,
        title: content.title,
        input: content.input,
        response: content.response,
        files: content.files,
        metadata: content.metadata,
        tags: content.tags,
        created_at: now,
    };
    w.insert_observation(&observation)?;
    Ok(observation.id)
}

/// Appends one line to the hook log (`solaria_hook::log`).
pub fn log_line(paths: &Paths, label: &str, message: &str) {
    solaria_hook::log::line(&paths.data_dir, label, message);
}
