//! Full-text search across what a person may see of their account: their own
//! machines' records and the shared projects (`visibility`).
//!
//! **Search cost is bounded.** `ts_rank` reads each row's tsvector, and finding the
//! newest matches of a common word through the GIN index means fetching every match
//! (~3 µs each: 200 ms for a word in 7% of 1M rows). So a search ranks at most
//! [`CANDIDATES`] rows per candidate set (per table; and, when a current project is
//! known, again within it, so the records the §9 weights favour are always seen):
//!
//! 1. **Window.** Walk the set's newest [`WINDOW`] rows in time order (the
//!    `(account_id[, project_key], created_at DESC)` indexes; project and time filters
//!    narrow the walk) and keep the newest matches. Cost: the window, whatever the word.
//! 2. **Older matches**, only for a set whose window held fewer matches than the
//!    request's limit and that is larger than its window: the GIN index finds the
//!    matches before the window's edge; at most [`MAX_OLDER_MATCHES`] are read and
//!    the newest kept. A word rare in the window is rare (cheap) in the index too,
//!    save for a word common long ago and absent lately: that case hits the cap.
//!
//! Then the candidates are ranked: `ts_rank` × [`solaria_shared::ranking::weight`].
//! A very common word therefore ranks among its most recent matches; a project or
//! time filter reaches older ones. Every statement runs unprepared, planned with its
//! values (the tsquery is folded into a constant).
//!
//! Three tables are searched: observations, summaries and knowledge (decisions,
//! memories, commits, iterations, events; links are not results). Knowledge is
//! weighted by `ranking::knowledge_weight` (it does not age; what no longer stands,
//! `Knowledge::stands`, ranks low), read whole for that and for its citation. A
//! knowledge hit recorded outside any agent session carries the nil session id.
//!
//! Queries: `websearch_to_tsquery` in English and Spanish (the `search` columns hold
//! both stemmings), which never fails on user syntax. When no record matches every
//! word, the words are searched again joined by `or`.
//!
//! **By meaning** (`semantic`, `hybrid`), when the request brings a query vector and
//! pgvector is on (`meaning`): the nearest records within the same filters and
//! visibility, their similarity calibrated against the query's crowd, and for
//! hybrid blended with each candidate's lexical confidence, by the one rule both
//! sides use (`solaria_shared::ranking::Calibration`). A match by words has the
//! confidence of its `ts_rank` against the best candidate's, halved when it holds
//! only some of the words. Without a vector or without pgvector the search runs by
//! words and the answer says why.

use super::base::{StorageError, Viewer};
use super::meaning::NearScope;
use super::rows::strings;
use super::sql;
use super::vector_models::ModelRef;
use super::visibility::visible_sql;
use super::{Storage, key_condition};
use solaria_shared::RecordType;
use solaria_shared::ranking::{self, Calibration, NEIGHBOURS, RankContext};
use solaria_shared::render::snippet::{passages, snippet};
use solaria_shared::wire::{MachineName, MatchMode, QueryVector, SearchHit};
use solaria_shared::{
    Knowledge, KnowledgeKind, MachineId, ObservationKind, SearchMode, SessionId, UnixMillis,
};
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::Query;
use sqlx::{AssertSqlSafe, Postgres, Row};
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// The most candidates read per table and candidate set.
pub const CANDIDATES: i64 = 200;
/// Rows of a candidate set walked newest first to find its candidates.
pub const WINDOW: i64 = 2000;
/// The most matches read through the GIN index beyond a window.
const MAX_OLDER_MATCHES: i64 = 3000;
/// The most words of an `or` retry.
const MAX_ANY_WORDS: usize = 24;

/// A search, its text already bounded by the caller.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// `websearch_to_tsquery` text: words, `"phrases"`, `-not`, `or`.
    pub text: String,
    /// Only this project (key or name).
    pub project: Option<String>,
    /// The project the user is in, for the weights (ignored when `project` is given).
    pub current_project: Option<String>,
    /// Only records last written by this machine (id or name).
    pub machine: Option<String>,
    /// Created at or after (Unix ms).
    pub from: Option<i64>,
    /// Created before (Unix ms).
    pub to: Option<i64>,
    pub hit_type: Option<RecordType>,
    /// Tags of interest, for the weights.
    pub tags: Vec<String>,
    pub limit: usize,
    /// The present, for the weights.
    pub now: UnixMillis,
    /// How to find: by words, by meaning, or both.
    pub mode: SearchMode,
    /// The query's embedding, for a search by meaning.
    pub vector: Option<QueryVector>,
}

