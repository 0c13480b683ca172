//! The model summarizer's pass (`[summarizer]`, off by default), run by the daemon
//! between its other duties, never by a hook: it takes closed, quiet sessions of
//! this machine whose summary is still the deterministic one and has not been
//! tried as it stands, checks the spend caps, sends the session's events
//! (`distill::prompt`) to the configured program or API, and on an accepted answer
//! rewrites the summary (the same record, a new version: it syncs as any summary
//! does) and stores the proposed decisions and memories as unconfirmed memories of
//! the session. Whatever goes wrong, the deterministic summary stays and the
//! attempt is recorded with its reason, so no session is tried twice as it stands.

use super::OpResult;
use crate::app::App;
use crate::config::SummarizerConfig;
use crate::distill::answer::{self, Answer};
use crate::distill::{prompt, runner};
use crate::present::stats::SummarizerState;
use crate::store::distill::{self as ledger, Outcome, Run, Window};
use crate::store::knowledge as kstore;
use crate::store::{Store, StoreError, Writer, records};
use serde::Serialize;
use solaria_shared::context::estimate_tokens;
use solaria_shared::knowledge::{Confidence, Memory, MemoryType, Standing, WrittenBy};
use solaria_shared::{
    Citation, KnowledgeBody, KnowledgeId, RecordMeta, SessionId, Summary, UnixMillis,
};

/// The confidence of a proposal: inferred (0.50–0.79), so it is listed by
/// `solaria memories --unconfirmed` until someone confirms or drops it.
pub const PROPOSAL_CONFIDENCE: f64 = 0.6;
/// What every proposal's text starts with, and the tag it carries.
pub const PROPOSAL_MARK: &str = "(proposed by the summarizer)";
pub use crate::store::distill::PROPOSAL_TAG;

/// A proposal's text without its mark (what a confirmed memory keeps).
pub fn without_proposal_mark(text: &str) -> &str {
    text.strip_prefix(PROPOSAL_MARK)
        .map_or(text, str::trim_start)
}
/// Sessions tried per pass: a slow model must not hold the daemon's other duties
/// for long (each call is bounded by `timeout_secs` too).
const PER_PASS: usize = 4;

/// One attempt, for the daemon's log.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub session: SessionId,
    pub project: String,
    pub outcome: Outcome,
    /// Why it failed or was not sent; empty when it summarized.
    pub reason: String,
    pub tokens: u64,
    pub counted: bool,
    pub decisions: usize,
    pub memories: usize,
}

impl Attempt {
    /// The daemon's log line.
    pub fn line(&self) -> String {
        let who = format!("{} ({})", Citation::session(self.session), self.project);
        let cost = if self.counted {
            format!("{} tokens", self.tokens)
        } else {
            format!("~{} tokens, estimated", self.tokens)
        };
        match self.outcome {
            Outcome::Summarized => format!(
                "summarizer: {who} summarized ({cost}); {} decision(s) and {} memor(y/ies) proposed, unconfirmed",
                self.decisions, self.memories
            ),
            Outcome::Failed if self.tokens == 0 => format!(
                "summarizer: {who} failed: {}; the deterministic summary stays",
                self.reason
            ),
            Outcome::Failed => format!(
                "summarizer: {who} failed ({cost}): {}; the deterministic summary stays",
                self.reason
            ),
            Outcome::Capped => format!(
                "summarizer: {who} not sent: {}; the deterministic summary stays",
                self.reason
            ),
            Outcome::Skipped => format!("summarizer: {who} not sent: {}", self.reason),
        }
    }
}

/// The summarizer's configuration and the ledger's totals, for `solaria stats`.
pub fn state(
    config: &SummarizerConfig,
    store: &Store,
    now: UnixMillis,
) -> OpResult<SummarizerState> {
    Ok(SummarizerState {
        enabled: config.enabled,
        uses: runner::describe(config),
        max_tokens_per_day: config.max_tokens_per_day,
        max_tokens_per_session: config.max_tokens_per_session,
        totals: ledger::totals(store.conn(), &ledger::day_of(now))?,
    })
}

