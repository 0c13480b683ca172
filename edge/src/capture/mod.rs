//! `solaria hook <event>`: capture of Claude Code hook events (and, through
//! `opencode.rs`, of OpenCode's plugin events) straight into the store. The
//! contract: never break or slow the agent. Every failure is logged to the hook log
//! and the process still exits 0; only SessionStart (the context) and
//! UserPromptSubmit (what the prompt recalls, when anything does) print, and only
//! Claude Code's `hookSpecificOutput` JSON (OpenCode's `context` request prints the
//! plain text). `process.rs` holds a hook process's side of that contract; the
//! daemon's relay captures through the same [`handle_event`].

pub mod codex;
mod commit;
pub mod gemini;
pub mod observe;
pub mod opencode;
pub mod payload;
mod process;
mod relayed;
mod transcript;

pub use relayed::{
    Captured, SpoolFile, capture_logged, capture_spool_file, forget_spooled, handle_event,
};

use crate::config::{Config, Env, Paths};
use crate::context;
use crate::ops;
use crate::project;
use crate::store::injected::{self, Handed};
use crate::store::{Store, StoreError, Writer, records};
use observe::Bounds;
use payload::Payload;
use solaria_hook::protocol::{Event, HookEvent};
use solaria_shared::knowledge::Commit;
use solaria_shared::redact::redact;
use solaria_shared::summary;
use solaria_shared::{
    Observation, ObservationId, ObservationKind, RecordMeta, Session, SessionId, Summary,
    SummaryId, UnixMillis,
};
use std::path::Path;

/// The agent name recorded on sessions captured by these hooks.
pub const AGENT: &str = "claude-code";
/// The largest payload read from stdin; beyond it the event is dropped.
pub use solaria_hook::protocol::MAX_PAYLOAD_BYTES;

/// Runs one Claude Code hook. Never fails and never panics outward: what goes
/// wrong is logged.
pub fn run(event: HookEvent, env: &Env) {
    process::run_guarded(
        event.claude_name(),
        env,
        Event::ClaudeCode(event.arg().to_owned()),
    );
}

/// One Claude Code hook event's payload, captured into `slot`'s store as of `at`
/// (when the hook ran); what the hook prints (Claude Code's `hookSpecificOutput`
/// JSON), if anything. The hook process and the daemon's relay (`crate::relay`)
/// both answer through this.
pub fn handle(
    event: HookEvent,
    bytes: &[u8],
    at: UnixMillis,
    config: &Config,
    paths: &Paths,
    slot: &mut StoreSlot,
) -> Result<Option<String>, HookError> {
    let payload = payload::parse(bytes)?;
    let answer = Answering {
        name: event.claude_name(),
        agent: AGENT,
    };
    answer.capture(event, &payload, at, config, paths, slot)
}

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
        at: UnixMillis,
        config: &Config,
        paths: &Paths,
        slot: &mut StoreSlot,
    ) -> Result<Option<String>, HookError> {
        let name = self.name;
        slot.format_early(move |t| context::hook_output(name, &t));
        let text = capture(event, payload, self.agent, at, config, paths, slot)?;
        Ok(text.map(|t| context::hook_output(name, &t)))
    }
}

/// The store a hook writes to, opened when first needed (an event skipped by the
/// config never opens it): a hook process opens one for its one event; the daemon's
/// relay keeps one open for its life, which spares each event the open, and
/// recalls with its own model instead of asking itself over HTTP.
#[derive(Debug)]
pub struct StoreSlot {
    path: std::path::PathBuf,
    machine_name: String,
    clock_skew_ms: i64,
    store: Option<Store>,
    daemon: Option<crate::app::App>,
    /// Who waits for what this event's hook prints (the daemon's client): told as
    /// soon as it is known, before the event's own writes.
    early: Option<EarlyAnswer>,
    /// Only answers: the event's writes are left to the capture that follows, and
    /// the connection itself refuses any (`PRAGMA query_only`).
    answers_only: bool,
}