/// What a search found, and how it ran.
#[derive(Debug, Clone)]
pub struct Searched {
    pub matched: MatchMode,
    /// The mode it ran in: the one asked for, or lexical (then `notice` says why).
    pub mode: SearchMode,
    pub notice: Option<String>,
    /// Weighted, best first, at most the request's limit.
    pub hits: Vec<SearchHit>,
}

/// One candidate row before weighting.
#[derive(Debug)]
struct Candidate {
    id: Uuid,
    hit_type: RecordType,
    title: String,
    project_key: String,
    project_name: String,
    machine_id: MachineId,
    session_id: SessionId,
    created_at: i64,
    tags: Vec<String>,
    chars: i64,
    rank: f64,
    /// An event's tool (`ranking::event_prior`).
    tool_name: Option<String>,
}

/// The `or` form of a query: its distinct words (letters and digits only, so no
/// syntax can come through), joined by `or`; `None` when it has no words.
pub fn any_words(text: &str) -> Option<String> {
    let mut seen = HashSet::new();
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !w.eq_ignore_ascii_case("or"))
        .map(str::to_lowercase)
        .filter(|w| seen.insert(w.clone()))
        .take(MAX_ANY_WORDS)
        .collect();
    (!words.is_empty()).then(|| words.join(" or "))
}

/// A one-line title from a summary: its first non-empty line, at most 160 characters.
fn summary_title(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(160).collect();
    if line.chars().count() > 160 {
        title.push('…');
    }
    title
}

/// The tsquery of `$2` in both languages of the `search` columns.
const TSQUERY: &str =
    "(websearch_to_tsquery('english', $2) || websearch_to_tsquery('spanish', $2))";

