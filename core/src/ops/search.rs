//! Search this machine's memory (every machine's records it has pulled): the one
//! search behind `solaria search`, `/memory search`, the MCP `memory_search` tool
//! and `GET /api/search`. Each hit comes back cited and with its machine named.

use super::{OpResult, daemon_client, input, remote};
use crate::app::App;
use crate::present::search::{CitedHit, SearchResult};
use crate::semantic::{self, ModelSource};
use crate::store::search::{Hit, SearchQuery};
use crate::store::{Store, retention};
use crate::timefmt;
use solaria_shared::render::hits::folded;
use solaria_shared::wire::QueryVector;
use solaria_shared::{SearchMode, UnixMillis};

/// The most results one search returns (the same bound as the central service's).
pub const MAX_LIMIT: usize = solaria_shared::wire::SEARCH_MAX_LIMIT;
/// The results a search returns unless asked otherwise.
pub const DEFAULT_LIMIT: usize = solaria_shared::wire::SEARCH_DEFAULT_LIMIT;
/// How many more hits than asked a search reads, to fold the alike ones.
const FOLD_ROOM: usize = 3;

/// A search: the query and its filters, and how to find (`None`: the live mode,
/// hybrid once the model and its vectors are there, words otherwise).
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: SearchQuery,
    pub mode: Option<SearchMode>,
}

/// The longest query text, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// A search as text fields, as a query string or a form gives them (the local
/// API's `/api/search`, the viewer's search page): each read as the CLI's flags.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchFields {
    pub q: Option<String>,
    pub mode: Option<String>,
    pub project: Option<String>,
    #[serde(rename = "type")]
    pub record_type: Option<String>,
    pub machine: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: Option<String>,
    /// A project key whose records rank a little higher (the CLI passes the one
    /// it runs in; the daemon itself has none).
    pub current_project: Option<String>,
}

impl SearchFields {
    /// The request the fields make (`now` reads relative times such as `7d`), or
    /// what is wrong with them.
    pub fn request(self, now: solaria_shared::UnixMillis) -> OpResult<SearchRequest> {
        let text = input::given(self.q).ok_or_else(|| {
            super::OpError::BadInput("`q` is required: the words to look for".into())
        })?;
        if text.chars().count() > MAX_QUERY_CHARS {
            return Err(super::OpError::BadInput(format!(
                "`q` is too long: at most {MAX_QUERY_CHARS} characters"
            )));
        }
        Ok(SearchRequest {
            query: SearchQuery {
                text,
                project: input::given(self.project),
                record_type: input::parsed("type", self.record_type)?,
                machine: input::given(self.machine),
                since: input::when("since", self.since, now)?,
                until: input::when("until", self.until, now)?,
                limit: input::bounded_text("limit", self.limit, DEFAULT_LIMIT, 1..=MAX_LIMIT)?,
                // The daemon has no current project of its own: only a caller's is favoured.
                current_project: input::given(self.current_project),
            },
            mode: input::parsed("mode", self.mode)?,
        })
    }
}

/// Where the embedding model comes from when the mode needs one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// This process keeps it loaded (the MCP server, the daemon).
    Kept,
    /// One search per process (the CLI): the running daemon's loaded model when it
    /// answers, else the model loaded for this search.
    DaemonOrLoad,
}