/// Hands what a hook prints to whoever waits for it.
struct EarlyAnswer(Box<dyn FnOnce(Option<String>) + Send>);

impl std::fmt::Debug for EarlyAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EarlyAnswer")
    }
}

impl StoreSlot {
    /// The store of `paths`, not opened yet; writes stamped `clock_skew_ms` off.
    pub fn new(paths: &Paths, config: &Config, clock_skew_ms: i64) -> StoreSlot {
        StoreSlot {
            path: paths.store(),
            machine_name: config.machine_name(),
            clock_skew_ms,
            store: None,
            daemon: None,
            early: None,
            answers_only: false,
        }
    }

    /// Has the next event's answer (what its hook prints, `None` for nothing)
    /// given to `answer` as soon as it is known, before that event's writes; the
    /// daemon's relay answers its client so. Neither answer depends on those
    /// writes: a session's context does not list the session starting, and a
    /// prompt's recall leaves out the prompt's own session.
    pub fn answer_early(&mut self, answer: impl FnOnce(Option<String>) + Send + 'static) {
        self.early = Some(EarlyAnswer(Box::new(answer)));
    }

    /// Drops an early answer that was not given.
    pub fn forget_early(&mut self) {
        self.early = None;
    }

    /// Puts `format` between the answer and whoever waits for it (the JSON Claude
    /// Code reads).
    fn format_early(&mut self, format: impl FnOnce(String) -> String + Send + 'static) {
        if let Some(EarlyAnswer(answer)) = self.early.take() {
            self.early = Some(EarlyAnswer(Box::new(move |text: Option<String>| {
                answer(text.map(format))
            })));
        }
    }

    /// Gives the early answer, if someone waits for one.
    fn answered(&mut self, text: Option<&str>) {
        if let Some(EarlyAnswer(answer)) = self.early.take() {
            answer(text.map(str::to_owned));
        }
    }

    /// The daemon's slot: its store, which leaves checkpoints to the daemon's
    /// checkpointer (`crate::relay::server`), and its model for recall.
    pub fn in_daemon(app: &crate::app::App) -> StoreSlot {
        StoreSlot {
            daemon: Some(app.clone()),
            ..StoreSlot::new(&app.paths, &app.config, app.clock_skew_ms)
        }
    }

    /// The daemon's read path: a slot that answers what a hook prints (a session's
    /// context, a prompt's recall) from reads alone and writes nothing, for when
    /// the capture thread is held up behind a write another process blocks. The
    /// event itself is still captured by that thread, later.
    pub fn answering_in_daemon(app: &crate::app::App) -> StoreSlot {
        StoreSlot {
            answers_only: true,
            ..StoreSlot::in_daemon(app)
        }
    }

    /// A hook process's slot that answers what its hook prints from reads alone
    /// and writes nothing: for when the store is held by another process and the
    /// event waits in the spool (see [`StoreSlot::answering_in_daemon`]).
    fn answering(paths: &Paths, config: &Config, clock_skew_ms: i64) -> StoreSlot {
        StoreSlot {
            answers_only: true,
            ..StoreSlot::new(paths, config, clock_skew_ms)
        }
    }

    /// The store, opened on first use.
    pub fn get(&mut self) -> Result<&mut Store, StoreError> {
        match &mut self.store {
            Some(store) => Ok(store),
            empty => {
                let store = Store::open(&self.path, &self.machine_name)?
                    .with_clock_skew(self.clock_skew_ms);
                if self.answers_only {
                    store.conn().pragma_update(None, "query_only", true)?;
                } else if self.daemon.is_some() {
                    // A hook waits on these writes: the daemon checkpoints apart.
                    store.defer_checkpoints()?;
                } else {
                    // A hook process: its agent waits (see `HOOK_STORE_WAIT`).
                    store.conn().busy_timeout(process::HOOK_STORE_WAIT)?;
                }
                Ok(empty.insert(store))
            }
        }
    }