impl Storage {
    /// Runs a search; the hits are weighted, best first, at most `limit`.
    pub async fn search(
        &self,
        viewer: Viewer,
        req: &SearchRequest,
    ) -> Result<Searched, StorageError> {
        let (by_meaning, notice) = match self.by_meaning(viewer, req).await? {
            Ok(found) => (found, None),
            Err(notice) => (None, Some(notice)),
        };
        let mode = if by_meaning.is_some() {
            req.mode
        } else {
            SearchMode::Lexical
        };
        let nothing = |matched| Searched {
            matched,
            mode,
            notice: notice.clone(),
            hits: Vec::new(),
        };
        let filter_keys = match &req.project {
            Some(p) => {
                let keys: Vec<String> = self
                    .resolve_project(viewer, p)
                    .await?
                    .into_iter()
                    .map(|p| p.key)
                    .collect();
                if keys.is_empty() {
                    return Ok(nothing(MatchMode::All));
                }
                Some(keys)
            }
            None => None,
        };
        let machines = match &req.machine {
            Some(m) => {
                let ids = self.resolve_machine(viewer.account, m).await?;
                if ids.is_empty() {
                    return Ok(nothing(MatchMode::All));
                }
                Some(ids)
            }
            None => None,
        };
        // The current project: for the weights, and a candidate set of its own.
        let (current_keys, current_raw) = match (&filter_keys, &req.current_project) {
            (Some(keys), _) => (keys.clone(), None),
            (None, Some(p)) => {
                let keys: Vec<String> = self
                    .resolve_project(viewer, p)
                    .await?
                    .into_iter()
                    .map(|p| p.key)
                    .collect();
                (keys, Some(p.clone()))
            }
            (None, None) => (Vec::new(), None),
        };
        let second_set = filter_keys.is_none() && !current_keys.is_empty();
        let scope = Scope {
            filter_keys: filter_keys.as_deref(),
            machines: machines.as_deref(),
            current_keys: second_set.then_some(current_keys.as_slice()),
            req,
        };

        let mut matched = MatchMode::All;
        let mut candidates = Vec::new();
        if mode != SearchMode::Semantic {
            candidates = self.candidates(viewer, &scope, &req.text).await?;
            if candidates.is_empty()
                && let Some(any) = any_words(&req.text).filter(|a| *a != req.text)
            {
                matched = MatchMode::Any;
                candidates = self.candidates(viewer, &scope, &any).await?;
            }
        }
        if let Some((model, vector)) = by_meaning {
            candidates = self
                .fuse_by_meaning(viewer, &scope, model, vector, candidates, matched)
                .await?;
        }

        let ids: Vec<MachineId> = candidates.iter().map(|c| c.machine_id).collect();
        let names: HashMap<MachineId, MachineName> = self
            .machine_names(viewer, &ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        // Knowledge candidates whole: whether each stands, and how it is cited (a
        // commit by its sha), are the shared rules' to say.
        let knowledge_ids: Vec<Uuid> = candidates
            .iter()
            .filter(|c| c.hit_type.knowledge_kind().is_some())
            .map(|c| c.id)
            .collect();
        let knowledge: HashMap<Uuid, Knowledge> = self
            .knowledge_by_ids(viewer, &knowledge_ids)
            .await?
            .into_iter()
            .map(|k| (*k.id.as_uuid(), k))
            .collect();
        let mut seen = HashSet::new();
        let mut hits: Vec<SearchHit> = candidates
            .into_iter()
            // An expired memory leaves search (it stays readable by id).
            .filter(|c| knowledge.get(&c.id).is_none_or(|k| !k.expired(req.now)))
            .filter(|c| seen.insert(c.id))
            .map(|c| {
                let project = if current_keys.contains(&c.project_key) {
                    Some(c.project_key.as_str())
                } else {
                    current_keys
                        .first()
                        .map(String::as_str)
                        .or(current_raw.as_deref())
                };
                let ctx = RankContext {
                    project,
                    tags: &req.tags,
                    now: req.now,
                };
                let (weight, cite) = match knowledge.get(&c.id) {
                    Some(k) => (
                        ranking::knowledge_weight(&ctx, &c.project_key, k.stands(req.now)),
                        k.citation(),
                    ),
                    None => (
                        ranking::weight(&ctx, &c.project_key, &c.tags, UnixMillis(c.created_at))
                            * ranking::event_prior(c.tool_name.as_deref()),
                        c.hit_type.citation(c.id, c.session_id),
                    ),
                };
                SearchHit {
                    id: c.id,
                    hit_type: c.hit_type,
                    cite,
                    title: c.title,
                    project: c.project_key,
                    project_name: c.project_name,
                    machine_name: names
                        .get(&c.machine_id)
                        .map_or_else(|| "(unknown machine)".into(), |m| m.name.clone()),
                    author: names.get(&c.machine_id).and_then(|m| m.person.clone()),
                    machine_id: c.machine_id,
                    session_id: c.session_id,
                    created_at: UnixMillis(c.created_at),
                    tokens: solaria_shared::context::tokens_for_chars(c.chars.max(0) as usize),
                    score: ranking::score(c.rank, weight),
                    snippet: None,
                    passages: Vec::new(),
                }
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.created_at.cmp(&a.created_at))
                .then(b.id.cmp(&a.id))
        });
        hits.truncate(req.limit);
        let texts = self.hit_texts(viewer, &hits).await?;
        for hit in &mut hits {
            if let Some(text) = texts.get(&hit.id) {
                hit.snippet = snippet(text, &req.text);
                if hit.snippet.is_none() && req.vector.is_some() {
                    hit.passages = passages(text);
                }
            }
        }
        Ok(Searched {
            matched,
            mode,
            notice,
            hits,
        })
    }

