//! Recall into each prompt: what the memory holds that a prompt touches, added to
//! it before the agent answers (UserPromptSubmit's `additionalContext`), and shown
//! by `solaria recall PROMPT`. Knowledge first (decisions and memories that
//! stand), then past sessions and events; only items whose match reaches the
//! minimum score, at most a few, each once per session. Words only, in process: a
//! hook must answer in milliseconds and never wait on a model.

use super::OpResult;
use crate::app::App;
use crate::config::RecallConfig;
use crate::present::Reader;
use crate::store::search::{self, Hit, RecordType, SearchQuery};
use crate::store::{Store, StoreError, knowledge as kstore, records};
use crate::timefmt;
use rusqlite::params;
use serde::Serialize;
use solaria_shared::{Citation, KnowledgeId, SessionId, UnixMillis};

/// The least share of a prompt an item must hold unless configured otherwise
/// (`store::search::Candidate::share`: about a third of the prompt's weighted
/// words when they are in its title, more elsewhere). Measured on the cases of
/// `tests/recall.rs`: prompts about a recorded decision hold 0.36–0.60 of it, a
/// prompt repeating an earlier one 0.86, unrelated prompts match nothing or at
/// most 0.08. Provisional until the labelled evaluation (`eval/`) measures it.
pub const DEFAULT_MIN_SCORE: f64 = 0.3;
/// Items left out that `solaria recall` still shows, best first.
const SHOWN_PASSED_OVER: usize = 5;
/// Candidates read per kind before the threshold.
const CANDIDATES: usize = 10;
/// Recalled items are remembered this long per session.
const REMEMBERED_MS: i64 = 7 * 86_400_000;

/// One item considered for a prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Considered {
    pub cite: Citation,
    /// The line the agent is given.
    pub line: String,
    /// The match, 0–1 (see [`DEFAULT_MIN_SCORE`]).
    pub score: f64,
    /// Added to the prompt; else why not.
    pub chosen: bool,
    pub reason: &'static str,
}

/// What a prompt recalls.
#[derive(Debug, Clone, Serialize)]
pub struct Recall {
    pub prompt: String,
    pub min_score: f64,
    pub max_items: usize,
    /// Best first: chosen ones, then the rest with the reason.
    pub considered: Vec<Considered>,
}

impl Recall {
    /// The items added to the prompt.
    pub fn chosen(&self) -> impl Iterator<Item = &Considered> {
        self.considered.iter().filter(|c| c.chosen)
    }