    /// Closes the store (the next use opens it again): after an error, so that a
    /// connection in a bad state is not kept.
    pub fn close(&mut self) {
        self.store = None;
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

/// Captures one parsed payload for `agent` (the name recorded on its session) as
/// of `now`, when its hook ran (a relayed event may be written a moment later);
/// returns what to print (SessionStart's context, UserPromptSubmit's recall).
pub fn capture(
    event: HookEvent,
    payload: &Payload,
    agent: &str,
    now: UnixMillis,
    config: &Config,
    paths: &Paths,
    slot: &mut StoreSlot,
) -> Result<Option<String>, StoreError> {
    let cwd = payload.cwd.as_deref().unwrap_or("/");
    let project = {
        // A path is text the user controls too: no secret reaches disk through it.
        let p = project::detect(Path::new(cwd));
        solaria_shared::Project {
            key: redact(&p.key).into_owned(),
            name: redact(&p.name).into_owned(),
        }
    };
    // The branch the event happened on, text the user controls like the path.
    let branch = project::branch(Path::new(cwd)).map(|b| redact(&b).into_owned());
    if config
        .capture
        .skip_projects
        .iter()
        .any(|p| *p == project.key || *p == project.name)
    {
        return Ok(None);
    }
    if matches!(
        event,
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure
    ) {
        let tool = payload.tool_name.as_deref().unwrap_or("");
        let input = payload
            .tool_input
            .as_ref()
            .unwrap_or(&serde_json::Value::Null);
        if config.capture.skip_tools.iter().any(|t| t == tool) || observe::is_own_tool(tool, input)
        {
            return Ok(None);
        }
    }
    let answers_only = slot.answers_only;
    let store = slot.get()?;
    let bounds = Bounds {
        max_input_bytes: config.capture.max_input_bytes,
        max_response_bytes: config.capture.max_response_bytes,
    };
    match event {
        HookEvent::SessionStart => {
            let built = context::build(store, (&project, branch.as_deref()), &config.context, now)?;
            slot.answered(built.text.as_deref());
            if answers_only {
                return Ok(built.text);
            }
            slot.get()?.write(|w| {
                let (session, created) = ensure_session(w, payload, agent, &project, now)?;
                if !created && session.ended_at.is_some() {
                    w.set_session_ended(session.id, None)?;
                }
                // What the agent was handed, for the viewer to say why it knew it.
                injected::record(w, session.id, Handed::Context, &built.cited, now)
            })?;
            Ok(built.text)
        }
        HookEvent::UserPromptSubmit => {
            let prompt = payload.prompt.as_deref().unwrap_or("");
            if prompt.trim().is_empty() {
                return Ok(None);
            }
            let content = observe::prompt(prompt, bounds).on_branch(branch.as_deref());
            let write_prompt = |w: &mut Writer<'_>| {
                let (session, _) = ensure_session(w, payload, agent, &project, now)?;
                let prompt = insert(
                    w,
                    &session,
                    &project,
                    ObservationKind::Prompt,
                    None,
                    content,
                    now,
                )?;
                Ok((session.id, prompt))
            };
            // A session already known is recalled against (and answered) before its
            // prompt is written; a new one is written first, to have its id.
            let known = records::find_session_by_agent(store.conn(), agent, &payload.session_id)?
                .map(|s| s.id);
            let (session, mut write_prompt, mut prompt_id) = match known {
                Some(id) => (id, Some(write_prompt), None),
                // A session with nothing stored yet has no records to leave out.
                None if answers_only => (SessionId::new(), None, None),
                None => {
                    let (session, prompt) = store.write(write_prompt)?;
                    (session, None, Some(prompt))
                }
            };
            // Recall fails open (logged, nothing added).
            let recalled = recall(
                slot,
                config,
                paths,
                prompt,
                &project.key,
                (payload.session_id.as_str(), session),
                now,
            );
            let text = match &recalled {
                Ok(Some(recall)) => recall.additional_context(),
                _ => None,
            };
            slot.answered(text.as_deref());
            if answers_only {
                return Ok(text);
            }
            if let Some(write) = write_prompt.take() {
                prompt_id = Some(slot.get()?.write(write)?.1);
            }
            // Remembered, so that the session is not told the same thing twice, and
            // so that the viewer can say which prompt recalled what.
            let remembered = recalled.and_then(|recall| match (recall, prompt_id) {
                (Some(recall), Some(prompt)) => crate::ops::recall::remember_recalled(
                    slot.get()?,
                    (&payload.session_id, session),
                    prompt,
                    &recall,
                    now,
                ),
                _ => Ok(()),
            });
            if let Err(e) = remembered {
                log_line(paths, event.claude_name(), &format!("recall skipped: {e}"));
                return Ok(None);
            }
            Ok(text)
        }
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => {
            let tool = payload
                .tool_name
                .clone()
                .unwrap_or_else(|| "unknown".into());
            let response = match event {
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
                bounds,
            )
            .on_branch(branch.as_deref());
            let commits = match event {
                HookEvent::PostToolUse if tool == "Bash" => seen_commits(payload, cwd),
                _ => SeenCommits::default(),
            };
            // The commits go in the observation's transaction: one lock, one fsync.
            let notes = store.write(|w| {
                let (session, _) = ensure_session(w, payload, agent, &project, now)?;
                insert(
                    w,
                    &session,
                    &project,
                    ObservationKind::ToolUse,
                    Some(tool),
                    content,
                    now,
                )?;
                let mut notes = Vec::new();
                for (commit_project, c) in commits.found {
                    let stored =
                        ops::commits::store_commit(w, &commit_project, Some(session.id), c, true)?;
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
                log_line(paths, event.claude_name(), note);
            }
            Ok(None)
        }
        HookEvent::Stop | HookEvent::SessionEnd => {
            let outcome = payload.last_assistant_message.clone().or_else(|| {
                payload
                    .transcript_path
                    .as_deref()
                    .and_then(transcript::last_assistant_text)
            });
            store.write(|w| {
                let (session, _) = ensure_session(w, payload, agent, &project, now)?;
                let observations = records::observations_summarized(w.tx(), session.id)?;
                // The agent's last words belong to where it stopped, as its events do:
                // said in another project, they stay out of this project's summary.
                let outcome = outcome.filter(|_| project.key == session.project.key);
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
    }
}

/// The commits a Bash call made (see `commit.rs`), each with its project and
/// its sha made full from the repository's files; and a note for each commit
/// whose sha could not be made full (left to `solaria commits import`).
#[derive(Default)]
struct SeenCommits {
    found: Vec<(solaria_shared::Project, Commit)>,
    unresolved: Vec<String>,
}

fn seen_commits(payload: &Payload, cwd: &str) -> SeenCommits {
    let mut out = SeenCommits::default();
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
    slot: &mut StoreSlot,
    config: &Config,
    paths: &Paths,
    prompt: &str,
    project_key: &str,
    (agent_session, session): (&str, solaria_shared::SessionId),
    now: UnixMillis,
) -> Result<Option<crate::ops::recall::Recall>, StoreError> {
    if !config.recall.enabled {
        return Ok(None);
    }
    let daemon = slot.daemon.clone();
    let store = slot.get()?;
    let recall = match &daemon {
        Some(app) => crate::ops::recall::for_relayed_hook(
            app,
            config,
            store,
            prompt,
            project_key,
            (agent_session, session),
            now,
        )?,
        None => crate::ops::recall::for_hook(
            store,
            config,
            paths,
            prompt,
            project_key,
            (agent_session, session),
            now,
        )?,
    };
    Ok(Some(recall))
}

/// The session this payload belongs to, created on first sight (a missed
/// SessionStart must not lose the events that follow it).
fn ensure_session(
    w: &mut Writer<'_>,
    payload: &Payload,
    agent: &str,
    project: &solaria_shared::Project,
    now: UnixMillis,
) -> Result<(Session, bool), StoreError> {
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