    /// The whole text of each hit's record, that its snippet is cut from: an
    /// event's title, input and output; a summary's text and key points; a
    /// knowledge record's title and searched text.
    async fn hit_texts(
        &self,
        viewer: Viewer,
        hits: &[SearchHit],
    ) -> Result<HashMap<Uuid, String>, StorageError> {
        let mut texts = HashMap::new();
        for table in [Table::Observations, Table::Summaries, Table::Knowledge] {
            let ids: Vec<Uuid> = hits
                .iter()
                .filter(|h| Table::of(h.hit_type) == table)
                .map(|h| h.id)
                .collect();
            if ids.is_empty() {
                continue;
            }
            let text = match table {
                // A tool call's strings, not its JSON (`solaria_searchable`, as searched).
                // A prompt's title is its text: said once.
                Table::Observations => {
                    "CASE WHEN strpos(solaria_searchable(input), rtrim(title, '…')) > 0 \
                     THEN '' ELSE title || E'\\n' END \
                     || solaria_searchable(input) || E'\\n' || solaria_searchable(response)"
                }
                Table::Summaries => {
                    "summary || E'\\n' || coalesce((SELECT string_agg(p, E'\\n')
                         FROM jsonb_array_elements_text(CASE jsonb_typeof(key_points)
                              WHEN 'array' THEN key_points ELSE '[]'::jsonb END) AS p), '')"
                }
                // A memory's or a commit's title is its text's first line: not twice.
                Table::Knowledge => {
                    "CASE WHEN strpos(search_text, title) > 0 THEN search_text \
                     ELSE title || E'\\n' || search_text END"
                }
            };
            let sql = format!(
                "SELECT id, {text} AS text FROM {} WHERE account_id = $1 AND id = ANY($2)",
                table.name()
            );
            let rows = sql::query(AssertSqlSafe(sql))
                .bind(viewer.account.0)
                .bind(&ids)
                .fetch_all(&mut *self.lagging_session().await?)
                .await?;
            for row in &rows {
                texts.insert(row.try_get("id")?, row.try_get("text")?);
            }
        }
        Ok(texts)
    }

    /// The model and vector a search by meaning uses, `Ok(None)` for a search by
    /// words, or why a search asked by meaning runs by words.
    async fn by_meaning<'r>(
        &self,
        viewer: Viewer,
        req: &'r SearchRequest,
    ) -> Result<Result<Option<(ModelRef, &'r [f32])>, String>, StorageError> {
        if req.mode == SearchMode::Lexical {
            return Ok(Ok(None));
        }
        let asked = req.mode;
        let Some(vector) = &req.vector else {
            return Ok(Err(format!(
                "searched by words: a search by meaning ({asked}) needs the query's vector, which a machine with an embedding model sends, and this service has no model of its own"
            )));
        };
        if let super::Meaning::Off { reason } = self.meaning() {
            return Ok(Err(format!("searched by words: {reason}")));
        }
        let Some(model) = self.account_model(viewer.account, &vector.model).await? else {
            return Ok(Err(format!(
                "searched by words: no record here has a vector of the model {}",
                vector.model
            )));
        };
        if model.dimension != vector.values.len() {
            return Ok(Err(format!(
                "searched by words: the model {} has {} dimensions here and the query vector {}",
                vector.model,
                model.dimension,
                vector.values.len()
            )));
        }
        Ok(Ok(Some((model, vector.values.as_slice()))))
    }

    /// The candidates of a search by meaning (`lexical` empty) or hybrid, each
    /// ranked by its relevance: the nearest records within the scope, joined with
    /// the lexical candidates, scored by the shared calibration and blend.
    async fn fuse_by_meaning(
        &self,
        viewer: Viewer,
        scope: &Scope<'_>,
        model: ModelRef,
        vector: &[f32],
        lexical: Vec<Candidate>,
        matched: MatchMode,
    ) -> Result<Vec<Candidate>, StorageError> {
        let req = scope.req;
        let near_scope = NearScope {
            project_keys: scope.filter_keys,
            machines: scope.machines,
            from: req.from,
            to: req.to,
            kind: req.hit_type,
        };
        let k = NEIGHBOURS.max(req.limit * 3);
        let near = self.nearest(viewer, model, vector, &near_scope, k).await?;
        let calibration = Calibration::of(near.iter().map(|n| n.similarity));
        let mut similarity: HashMap<Uuid, f64> =
            near.iter().map(|n| (n.id, n.similarity)).collect();

        // Lexical candidates out of the neighbours: their own similarity.
        let unmeasured: Vec<Uuid> = lexical
            .iter()
            .map(|c| c.id)
            .filter(|id| !similarity.contains_key(id))
            .collect();
        for (id, sim) in self
            .similarities(viewer.account, model, vector, &unmeasured)
            .await?
        {
            similarity.insert(id, sim);
        }
        // Neighbours out of the lexical candidates: their rows.
        let known: HashSet<Uuid> = lexical.iter().map(|c| c.id).collect();
        let mut by_table: HashMap<Table, Vec<Uuid>> = HashMap::new();
        for n in near.iter().filter(|n| !known.contains(&n.id)) {
            by_table
                .entry(Table::of(n.record_type))
                .or_default()
                .push(n.id);
        }
        let best_rank = lexical.iter().map(|c| c.rank).fold(0.0, f64::max);
        let coverage = match matched {
            MatchMode::All => 1.0,
            MatchMode::Any => 0.5,
        };
        let matches: Vec<(f64, Option<f64>)> = lexical
            .iter()
            .map(|c| {
                let confidence = if best_rank > 0.0 {
                    coverage * c.rank / best_rank
                } else {
                    0.0
                };
                (confidence, similarity.get(&c.id).copied())
            })
            .collect();
        let blended = calibration.blended_matches(&matches, ranking::LEXICAL_BLEND);
        let mut out: Vec<Candidate> = lexical
            .into_iter()
            .zip(blended)
            .map(|(mut c, relevance)| {
                c.rank = relevance;
                c
            })
            .collect();
        for (table, ids) in by_table {
            let extra = Extra {
                edge: None,
                ids: Some(ids),
            };
            let rows = scope
                .query(scope.fetch_sql(table), viewer, &req.text, extra)
                .fetch_all(&mut *self.lagging_session().await?)
                .await?;
            for row in &rows {
                let (_, mut c) = candidate(row)?;
                c.rank = calibration.relevance(similarity.get(&c.id).copied().unwrap_or(0.0));
                out.push(c);
            }
        }
        Ok(out)
    }

    /// The newest matches of `text` in each part of the scope, with their `ts_rank`:
    /// first among each part's newest [`WINDOW`] rows; for a part whose window held
    /// fewer matches than the request's limit, also older ones through the GIN index.
    async fn candidates(
        &self,
        viewer: Viewer,
        scope: &Scope<'_>,
        text: &str,
    ) -> Result<Vec<Candidate>, StorageError> {
        let parts = scope.parts();
        let sql = ranked(
            &parts
                .iter()
                .map(|p| scope.window_sql(*p))
                .collect::<Vec<_>>()
                .join(" UNION ALL "),
        );
        let rows = scope
            .query(sql, viewer, text, Extra::default())
            .fetch_all(&mut *self.lagging_session().await?)
            .await?;
        let mut candidates = rows.iter().map(candidate).collect::<Result<Vec<_>, _>>()?;

        // Parts whose window held too few matches, and that hold more than the window.
        let short: Vec<Part> = parts
            .into_iter()
            .filter(|p| {
                candidates
                    .iter()
                    .filter(|(part, _)| *part == p.tag())
                    .count()
                    < scope.req.limit
            })
            .collect();
        if short.is_empty() {
            return Ok(candidates.into_iter().map(|(_, c)| c).collect());
        }
        let sql = short
            .iter()
            .map(|p| scope.edge_sql(*p))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let edges = scope
            .query(sql, viewer, text, Extra::default())
            .fetch_all(&mut *self.lagging_session().await?)
            .await?;
        // The GIN index finds a rare word's matches at once, but the planner cannot
        // know a word is rare (it assumes ~1% for any word outside its statistics) and
        // would walk the whole history in time order: forbid plain index scans here.
        let mut older: HashMap<Table, Vec<Uuid>> = HashMap::new();
        let mut tx = self.pool().begin().await?;
        sql::query("SET LOCAL enable_indexscan = off")
            .execute(&mut *tx)
            .await?;
        sql::query("SET LOCAL enable_indexonlyscan = off")
            .execute(&mut *tx)
            .await?;
        // Nor parallel workers: reading at most a few thousand matches, starting
        // two costs more than the read (about 60 ms of the 70 a rare word took at
        // 10M rows, docs/experiments/2026-11-28-a-team-at-10m.md).
        sql::query("SET LOCAL max_parallel_workers_per_gather = 0")
            .execute(&mut *tx)
            .await?;
        for row in &edges {
            let tag: i32 = row.try_get("part")?;
            let edge: Option<i64> = row.try_get("edge")?;
            let (Some(edge), Some(part)) = (edge, short.iter().find(|p| p.tag() == tag)) else {
                continue;
            };
            let extra = Extra {
                edge: Some(edge),
                ids: None,
            };
            let rows = scope
                .query(scope.older_sql(*part), viewer, text, extra)
                .fetch_all(&mut *tx)
                .await?;
            let ids = older.entry(part.table).or_default();
            for row in &rows {
                ids.push(row.try_get("id")?);
            }
        }
        tx.commit().await?;
        for (table, mut ids) in older {
            ids.sort_unstable();
            ids.dedup();
            let extra = Extra {
                edge: None,
                ids: Some(ids),
            };
            let rows = scope
                .query(scope.fetch_sql(table), viewer, text, extra)
                .fetch_all(&mut *self.lagging_session().await?)
                .await?;
            for row in &rows {
                candidates.push(candidate(row)?);
            }
        }
        Ok(candidates.into_iter().map(|(_, c)| c).collect())
    }
}

