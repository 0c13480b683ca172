//! Search this machine's memory (every machine's records it has pulled): the one
//! search behind `solaria search`, `/memory search`, the MCP `memory_search` tool
//! and `GET /api/search`. Each hit comes back cited and with its machine named.

use super::{OpResult, daemon_client, input};
use crate::app::App;
use crate::present::search::{CitedHit, SearchResult};
use crate::search_mode::SearchMode;
use crate::semantic::{self, ModelSource};
use crate::store::Store;
use crate::store::search::{Hit, SearchQuery};

/// The most results one search returns.
pub const MAX_LIMIT: usize = 100;
/// The results a search returns unless asked otherwise.
pub const DEFAULT_LIMIT: usize = 20;

/// A search: the query and its filters, and how to find (`None`: the live mode,
/// hybrid once the model and its vectors are there, words otherwise).
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: SearchQuery,
    pub mode: Option<SearchMode>,
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
        && let Some(answer) = daemon_client::search(&app.paths, request)
    {
        return Ok(answer);
    }
    let source = match model {
        Model::Kept => ModelSource::Cached,
        Model::DaemonOrLoad => ModelSource::Load,
    };
    let searched = semantic::search(
        &app.config,
        &app.paths,
        &store,
        &request.query,
        request.mode,
        source,
    )?;
    Ok(SearchResult {
        query: request.query.text.clone(),
        mode: searched.mode,
        fell_back: searched.fell_back,
        hits: cite(&store, searched.hits),
    })
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

/// The store's hits with their citations and machine names.
pub fn cite(store: &Store, hits: Vec<Hit>) -> Vec<CitedHit> {
    let mut names = super::MachineNames::new(store);
    hits.into_iter()
        .map(|hit| {
            let machine = hit.machine_id.parse().ok();
            CitedHit {
                cite: hit.record_type.citation(&hit.id, &hit.session_id),
                machine_name: machine.map_or_else(|| hit.machine_id.clone(), |m| names.name(m)),
                this_machine: machine == Some(store.machine_id()),
                hit,
            }
        })
        .collect()
}
