//! Recall into each prompt: what the memory holds that a prompt touches, added to
//! it before the agent answers (UserPromptSubmit's `additionalContext`), and shown
//! by `solaria recall PROMPT`. Knowledge first (decisions and memories that
//! stand), then past sessions and events; only items whose match reaches the
//! minimum score, at most a few, each once per session. By words, and by meaning
//! too when a vector of the prompt is at hand: the daemon, whose model is loaded,
//! answers the hook within its budget (`POST /api/recall`); otherwise the hook
//! recalls by words in process, in milliseconds, never loading a model.

use super::OpResult;
use crate::app::App;
use crate::config::{RecallConfig, Recalled};
use crate::store::both_ways::{self, BothWays};
use crate::store::injected::{self, Handed};
use crate::store::rarity;
use crate::store::search::{Hit, RecordType, SearchQuery};
use crate::store::{Store, StoreError, knowledge as kstore, recalled, records};
use serde::{Deserialize, Serialize};
use solaria_shared::render::{self, DataBlock};
use solaria_shared::wire::{Author, MachineName};
use solaria_shared::{Citation, KnowledgeBody, KnowledgeId, ObservationId, SessionId, UnixMillis};

/// The longest recalled line, in characters.
const LINE_CHARS: usize = 600;
/// Items left out that `solaria recall` still shows, best first.
const SHOWN_PASSED_OVER: usize = 5;
/// Candidates read per kind before the threshold.
const CANDIDATES: usize = 10;

/// One item considered for a prompt.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Considered {
    pub cite: Citation,
    /// Who wrote the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// The line the agent is given.
    pub line: String,
    /// How well the item matches the prompt: its words and its meaning weighed as
    /// one ([`RecallConfig::score`]); what the minimum score is compared with.
    pub score: f64,
    /// The share of the prompt's weighed words the record holds, 0..=1.
    #[serde(default)]
    pub words: f64,
    /// Its similarity in meaning to the prompt (measured from the model's centre),
    /// when the prompt was weighed by meaning and the record has a vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<f64>,
    /// For a decision: the option it set aside that the prompt names. Such a
    /// decision is recalled whatever its score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names_option: Option<String>,
    /// Added to the prompt; else why not.
    pub chosen: bool,
    pub reason: String,
}

impl Considered {
    /// Whether the item is close enough to be added.
    fn passes(&self, cfg: &RecallConfig) -> bool {
        self.names_option.is_some() || self.score >= cfg.min_score
    }
}

/// What a prompt recalls.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recall {
    pub prompt: String,
    pub min_score: f64,
    #[serde(default)]
    pub min_similarity: f64,
    pub max_items: usize,
    /// Whether records were also weighed by meaning (the daemon answered).
    #[serde(default)]
    pub by_meaning: bool,
    /// Best first: chosen ones, then the rest with the reason.
    pub considered: Vec<Considered>,
}

impl Recall {
    /// The items added to the prompt.
    pub fn chosen(&self) -> impl Iterator<Item = &Considered> {
        self.considered.iter().filter(|c| c.chosen)
    }

    /// The text added to the prompt, or `None` when nothing is relevant enough: the
    /// recalled lines (each sanitized when it was made) inside one data block.
    pub fn additional_context(&self) -> Option<String> {
        let lines: String = self
            .chosen()
            .map(|c| format!("- {}\n", render::field(&c.line, LINE_CHARS)))
            .collect();
        if lines.is_empty() {
            return None;
        }
        Some(format!(
            "SOLARIA recalled these records as related to this prompt; cite what you use \
             (memory_why or memory_get_observations give the full records).\n{}",
            DataBlock::new().wrap("records recalled for this prompt", &lines)
        ))
    }

