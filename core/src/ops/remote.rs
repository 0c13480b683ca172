//! Search on the central service: the memory of every machine of the account,
//! including what this machine has not pulled yet (`solaria search --remote`,
//! `memory_search_remote`). By meaning, this machine embeds the query with its model
//! and sends the vector (`POST /memory/search`); the service ranks its records by
//! it, or answers by words and says why.

use super::{OpError, OpResult, input};
use crate::app::App;
use crate::present::search::RemoteResult;
use crate::semantic::{self, ModelSource};
use crate::store::search::SearchQuery;
use crate::sync::SyncError;
use crate::sync::client::Client;
use crate::sync::credentials::Credentials;
use solaria_embed::Embedder;
use solaria_shared::wire::{
    QueryVector, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SearchHit, SearchResponse,
};
use solaria_shared::{SearchMode, UnixMillis};
use std::sync::Arc;
use std::time::Duration;

/// Runs `query` on the central service this machine is logged in to, in `mode`
/// (`None`: hybrid when this machine has the embedding model, else by words).
pub fn search(
    app: &App,
    query: &SearchQuery,
    mode: Option<SearchMode>,
    source: ModelSource,
) -> OpResult<RemoteResult> {
    let creds = app
        .credentials()?
        .ok_or(OpError::NotLoggedIn(SyncError::NotLoggedIn))?;
    if query.text.trim().is_empty() {
        return Err(OpError::BadInput(
            "the query is empty: give a few keywords".into(),
        ));
    }
    let limit = input::bounded(
        "limit",
        Some(query.limit),
        SEARCH_DEFAULT_LIMIT,
        1..=SEARCH_MAX_LIMIT,
    )?;
    let query = &SearchQuery {
        project: query.project.as_deref().map(|p| project_key(app, p)),
        ..query.clone()
    };
    let (config, paths) = (&app.config, &app.paths);
    let mut loaded_here = None;
    // Without an explicit mode a model that fails leaves words, and says why.
    let (mode, embedding, fell_back) = match mode {
        Some(m) => (
            m,
            embedded(app, &query.text, m, source, &mut loaded_here)?,
            None,
        ),
        None if semantic::model_present(config, paths) => {
            match embedded(
                app,
                &query.text,
                SearchMode::Hybrid,
                source,
                &mut loaded_here,
            ) {
                Ok(embedding) => (SearchMode::Hybrid, embedding, None),
                Err(e) => (SearchMode::Lexical, None, Some(e.fallback_note())),
            }
        }
        None => (SearchMode::Lexical, None, None),
    };
    let client = Client::new(&creds.server, creds.ca_cert.as_deref())
        .map_err(|e| OpError::remote("search", &creds.server, e.into()))?;
    let vector = embedding.as_ref().map(|(vector, _)| vector);
    let mut answer = ask(&client, &creds, query, limit, mode, vector)?;
    if let Some((vector, here)) = &embedding {
        show_passages(app, vector, here.as_deref(), &mut answer.hits);
    }
    let mut notes: Vec<String> = loaded_here.into_iter().chain(fell_back).collect();
    notes.extend(solaria_shared::render::hits::remote_notes(&answer));
    Ok(RemoteResult {
        server: creds.server,
        notes,
        mode: answer.mode,
        query: answer.query,
        hits: answer.hits,
    })
}

/// A query's vector, and the model that made it when this process did (`None`:
/// the daemon's did).
type Embedded = (QueryVector, Option<Arc<Embedder>>);

/// The query's vector for a search in `mode` (`None` by words): from the running
/// daemon, which keeps the model loaded (a query embeds there in milliseconds), else
/// from this process's model, given with it. A model loaded for this one query
/// (`source`: [`ModelSource::Load`], the CLI) is said in `loaded_here`: it took
/// seconds that a running daemon saves.
fn embedded(
    app: &App,
    text: &str,
    mode: SearchMode,
    source: ModelSource,
    loaded_here: &mut Option<String>,
) -> Result<Option<Embedded>, semantic::SearchError> {
    if mode == SearchMode::Lexical {
        return Ok(None);
    }
    if let Some(vector) = super::daemon_client::embed(&app.paths, text) {
        return Ok(Some((vector, None)));
    }
    let made = semantic::query_vector_by_model(&app.config, &app.paths, text, mode, source)?;
    if source == ModelSource::Load {
        *loaded_here = Some(NO_DAEMON_NOTE.to_string());
    }
    Ok(made.map(|(vector, model)| (vector, Some(model))))
}

/// The service's hits found by meaning alone, each shown by its passage closest
/// to the query (`SearchHit::passages`: the service holds no model), as
/// `ops::passages` rules: weighed by `here`, this process's model, or else by the
/// daemon's, which made `vector`. A daemon that does not answer leaves them
/// without a snippet, as before. The passages themselves are not passed on.
pub(crate) fn show_passages(
    app: &App,
    vector: &QueryVector,
    here: Option<&Embedder>,
    hits: &mut [SearchHit],
) {
    let mut candidates = Vec::new();
    for (i, hit) in hits.iter_mut().enumerate() {
        let passages = std::mem::take(&mut hit.passages);
        if hit.snippet.is_none() {
            candidates.push((i, solaria_shared::render::snippet::bounded(passages)));
        }
    }
    let shown = super::passages::chosen(candidates, |lists| match here {
        Some(model) => semantic::closest_passages(model, &vector.values, lists).ok(),
        None => super::daemon_client::closest(&app.paths, vector, lists),
    });
    for (i, passage) in shown {
        hits[i].snippet = Some(passage);
    }
}