/// Runs `request` over this machine's store.
pub fn search(app: &App, request: &SearchRequest, model: Model) -> OpResult<SearchResult> {
    input::bounded(
        "limit",
        Some(request.query.limit),
        DEFAULT_LIMIT,
        1..=MAX_LIMIT,
    )?;
    let store = app.store()?;
    let request = &with_project_resolved(&store, request)?;
    if model == Model::DaemonOrLoad
        && needs_model(app, &store, request)?
        && let Some(answer) = daemon_client::get(&app.paths, "/api/search", &params(request))
    {
        return Ok(answer);
    }
    let source = match model {
        Model::Kept => ModelSource::Cached,
        Model::DaemonOrLoad => ModelSource::Load,
    };
    // More than asked, so that the hits alike folded into one still leave as many.
    let wider = SearchQuery {
        limit: (request.query.limit * FOLD_ROOM).min(MAX_LIMIT * FOLD_ROOM),
        ..request.query.clone()
    };
    let searched = semantic::search(
        &app.config,
        &app.paths,
        &store,
        &wider,
        request.mode,
        source,
    )?;
    let mut hits = folded(cite(&store, searched.hits));
    hits.truncate(request.query.limit.max(1));
    let mut hits = with_snippets(&store, hits, &request.query.text)?;
    if let (Some(model), Some(vector)) = (&searched.model, &searched.vector) {
        hits = with_passages(&store, hits, model, &vector.values)?;
    }
    let mut result = SearchResult {
        query: request.query.text.clone(),
        mode: searched.mode,
        fell_back: searched.fell_back,
        note: None,
        hits,
    };
    let embedding = searched
        .vector
        .as_ref()
        .map(|v| (v, searched.model.as_deref()));
    reach_into_pruned(app, &store, &request.query, embedding, &mut result)?;
    Ok(result)
}

/// When local retention removed records older than the query may reach, asks the
/// central service for that range (if this machine is logged in), in the mode the
/// local search ran (by meaning with its query vector, and the model that made it
/// to show the hits found by meaning alone), and merges its hits, labelled remote,
/// into the ranking. A server that does not answer in time leaves the local hits
/// and a note.
fn reach_into_pruned(
    app: &App,
    store: &Store,
    query: &SearchQuery,
    embedding: Option<(&QueryVector, Option<&solaria_embed::Embedder>)>,
    result: &mut SearchResult,
) -> OpResult<()> {
    let vector = embedding.map(|(vector, _)| vector);
    let Some(up_to) = retention::pruned_up_to(store.conn())? else {
        return Ok(());
    };
    if query.since.is_some_and(|since| since.0 > up_to.0) || query.text.trim().is_empty() {
        return Ok(());
    }
    let Some(creds) = app.credentials()? else {
        return Ok(());
    };
    let mut hits = match remote::search_pruned_range(&creds, query, up_to, result.mode, vector) {
        Ok(hits) => hits,
        Err(e) => {
            result.note = Some(format!(
                "memory before {} was pruned here and the central service did not answer ({e}); only this machine's results are shown",
                timefmt::full(up_to)
            ));
            return Ok(());
        }
    };
    if let Some((vector, model)) = embedding {
        remote::show_passages(app, vector, model, &mut hits);
    }
    let me = store.machine_id();
    for hit in hits {
        let id = hit.id.to_string();
        if result.hits.iter().any(|h| h.hit.id == id) {
            continue;
        }
        result.hits.push(CitedHit {
            snippet: hit.snippet.clone(),
            alike: 0,
            cite: hit.cite,
            machine_name: solaria_shared::render::author_label(
                &hit.machine_name,
                hit.author.as_deref(),
            ),
            author: solaria_shared::wire::Author {
                handle: hit.author.clone(),
                machine: hit.machine_name.clone(),
            },
            this_machine: hit.machine_id == me,
            remote: true,
            hit: Hit {
                id,
                record_type: hit.hit_type,
                title: hit.title,
                project: hit.project,
                project_name: hit.project_name,
                machine_id: hit.machine_id.to_string(),
                session_id: hit.session_id.to_string(),
                created_at: hit.created_at.0,
                tokens: hit.tokens,
                score: hit.score,
            },
        });
    }
    result.hits.sort_by(|a, b| {
        b.hit
            .score
            .total_cmp(&a.hit.score)
            .then(b.hit.created_at.cmp(&a.hit.created_at))
    });
    result.hits.truncate(query.limit.max(1));
    Ok(())
}

/// The request with its project filter checked (`ops::project::resolve`: an
/// unknown project is an error, not an empty answer) and, when it names one
/// project, replaced by that project's key (a relative path means the same to a
/// daemon running elsewhere).
fn with_project_resolved(store: &Store, request: &SearchRequest) -> OpResult<SearchRequest> {
    let mut request = request.clone();
    if let Some(text) = &request.query.project
        && let [one] = super::project::resolve(store, text)?.as_slice()
    {
        request.query.project = Some(one.key.clone());
    }
    Ok(request)
}