    /// `solaria recall`: the scores and what would be added.
    pub fn text(&self) -> String {
        let mut out = if self.by_meaning {
            format!(
                "Recall for {:?} by words and meaning (one score of both, minimum {:.2}, \
                 which a similarity of {:.2} reaches alone; at most {}):\n",
                self.prompt.chars().take(80).collect::<String>(),
                self.min_score,
                self.min_similarity,
                self.max_items
            )
        } else {
            format!(
                "Recall for {:?} by words (minimum score {:.2}, at most {}; by meaning \
                 too when the daemon runs with a model):\n",
                self.prompt.chars().take(80).collect::<String>(),
                self.min_score,
                self.max_items
            )
        };
        if self.considered.is_empty() {
            out.push_str("  nothing in the memory matches it\n");
        }
        // Every chosen item, and the best few of the rest (`--json` has them all).
        let mut passed_over = 0;
        for c in &self.considered {
            if !c.chosen {
                passed_over += 1;
                if passed_over > SHOWN_PASSED_OVER {
                    continue;
                }
            }
            let how = match c.meaning {
                Some(meaning) => format!("words {:.2}, meaning {meaning:.2}", c.words),
                None => format!("words {:.2}", c.words),
            };
            out.push_str(&format!(
                "  {} {:.2} ({how}) {}{}\n",
                if c.chosen { "+" } else { "-" },
                c.score,
                c.line,
                if c.chosen {
                    String::new()
                } else {
                    format!("   ({})", c.reason)
                }
            ));
        }
        if passed_over > SHOWN_PASSED_OVER {
            out.push_str(&format!(
                "  … {} more left out (`--json` lists them)\n",
                passed_over - SHOWN_PASSED_OVER
            ));
        }
        match self.additional_context() {
            Some(_) => out.push_str("`+` lines are added to the prompt.\n"),
            None => out.push_str("Nothing would be added to the prompt.\n"),
        }
        out
    }
}

/// What a prompt recalls from `store`, for the agent session `agent_session`
/// (whose own records are never recalled into it, and whose earlier recalls are
/// not repeated) in `project_key`, from that project's records only. With
/// `meaning` (the prompt's vector, made by the model of the stored vectors),
/// records near it in meaning are considered too, against `min_similarity`.
pub fn for_prompt(
    store: &Store,
    cfg: &RecallConfig,
    prompt: &str,
    project_key: &str,
    agent_session: Option<(&str, SessionId)>,
    now: UnixMillis,
    meaning: Option<&[f32]>,
) -> Result<Recall, StoreError> {
    let _snapshot = store.snapshot()?;
    let conn = store.conn();
    let mut recall = Recall {
        prompt: prompt.to_string(),
        min_score: cfg.min_score,
        min_similarity: cfg.min_similarity,
        max_items: cfg.max_items,
        by_meaning: meaning.is_some(),
        considered: Vec::new(),
    };
    if !cfg.enabled || cfg.max_items == 0 || prompt.trim().is_empty() {
        return Ok(recall);
    }
    let query = |record_type: Option<RecordType>| SearchQuery {
        text: prompt.to_string(),
        record_type,
        limit: CANDIDATES,
        current_project: Some(project_key.to_string()),
        ..SearchQuery::default()
    };
    let own_session = agent_session.map(|(_, s)| s.to_string());
    let mut knowledge: Vec<Considered> = Vec::new();
    let mut history: Vec<Considered> = Vec::new();
    // Only the prompt's project: another project's records (a local-only one's
    // among them) are never candidates, and this one's fill the candidates.
    let within = Some(project_key);
    let weights = rarity::Rarity::of(conn, prompt)?;
    let mut found = Vec::new();
    for t in [RecordType::Decision, RecordType::Memory] {
        found.extend(both_ways::candidates(
            conn,
            &query(Some(t)),
            within,
            &weights,
            meaning,
        )?);
    }
    found.extend(
        both_ways::candidates(conn, &query(None), within, &weights, meaning)?
            .into_iter()
            .filter(|c| c.hit.record_type.knowledge_kind().is_none()),
    );
    for c in &found {
        let Some(item) = considered(store, cfg, c, prompt, own_session.as_deref(), now)? else {
            continue;
        };
        let list = if c.hit.record_type.knowledge_kind().is_some() {
            &mut knowledge
        } else {
            &mut history
        };
        if !list.iter().any(|o| o.cite == item.cite) {
            list.push(item);
        }
    }
    let by_score = |a: &Considered, b: &Considered| {
        b.passes(cfg)
            .cmp(&a.passes(cfg))
            .then(b.score.total_cmp(&a.score))
    };
    knowledge.sort_by(by_score);
    history.sort_by(by_score);
    let recalled = match agent_session {
        Some((agent_id, _)) => recalled::already(store.conn(), agent_id)?,
        None => Vec::new(),
    };
    let mut chosen = 0;
    for mut c in knowledge.into_iter().chain(history) {
        if recall.considered.iter().any(|o| o.cite == c.cite) {
            continue;
        }
        let reason = if !c.passes(cfg) {
            "below the minimum score"
        } else if recalled.contains(&c.cite.to_string()) {
            "already recalled in this session"
        } else if chosen >= cfg.max_items {
            "past the most items"
        } else {
            chosen += 1;
            c.chosen = true;
            "chosen"
        };
        c.reason = match (&c.names_option, c.chosen) {
            (Some(option), true) => {
                format!("chosen: the prompt names {option:?}, an option it set aside")
            }
            _ => reason.to_string(),
        };
        recall.considered.push(c);
    }
    // Chosen first, each group in its order.
    recall.considered.sort_by_key(|c| !c.chosen);
    Ok(recall)
}