    /// The text added to the prompt, or `None` when nothing is relevant enough.
    pub fn additional_context(&self) -> Option<String> {
        let lines: Vec<&str> = self.chosen().map(|c| c.line.as_str()).collect();
        if lines.is_empty() {
            return None;
        }
        Some(format!(
            "SOLARIA memory related to this prompt (cite what you use; memory_why or \
             memory_get_observations give the full records):\n{}\n",
            lines
                .iter()
                .map(|l| format!("- {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        ))
    }

    /// `solaria recall`: the scores and what would be added.
    pub fn text(&self) -> String {
        let mut out = format!(
            "Recall for {:?} (minimum score {:.2}, at most {}):\n",
            self.prompt.chars().take(80).collect::<String>(),
            self.min_score,
            self.max_items
        );
        if self.considered.is_empty() {
            out.push_str("  nothing in the memory matches its words\n");
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
            out.push_str(&format!(
                "  {} {:.2} {}{}\n",
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
/// not repeated) in `project_key`.
pub fn for_prompt(
    store: &Store,
    cfg: &RecallConfig,
    prompt: &str,
    project_key: &str,
    agent_session: Option<(&str, SessionId)>,
    now: UnixMillis,
) -> Result<Recall, StoreError> {
    let conn = store.conn();
    let mut recall = Recall {
        prompt: prompt.to_string(),
        min_score: cfg.min_score,
        max_items: cfg.max_items,
        considered: Vec::new(),
    };
    if !cfg.enabled || cfg.max_items == 0 || search::query_terms(prompt).is_empty() {
        return Ok(recall);
    }
    let query = |record_type: Option<RecordType>| SearchQuery {
        text: prompt.to_string(),
        record_type,
        limit: CANDIDATES,
        current_project: Some(project_key.to_string()),
        ..SearchQuery::default()
    };
    let mut knowledge: Vec<Considered> = Vec::new();
    for t in [RecordType::Decision, RecordType::Memory] {
        for (hit, score) in search::search_with_share(conn, &query(Some(t)))? {
            let Ok(id) = hit.id.parse::<KnowledgeId>() else {
                continue;
            };
            let Some(k) = kstore::get_knowledge(conn, id)? else {
                continue;
            };
            if !k.stands(now) {
                continue;
            }
            knowledge.push(Considered {
                cite: k.citation(),
                line: crate::present::knowledge::line(&k, Reader::Agent),
                score,
                chosen: false,
                reason: "",
            });
        }
    }
    let mut history: Vec<Considered> = Vec::new();
    let own_session = agent_session.map(|(_, s)| s.to_string());
    for (hit, score) in search::search_with_share(conn, &query(None))? {
        if hit.record_type.knowledge_kind().is_some()
            || own_session.as_deref() == Some(hit.session_id.as_str())
        {
            continue;
        }
        history.push(Considered {
            cite: hit.record_type.citation(&hit.id, &hit.session_id),
            line: history_line(&hit, store),
            score,
            chosen: false,
            reason: "",
        });
    }
    let by_score = |a: &Considered, b: &Considered| b.score.total_cmp(&a.score);
    knowledge.sort_by(by_score);
    history.sort_by(by_score);
    let recalled = match agent_session {
        Some((agent_id, _)) => already_recalled(store, agent_id)?,
        None => Vec::new(),
    };
    let mut chosen = 0;
    for mut c in knowledge.into_iter().chain(history) {
        if recall.considered.iter().any(|o| o.cite == c.cite) {
            continue;
        }
        c.reason = if c.score < cfg.min_score {
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
        recall.considered.push(c);
    }
    // Chosen first, each group in its order.
    recall.considered.sort_by_key(|c| !c.chosen);
    Ok(recall)
}

fn history_line(hit: &Hit, store: &Store) -> String {
    let machine = hit
        .machine_id
        .parse()
        .map(|m| records::machine_name(store.conn(), m))
        .unwrap_or_default();
    format!(
        "{} {} {} {} (@{machine})",
        hit.record_type.citation(&hit.id, &hit.session_id),
        timefmt::full(UnixMillis(hit.created_at)),
        hit.record_type,
        hit.title.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

fn already_recalled(store: &Store, agent_session: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = store
        .conn()
        .prepare_cached("SELECT cite FROM recalled WHERE agent_session_id = ?1")?;
    let rows = stmt.query_map([agent_session], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Remembers what was added to a session's prompt, so it is not added again.
pub fn remember_recalled(
    store: &mut Store,
    agent_session: &str,
    recall: &Recall,
    now: UnixMillis,
) -> Result<(), StoreError> {
    let cites: Vec<String> = recall.chosen().map(|c| c.cite.to_string()).collect();
    if cites.is_empty() {
        return Ok(());
    }
    store.write(|w| {
        for cite in &cites {
            w.tx().execute(
                "INSERT OR IGNORE INTO recalled (agent_session_id, cite, recalled_at) VALUES (?1, ?2, ?3)",
                params![agent_session, cite, now.0],
            )?;
        }
        w.tx().execute(
            "DELETE FROM recalled WHERE recalled_at < ?1",
            [now.0 - REMEMBERED_MS],
        )?;
        Ok(())
    })
}

/// `solaria recall PROMPT`: what a prompt in the current project would recall
/// (outside any session: nothing is excluded as already recalled).
pub fn explain(app: &App, prompt: &str) -> OpResult<Recall> {
    let store = app.store()?;
    let project = app.current_project();
    Ok(for_prompt(
        &store,
        &app.config.recall,
        prompt,
        &project.key,
        None,
        UnixMillis::now(),
    )?)
}