/// Whether the search would embed its query (then a running daemon, whose model
/// is loaded, answers faster than this process could load it).
fn needs_model(app: &App, store: &Store, request: &SearchRequest) -> OpResult<bool> {
    let mode = match request.mode {
        Some(m) => m,
        None => semantic::live_mode(&app.config, &app.paths, store)?,
    };
    Ok(mode != SearchMode::Lexical)
}

/// How a hit is cited: by its type, and a commit by its sha.
fn citation_of(store: &Store, hit: &Hit) -> solaria_shared::Citation {
    if hit.record_type == solaria_shared::RecordType::Commit
        && let Ok(id) = hit.id.parse::<solaria_shared::KnowledgeId>()
        && let Ok(Some(k)) = crate::store::knowledge::get_knowledge(store.conn(), id)
    {
        return k.citation();
    }
    hit.record_type.citation(&hit.id, &hit.session_id)
}

/// `hits` each with its snippet: where its text holds `query`'s words.
pub fn with_snippets(
    store: &Store,
    mut hits: Vec<CitedHit>,
    query: &str,
) -> OpResult<Vec<CitedHit>> {
    for h in &mut hits {
        if let Some(text) = crate::store::hit_text::text_of(store.conn(), &h.hit)? {
            h.snippet = solaria_shared::render::snippet::snippet(&text, query);
        }
    }
    Ok(hits)
}

/// `hits` found by meaning alone (no snippet of the query's words) each shown by
/// its passage closest to the query `vector` by `model`, as `ops::passages` rules.
fn with_passages(
    store: &Store,
    mut hits: Vec<CitedHit>,
    model: &solaria_embed::Embedder,
    vector: &[f32],
) -> OpResult<Vec<CitedHit>> {
    let mut candidates = Vec::new();
    for (i, h) in hits.iter().enumerate() {
        if h.snippet.is_none()
            && let Some(text) = crate::store::hit_text::text_of(store.conn(), &h.hit)?
        {
            candidates.push((i, solaria_shared::render::snippet::passages(&text)));
        }
    }
    let shown = super::passages::chosen(candidates, |lists| {
        semantic::closest_passages(model, vector, lists).ok()
    });
    for (i, passage) in shown {
        hits[i].snippet = Some(passage);
    }
    Ok(hits)
}

/// The store's hits with their citations and machine names.
pub fn cite(store: &Store, hits: Vec<Hit>) -> Vec<CitedHit> {
    let mut names = super::MachineNames::new(store);
    hits.into_iter()
        .map(|hit| {
            let machine = hit.machine_id.parse().ok();
            CitedHit {
                cite: citation_of(store, &hit),
                machine_name: machine.map_or_else(|| hit.machine_id.clone(), |m| names.name(m)),
                author: machine.map_or_else(
                    || solaria_shared::wire::Author {
                        handle: None,
                        machine: hit.machine_id.clone(),
                    },
                    |m| names.author(m),
                ),
                snippet: None,
                alike: 0,
                this_machine: machine == Some(store.machine_id()),
                remote: false,
                hit,
            }
        })
        .collect()
}

/// The request as the daemon's `/api/search` takes it (docs/LOCAL_API.md).
fn params(request: &SearchRequest) -> Vec<(&'static str, String)> {
    let q = &request.query;
    let instant = |t: Option<UnixMillis>| {
        t.and_then(|t| chrono::DateTime::from_timestamp_millis(t.0))
            .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    };
    let optional = [
        ("mode", request.mode.map(|m| m.to_string())),
        ("project", q.project.clone()),
        ("type", q.record_type.map(|t| t.as_str().to_string())),
        ("machine", q.machine.clone()),
        ("since", instant(q.since)),
        ("until", instant(q.until)),
        ("current_project", q.current_project.clone()),
    ];
    let mut params = vec![("q", q.text.clone()), ("limit", q.limit.to_string())];
    params.extend(
        optional
            .into_iter()
            .filter_map(|(name, value)| value.map(|v| (name, v))),
    );
    params
}