/// The item a hit stands for, or `None` when it is not for recall: the prompt's
/// own session, or knowledge that no longer stands.
fn considered(
    store: &Store,
    cfg: &RecallConfig,
    found: &BothWays,
    prompt: &str,
    own_session: Option<&str>,
    now: UnixMillis,
) -> Result<Option<Considered>, StoreError> {
    let hit = &found.hit;
    let (words, meaning) = (found.words, found.meaning);
    if hit.record_type.knowledge_kind().is_some() {
        let score = cfg.item_score(Recalled::Knowledge, words, meaning);
        let Ok(id) = hit.id.parse::<KnowledgeId>() else {
            return Ok(None);
        };
        let Some(k) = kstore::get_knowledge(store.conn(), id)? else {
            return Ok(None);
        };
        if !k.stands(now) {
            return Ok(None);
        }
        let writer = records::machine_writer(store.conn(), k.meta.machine_id);
        let names = std::collections::HashMap::from([(k.meta.machine_id, writer.clone())]);
        let names_option = match &k.body {
            KnowledgeBody::Decision(d) => d.option_set_aside_in(prompt).map(str::to_string),
            _ => None,
        };
        let line = match &names_option {
            Some(option) => render::knowledge::line_naming_option(&k, agent(), &names, option),
            None => render::knowledge::line(&k, agent(), &names),
        };
        return Ok(Some(Considered {
            cite: k.citation(),
            author: Some(writer.author()),
            line,
            score,
            words,
            meaning,
            names_option,
            chosen: false,
            reason: String::new(),
        }));
    }
    if own_session == Some(hit.session_id.as_str()) {
        return Ok(None);
    }
    let writer = hit
        .machine_id
        .parse()
        .ok()
        .map(|m| records::machine_writer(store.conn(), m));
    Ok(Some(Considered {
        cite: hit.record_type.citation(&hit.id, &hit.session_id),
        author: writer.as_ref().map(MachineName::author),
        line: history_line(hit, writer.as_ref()),
        score: cfg.item_score(Recalled::History, words, meaning),
        words,
        meaning,
        names_option: None,
        chosen: false,
        reason: String::new(),
    }))
}

/// How an agent reads recalled lines: full local times with their zone.
fn agent() -> render::Reader {
    render::Reader::agent(render::TimeStyle::Local)
}

fn history_line(hit: &Hit, writer: Option<&MachineName>) -> String {
    let machine = writer.map(MachineName::label).unwrap_or_default();
    let cite = hit.record_type.citation(&hit.id, &hit.session_id);
    render::hits::line(
        &render::hits::HitView {
            cite: &cite,
            record_type: hit.record_type,
            created_at: UnixMillis(hit.created_at),
            title: &hit.title,
            tokens: hit.tokens,
            project_name: &hit.project_name,
            machine_name: &machine,
            author: None,
            own_machine: false,
            remote: false,
            snippet: None,
            alike: 0,
        },
        agent(),
    )
}

/// Remembers what was added to a prompt of a session (`agent_session` in the
/// agent's words, `session` in ours): so that it is not added again, and so that
/// the viewer can say which prompt (`prompt`) recalled what. One transaction.
pub fn remember_recalled(
    store: &mut Store,
    (agent_session, session): (&str, SessionId),
    prompt: ObservationId,
    recall: &Recall,
    now: UnixMillis,
) -> Result<(), StoreError> {
    let cites: Vec<Citation> = recall.chosen().map(|c| c.cite.clone()).collect();
    if cites.is_empty() {
        return Ok(());
    }
    store.write(|w| {
        recalled::remember(w, agent_session, &cites, now)?;
        injected::record(w, session, Handed::Recall { prompt }, &cites, now)
    })
}

/// A recall asked of the daemon (`POST /api/recall`) by a prompt's hook or by
/// `solaria recall`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    pub prompt: String,
    pub project_key: String,
    /// The agent's session id and ours, when a hook asks (its own records are not
    /// recalled, nor what it was already given).
    pub agent_session: Option<(String, SessionId)>,
}

/// The daemon's answer: the recall by words and, when its loaded model made the
/// stored vectors, by meaning too. Writes nothing (the hook remembers what it adds).
pub fn for_request(app: &App, request: &RecallRequest) -> OpResult<Recall> {
    let store = app.store()?;
    let vector = prompt_vector(app, &store, &request.prompt);
    Ok(for_prompt(
        &store,
        &app.config.recall,
        &request.prompt,
        &request.project_key,
        request
            .agent_session
            .as_ref()
            .map(|(agent, ours)| (agent.as_str(), *ours)),
        UnixMillis::now(),
        vector.as_deref(),
    )?)
}