/// Tries the sessions waiting (at most a few per pass); nothing when the
/// summarizer is off.
pub fn pass(app: &App, now: UnixMillis) -> OpResult<Vec<Attempt>> {
    let config = &app.config.summarizer;
    if !config.enabled {
        return Ok(Vec::new());
    }
    let mut store = app.store()?;
    let window = Window {
        machine: store.machine_id(),
        ended_after: UnixMillis(now.0 - (config.lookback_hours as i64) * 3_600_000),
        quiet_since: UnixMillis(now.0 - (config.quiet_secs as i64) * 1_000),
        limit: PER_PASS,
    };
    let waiting = ledger::candidates(store.conn(), &window)?;
    let mut attempts = Vec::new();
    for summary in waiting {
        attempts.push(attempt(app, &mut store, &summary)?);
    }
    Ok(attempts)
}

/// One session: cap, call, parse, write; the attempt recorded whatever happens.
fn attempt(app: &App, store: &mut Store, summary: &Summary) -> OpResult<Attempt> {
    let mut run = Run {
        session: summary.session_id,
        observation_count: summary.observation_count,
        at: UnixMillis::now(),
        outcome: Outcome::Failed,
        reason: String::new(),
        tokens: 0,
        counted: false,
    };
    let local_only = crate::config::is_local_only(
        &app.config.sync.local_only_projects,
        &summary.project.key,
        &summary.project.name,
    );
    let answer = if local_only {
        run.outcome = Outcome::Skipped;
        run.reason = "a local-only project ([sync] local_only_projects) is never sent".into();
        None
    } else {
        call(app, store, summary, &mut run)?
    };
    let (decisions, memories) = match &answer {
        Some(a) => (a.decisions.len(), a.memories.len()),
        None => (0, 0),
    };
    run.at = UnixMillis::now();
    // What the model proposes is the summarizer's, whoever runs the daemon.
    store.set_writer(WrittenBy::Summarizer);
    let written = store.write(|w| {
        if let Some(a) = &answer
            && !replace(w, summary, a)?
        {
            run.outcome = Outcome::Failed;
            run.reason =
                "the session changed while it was summarized; its new summary waits its turn"
                    .into();
        }
        ledger::record(w, &run)
    });
    if let Err(e) = written {
        // The tokens are spent: record the attempt on its own so it is not sent again.
        run.outcome = Outcome::Failed;
        run.reason = format!("cannot store the answer: {e}");
        store.write(|w| ledger::record(w, &run))?;
    }
    Ok(Attempt {
        session: run.session,
        project: summary.project.name.clone(),
        outcome: run.outcome,
        reason: run.reason,
        tokens: run.tokens,
        counted: run.counted,
        decisions: if run.outcome == Outcome::Summarized {
            decisions
        } else {
            0
        },
        memories: if run.outcome == Outcome::Summarized {
            memories
        } else {
            0
        },
    })
}

/// Builds the prompt, checks the caps and calls the summarizer; the accepted
/// answer, or `None` with `run` saying why not.
fn call(
    app: &App,
    store: &Store,
    summary: &Summary,
    run: &mut Run,
) -> Result<Option<Answer>, StoreError> {
    let config = &app.config.summarizer;
    // What the summary is made from (its own project's events): a session that
    // moved into a local-only project is summarized without those events.
    let observations = records::observations_summarized(store.conn(), summary.session_id)?;
    // The agent's last message, as the deterministic summary keeps it.
    let outcome = summary
        .key_points
        .iter()
        .find_map(|p| p.strip_prefix("Outcome: "));
    let text = prompt::build(&summary.project.name, &observations, outcome);
    let needed = estimate_tokens(&text) as u64 + config.max_answer_tokens;
    if let Some(reason) = over_cap(config, store, summary.session_id, needed, run.at)? {
        run.outcome = Outcome::Capped;
        run.reason = reason;
        return Ok(None);
    }
    let work_dir = app.paths.data_dir.join("summarizer");
    let reply = match runner::run(config, &text, &work_dir) {
        Ok(reply) => reply,
        Err(e) => {
            run.tokens = e.spent();
            run.reason = e.to_string();
            return Ok(None);
        }
    };
    run.tokens = reply.tokens;
    run.counted = reply.counted;
    match answer::parse(&reply.text, config.max_answer_tokens) {
        Ok(a) => {
            run.outcome = Outcome::Summarized;
            Ok(Some(a))
        }
        Err(e) => {
            run.reason = e.to_string();
            Ok(None)
        }
    }
}