/// The candidate rows of `rows` (a statement selecting a part's tag and
/// [`Scope::columns`]), ranked: the one shape both the window walk and the fetch of
/// older matches answer in, mapped by [`candidate`].
fn ranked(rows: &str) -> String {
    format!(
        "SELECT c.part, c.type, c.id, c.title, c.project_key, c.project_name, c.machine_id,
                c.session_id, c.created_at, c.tags, c.chars, c.tool_name,
                ts_rank(c.search, {TSQUERY}, 1)::float8 AS rank
         FROM ({rows}) AS c"
    )
}

/// Maps a candidate row (see [`Scope::columns`]) with its part's tag.
fn candidate(row: &PgRow) -> Result<(i32, Candidate), sqlx::Error> {
    let ty: String = row.try_get("type")?;
    let title: String = row.try_get("title")?;
    // The observation kinds, `summary` and the knowledge kinds (links never match).
    let hit_type = ty.parse::<RecordType>().unwrap_or(RecordType::Note);
    Ok((
        row.try_get("part")?,
        Candidate {
            id: row.try_get("id")?,
            title: if hit_type == RecordType::Summary {
                summary_title(&title)
            } else {
                title
            },
            hit_type,
            project_key: row.try_get("project_key")?,
            project_name: row.try_get("project_name")?,
            machine_id: MachineId::from_uuid(row.try_get("machine_id")?),
            session_id: SessionId::from_uuid(row.try_get("session_id")?),
            created_at: row.try_get("created_at")?,
            tags: strings(row, "tags")?,
            chars: row.try_get::<Option<i64>, _>("chars")?.unwrap_or(0),
            rank: row.try_get::<Option<f64>, _>("rank")?.unwrap_or(0.0),
            tool_name: row.try_get("tool_name")?,
        },
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Table {
    Observations,
    Summaries,
    Knowledge,
}

impl Table {
    /// The table holding records of `t`.
    fn of(t: RecordType) -> Table {
        if t == RecordType::Summary {
            Table::Summaries
        } else if t.knowledge_kind().is_some() {
            Table::Knowledge
        } else {
            Table::Observations
        }
    }

    fn name(self) -> &'static str {
        match self {
            Table::Observations => "memory_observations_remote",
            Table::Summaries => "memory_summaries_remote",
            Table::Knowledge => "memory_knowledge",
        }
    }

    /// Whether a search for `hit_type` (every type when `None`) reads this table.
    fn holds(self, hit_type: Option<RecordType>) -> bool {
        let Some(t) = hit_type else {
            return true;
        };
        match self {
            Table::Observations => t.observation_kind().is_some(),
            Table::Summaries => t == RecordType::Summary,
            Table::Knowledge => t.knowledge_kind().is_some(),
        }
    }
}

/// One candidate set: a table, in the whole scope or in the current project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Part {
    table: Table,
    current: bool,
}

impl Part {
    fn tag(self) -> i32 {
        match (self.table, self.current) {
            (Table::Observations, false) => 0,
            (Table::Summaries, false) => 1,
            (Table::Observations, true) => 2,
            (Table::Summaries, true) => 3,
            (Table::Knowledge, false) => 4,
            (Table::Knowledge, true) => 5,
        }
    }
}

/// Per-statement parameters beyond the search's own.
#[derive(Debug, Default)]
struct Extra {
    /// `$11`: where a part's window ends (the newest row outside it).
    edge: Option<i64>,
    /// `$13`: ids to fetch.
    ids: Option<Vec<Uuid>>,
}

/// What one search is restricted to.
#[derive(Debug)]
struct Scope<'a> {
    filter_keys: Option<&'a [String]>,
    machines: Option<&'a [MachineId]>,
    /// The current project's keys when they make a second candidate set.
    current_keys: Option<&'a [String]>,
    req: &'a SearchRequest,
}