/// How long a prompt's hook waits for recall by meaning: `[recall] daemon_wait_ms`,
/// never so long that the hook's watchdog ends it first (half its time at most
/// leaves the recall by words room to answer).
fn hook_wait(config: &crate::config::Config) -> std::time::Duration {
    std::time::Duration::from_millis(
        config
            .recall
            .daemon_wait_ms
            .min(config.capture.hook_timeout_ms / 2),
    )
}

/// What a prompt's hook adds: the daemon's recall (by meaning and words) when it
/// answers within `[recall] daemon_wait_ms`, else by words in process.
pub fn for_hook(
    store: &Store,
    config: &crate::config::Config,
    paths: &crate::config::Paths,
    prompt: &str,
    project_key: &str,
    (agent_session, session): (&str, SessionId),
    now: UnixMillis,
) -> Result<Recall, StoreError> {
    let request = RecallRequest {
        prompt: prompt.to_string(),
        project_key: project_key.to_string(),
        agent_session: Some((agent_session.to_string(), session)),
    };
    let wait = hook_wait(config);
    if let Some(recall) = super::daemon_client::post_within(paths, "/api/recall", &request, wait) {
        return Ok(recall);
    }
    for_prompt(
        store,
        &config.recall,
        prompt,
        project_key,
        Some((agent_session, session)),
        now,
        None,
    )
}

/// The prompt's vector from this process's loaded model, when that model made the
/// stored vectors (another model's vector would be compared with meaningless ones).
fn prompt_vector(app: &App, store: &Store, prompt: &str) -> Option<Vec<f32>> {
    let index = crate::store::vectors::index_model(store.conn()).ok()??;
    vector_by(&app.config, &app.paths, &index.fingerprint, prompt)
}

/// `prompt`'s vector from this process's model, if that model is `fingerprint`.
fn vector_by(
    config: &crate::config::Config,
    paths: &crate::config::Paths,
    fingerprint: &str,
    prompt: &str,
) -> Option<Vec<f32>> {
    let model = crate::semantic::cached_model(config, paths).ok()??;
    if model.info().fingerprint != fingerprint {
        return None;
    }
    model.embed_query(prompt).ok()
}

/// What a prompt's hook adds when the daemon itself captures it (a hook relayed
/// through its socket, the edge's `relay`): by meaning too when the daemon's model gives
/// the prompt's vector within `[recall] daemon_wait_ms` (a model still loading does
/// not hold the hook), else by words — what [`for_hook`] gets from the local API.
pub fn for_relayed_hook(
    app: &App,
    config: &crate::config::Config,
    store: &Store,
    prompt: &str,
    project_key: &str,
    (agent_session, session): (&str, SessionId),
    now: UnixMillis,
) -> Result<Recall, StoreError> {
    let wait = hook_wait(config);
    let vector = crate::store::vectors::index_model(store.conn())?.and_then(|index| {
        let (config, paths, text) = (config.clone(), app.paths.clone(), prompt.to_owned());
        let (sender, vector) = std::sync::mpsc::channel();
        // Embedding on a thread of its own, so the wait can end it; a model it
        // loads stays loaded for the next prompt.
        std::thread::spawn(move || {
            let _ = sender.send(vector_by(&config, &paths, &index.fingerprint, &text));
        });
        vector.recv_timeout(wait).ok().flatten()
    });
    for_prompt(
        store,
        &config.recall,
        prompt,
        project_key,
        Some((agent_session, session)),
        now,
        vector.as_deref(),
    )
}

/// `solaria recall PROMPT`: what a prompt in the current project would recall
/// (outside any session: nothing is excluded as already recalled) — by the
/// running daemon, by meaning too, or else by words in process.
pub fn explain(app: &App, prompt: &str) -> OpResult<Recall> {
    let project = app.current_project();
    let request = RecallRequest {
        prompt: prompt.to_string(),
        project_key: project.key.clone(),
        agent_session: None,
    };
    if let Some(recall) =
        super::daemon_client::post_within(&app.paths, "/api/recall", &request, EXPLAIN_DAEMON_WAIT)
    {
        return Ok(recall);
    }
    let store = app.store()?;
    Ok(for_prompt(
        &store,
        &app.config.recall,
        prompt,
        &project.key,
        None,
        UnixMillis::now(),
        None,
    )?)
}

/// `solaria recall` is run by hand: it can wait for the daemon longer than a hook.
const EXPLAIN_DAEMON_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