/// Why a call needing about `needed` tokens (prompt and the most the answer may
/// take) must not be made, if it must not.
fn over_cap(
    config: &SummarizerConfig,
    store: &Store,
    session: SessionId,
    needed: u64,
    now: UnixMillis,
) -> Result<Option<String>, StoreError> {
    let today = ledger::tokens_on(store.conn(), &ledger::day_of(now))?;
    if today + needed > config.max_tokens_per_day {
        return Ok(Some(format!(
            "the daily cap stopped it: {today} of {} tokens used today (UTC) and this session needs about {needed} ([summarizer] max_tokens_per_day); nothing was sent",
            config.max_tokens_per_day
        )));
    }
    let spent = ledger::tokens_of_session(store.conn(), session)?;
    if spent + needed > config.max_tokens_per_session {
        return Ok(Some(format!(
            "the per-session cap stopped it: {spent} of {} tokens used by this session and it needs about {needed} ([summarizer] max_tokens_per_session); nothing was sent",
            config.max_tokens_per_session
        )));
    }
    Ok(None)
}

/// Writes the model's summary over `old` (same record, new version) and the
/// proposals, unless the summary changed since it was read (then `false`).
fn replace(w: &mut Writer<'_>, old: &Summary, a: &Answer) -> Result<bool, StoreError> {
    let current = records::summary_of_session(w.tx(), old.session_id)?;
    if current.as_ref() != Some(old) {
        return Ok(false);
    }
    let mut key_points = a.key_points.clone();
    // The agent's last message stays a key point: a forget rebuilds the summary
    // from what is left and keeps this line (store::retention).
    key_points.extend(
        old.key_points
            .iter()
            .filter(|p| p.starts_with("Outcome: "))
            .cloned(),
    );
    let stamp = w.tick();
    w.upsert_summary(&Summary {
        meta: RecordMeta {
            machine_id: w.machine_id(),
            updated: stamp,
            deleted: false,
        },
        text: a.summary.clone(),
        key_points,
        ..old.clone()
    })?;
    propose(w, old, a)?;
    Ok(true)
}

/// The proposals as inferred memories of the session, each marked; one already
/// proposed in the session (a resumed session summarized again) is not repeated.
fn propose(w: &mut Writer<'_>, summary: &Summary, a: &Answer) -> Result<(), StoreError> {
    let mut texts: Vec<(MemoryType, String, &str)> = Vec::new();
    for d in &a.decisions {
        let mut text = format!("{PROPOSAL_MARK} decision: {} — chose {}", d.title, d.chosen);
        if !d.rationale.is_empty() {
            text.push_str(&format!("; because {}", d.rationale));
        }
        if !d.alternatives.is_empty() {
            text.push_str(&format!("; not: {}", d.alternatives.join(", ")));
        }
        texts.push((MemoryType::Fact, text, "decision"));
    }
    for m in &a.memories {
        texts.push((
            m.memory_type,
            format!("{PROPOSAL_MARK} {}", m.text),
            "memory",
        ));
    }
    let existing: Vec<String> = kstore::knowledge_of_session(w.tx(), summary.session_id)?
        .into_iter()
        .filter_map(|k| match k.body {
            KnowledgeBody::Memory(m) => Some(m.content),
            _ => None,
        })
        .collect();
    let now = UnixMillis(w.tick().physical_ms() as i64);
    let confidence = Confidence::new(PROPOSAL_CONFIDENCE).unwrap_or_default();
    for (memory_type, content, what) in texts {
        if existing.contains(&content) {
            continue;
        }
        let expires_at = memory_type
            .default_lifetime_days()
            .map(|days| UnixMillis(now.0 + days * 86_400_000));
        w.record_knowledge(
            KnowledgeId::new(),
            &summary.project,
            Some(summary.session_id),
            KnowledgeBody::Memory(Memory {
                memory_type,
                content,
                confidence,
                tags: vec![PROPOSAL_TAG.into(), format!("proposed-{what}")],
                expires_at,
                status: Standing::Active,
                supersedes: None,
                superseded_by: None,
                anchors: Default::default(),
            }),
        )?;
    }
    Ok(())
}