// The search statements below are built from constants only; every value is a
// parameter, and every statement binds the same list (see `Scope::bind`).
impl Scope<'_> {
    fn parts(&self) -> Vec<Part> {
        let mut parts = Vec::new();
        for current in [false, true] {
            if current && self.current_keys.is_none() {
                continue;
            }
            for table in [Table::Observations, Table::Summaries, Table::Knowledge] {
                if table.holds(self.req.hit_type) {
                    parts.push(Part { table, current });
                }
            }
        }
        parts
    }

    /// `sql` with `$1` account, `$2` text, `$3` candidates per part, `$4` filter keys,
    /// `$5` machines, `$6` from, `$7` to, `$8` kind, `$9` current keys, `$10` window,
    /// `$11` edge, `$12` most older matches read, `$13` ids and `$14` the viewer's
    /// person bound; unprepared, so that it is planned with its values.
    fn query<'q>(
        &self,
        sql: String,
        viewer: Viewer,
        text: &'q str,
        extra: Extra,
    ) -> Query<'q, Postgres, PgArguments> {
        // The `kind` column of the one table a typed search reads.
        let kind = self.req.hit_type.and_then(|t| {
            t.observation_kind()
                .map(ObservationKind::as_str)
                .or(t.knowledge_kind().map(KnowledgeKind::as_str))
        });
        sql::query(AssertSqlSafe(sql))
            .bind(viewer.account.0)
            .bind(text)
            .bind(CANDIDATES)
            .bind(self.filter_keys.map(<[String]>::to_vec))
            .bind(
                self.machines
                    .map(|m| m.iter().map(|id| *id.as_uuid()).collect::<Vec<_>>()),
            )
            .bind(self.req.from)
            .bind(self.req.to)
            .bind(kind)
            .bind(self.current_keys.map(<[String]>::to_vec))
            .bind(WINDOW)
            .bind(extra.edge)
            .bind(MAX_OLDER_MATCHES)
            .bind(extra.ids)
            .bind(viewer.person.0)
            .persistent(false)
    }

    /// Conditions that pick a part's rows (usable by its index walk): what the
    /// viewer may see, and the filters.
    fn scope_conditions(&self, part: Part) -> String {
        let mut sql = format!(" AND {}", visible_sql("", "$1", "$14"));
        if let Some(keys) = self.filter_keys {
            sql.push_str(&key_condition("project_key", "$4", keys));
        }
        if part.current
            && let Some(keys) = self.current_keys
        {
            sql.push_str(&key_condition("project_key", "$9", keys));
        }
        if self.req.from.is_some() {
            sql.push_str(" AND created_at >= $6");
        }
        if self.req.to.is_some() {
            sql.push_str(" AND created_at < $7");
        }
        sql
    }

    /// Conditions a candidate must meet besides the scope: live, matching, filters.
    fn match_conditions(&self, part: Part) -> String {
        let mut sql = format!(" AND NOT deleted AND search @@ {TSQUERY}");
        if let Some(machines) = self.machines {
            sql.push_str(if machines.len() == 1 {
                " AND machine_id = ($5)[1]"
            } else {
                " AND machine_id = ANY($5)"
            });
        }
        if part.table == Table::Knowledge {
            // Links relate records; they are no answer of their own.
            sql.push_str(" AND kind <> 'link'");
        }
        if part.table != Table::Summaries && self.req.hit_type.is_some() {
            sql.push_str(" AND kind = $8");
        }
        sql
    }

    /// The candidate columns of a table (`search` is ranked by the caller).
    fn columns(table: Table) -> &'static str {
        match table {
            Table::Observations => {
                "kind AS type, title, (length(title) + length(input) + length(response))::int8 AS chars, \
                 id, project_key, project_name, machine_id, session_id, created_at, tags, search, \
                 tool_name"
            }
            Table::Summaries => {
                "'summary'::text AS type, left(summary, 400) AS title, length(summary)::int8 AS chars, \
                 id, project_key, project_name, machine_id, session_id, created_at, tags, search, \
                 NULL::text AS tool_name"
            }
            // Knowledge recorded outside an agent session has no session: the nil id.
            Table::Knowledge => {
                "kind AS type, title, (length(title) + length(search_text))::int8 AS chars, \
                 id, project_key, project_name, machine_id, \
                 coalesce(session_id, '00000000-0000-0000-0000-000000000000'::uuid) AS session_id, \
                 created_at, coalesce(body->'tags', '[]'::jsonb) AS tags, search, \
                 NULL::text AS tool_name"
            }
        }
    }

    /// A part's newest `$10` rows, walked in time order; of them, the newest `$3`
    /// matches.
    fn window_sql(&self, part: Part) -> String {
        format!(
            "(SELECT {tag} AS part, {cols} FROM (
                 SELECT * FROM {table} WHERE account_id = $1{scope} ORDER BY created_at DESC LIMIT $10
             ) AS w WHERE true{matches} ORDER BY created_at DESC LIMIT $3)",
            tag = part.tag(),
            cols = Self::columns(part.table),
            table = part.table.name(),
            scope = self.scope_conditions(part),
            matches = self.match_conditions(part),
        )
    }

    /// Where a part's window ends: the `created_at` of its newest row outside the
    /// window (NULL when the window holds the whole part).
    fn edge_sql(&self, part: Part) -> String {
        format!(
            "SELECT {tag}::int4 AS part, (SELECT created_at FROM {table} WHERE account_id = $1{scope}
                 ORDER BY created_at DESC OFFSET $10 LIMIT 1) AS edge",
            tag = part.tag(),
            table = part.table.name(),
            scope = self.scope_conditions(part),
        )
    }

    /// Matches at or before the edge `$11`, through the GIN index: at most `$12` read,
    /// the newest `$3` of them kept.
    fn older_sql(&self, part: Part) -> String {
        format!(
            "SELECT id FROM (
                 SELECT id, created_at FROM {table}
                 WHERE account_id = $1 AND created_at <= $11{scope}{matches} LIMIT $12
             ) AS m ORDER BY created_at DESC LIMIT $3",
            table = part.table.name(),
            scope = self.scope_conditions(part),
            matches = self.match_conditions(part),
        )
    }

    /// The candidate rows `$13` of a table, ranked.
    fn fetch_sql(&self, table: Table) -> String {
        let part = Part {
            table,
            current: false,
        };
        ranked(&format!(
            "SELECT {tag} AS part, {cols} FROM {table} WHERE account_id = $1 AND id = ANY($13) AND {visible}",
            visible = visible_sql("", "$1", "$14"),
            tag = part.tag(),
            cols = Scope::columns(table),
            table = table.name(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_words_keeps_only_words() {
        assert_eq!(
            any_words("\"migrating\" the -databases!"),
            Some("migrating or the or databases".into())
        );
        assert_eq!(any_words("a OR b or a"), Some("a or b".into()));
        assert_eq!(any_words("!!! 🎉 \"'"), None);
        assert_eq!(
            any_words("auth'); DROP TABLE x; --"),
            Some("auth or drop or table or x".into())
        );
    }

    #[test]
    fn summary_titles_are_one_short_line() {
        assert_eq!(summary_title("\n  Fixed the bug\nmore"), "Fixed the bug");
        let long = "x".repeat(300);
        assert_eq!(summary_title(&long).chars().count(), 161);
    }
}