/// `POST /api/closest` on the daemon: for each list, the passage closest to
/// `vector` by the model this process keeps loaded, which must have made it.
pub fn closest(
    app: &App,
    vector: &QueryVector,
    lists: &[Vec<String>],
) -> OpResult<Vec<Option<usize>>> {
    let mode = SearchMode::Semantic;
    let model = semantic::installed_model(&app.config, &app.paths, mode, ModelSource::Cached)
        .map_err(OpError::Model)?;
    if model.info().fingerprint != vector.model {
        return Err(OpError::BadInput(format!(
            "the vector was made by another model ({}) than this daemon's ({})",
            vector.model,
            model.info().fingerprint
        )));
    }
    semantic::closest_passages(&model, &vector.values, lists).map_err(|e| {
        let dir = semantic::model_dir(&app.config, &app.paths);
        OpError::Model(semantic::SearchError::broken(mode, &dir, e))
    })
}

/// Said when a search loaded the model itself.
pub const NO_DAEMON_NOTE: &str = "no daemon answered, so this search loaded the model itself \
     (a second or two); with `solaria serve` running (`solaria install service`), the \
     daemon embeds the query with the model it keeps loaded";

/// The query's vector by the model this process keeps loaded (the daemon's
/// `POST /api/embed`, asked by [`embedded`] in the CLI and the MCP server).
pub fn embedding(app: &App, text: &str) -> OpResult<QueryVector> {
    semantic::query_vector(
        &app.config,
        &app.paths,
        text,
        SearchMode::Semantic,
        ModelSource::Cached,
    )?
    .ok_or_else(|| OpError::BadInput("no vector for the query".into()))
}

/// How long a search of this machine waits for the central service's part of it
/// (the range local retention removed), both requests together.
pub const PRUNED_RANGE_TIMEOUT: Duration = Duration::from_secs(3);

/// The central service's hits for `query` created up to `up_to` (what local
/// retention removed here), within [`PRUNED_RANGE_TIMEOUT`] and without retries: by
/// meaning too when the local search embedded the query (`vector`).
pub(crate) fn search_pruned_range(
    creds: &Credentials,
    query: &SearchQuery,
    up_to: UnixMillis,
    mode: SearchMode,
    vector: Option<&QueryVector>,
) -> OpResult<Vec<SearchHit>> {
    let client = Client::impatient(
        &creds.server,
        creds.ca_cert.as_deref(),
        PRUNED_RANGE_TIMEOUT / 2,
    )
    .map_err(|e| OpError::remote("search", &creds.server, e.into()))?;
    // The server's `to` is exclusive; `up_to` itself was removed.
    let end = up_to.0.saturating_add(1);
    let until = UnixMillis(query.until.map_or(end, |u| u.0.min(end)));
    let query = SearchQuery {
        until: Some(until),
        ..query.clone()
    };
    let limit = query.limit.clamp(1, SEARCH_MAX_LIMIT);
    Ok(ask(&client, creds, &query, limit, mode, vector)?.hits)
}

/// One search request to the central service: a token, then the query: a `GET`
/// by words, a `POST` carrying the query vector by meaning.
fn ask(
    client: &Client,
    creds: &Credentials,
    query: &SearchQuery,
    limit: usize,
    mode: SearchMode,
    vector: Option<&QueryVector>,
) -> OpResult<SearchResponse> {
    let failed = |e: SyncError| OpError::remote("search", &creds.server, e);
    let jwt = client.token(creds).map_err(|e| failed(e.into()))?;
    let mut params: Vec<(&str, String)> =
        vec![("q", query.text.clone()), ("limit", limit.to_string())];
    let optional = [
        ("project", query.project.clone()),
        ("machine", query.machine.clone()),
        ("from", query.since.map(|t| t.0.to_string())),
        ("to", query.until.map(|t| t.0.to_string())),
        ("type", query.record_type.map(|t| t.as_str().to_string())),
        ("current_project", query.current_project.clone()),
    ];
    params.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
    let answer = match vector.filter(|_| mode != SearchMode::Lexical) {
        None => client.search(&jwt, &params),
        Some(vector) => {
            let mut body: serde_json::Map<String, serde_json::Value> = params
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.into()))
                .collect();
            body.insert("limit".into(), limit.into());
            body.insert("mode".into(), mode.as_str().into());
            body.insert(
                "vector".into(),
                serde_json::to_value(vector).unwrap_or_default(),
            );
            client.search_by_meaning(&jwt, &serde_json::Value::Object(body))
        }
    };
    answer.map_err(|e| failed(e.into()))
}

/// The key of the project `text` names when this machine knows exactly one such
/// project (a path or an `owner/repo` slug means nothing to central); otherwise the
/// text as given, for central to match: it may hold projects this machine never saw.
fn project_key(app: &App, text: &str) -> String {
    let resolved = app
        .store()
        .ok()
        .and_then(|store| super::project::resolve(&store, text).ok());
    match resolved.as_deref() {
        Some([one]) => one.key.clone(),
        _ => text.to_string(),
    }
}
