//! Cross-device queries over REST: `GET`/`POST /memory/search`, `GET /memory/context/{project}`,
//! `GET /memory/timeline/{session}`, `GET /memory/restore`, and knowledge:
//! `GET /memory/decisions` and `GET /memory/iteration`. Each handler reads its
//! parameters, runs the operation of `crate::ops` (the `/mcp` tools run the same ones)
//! and answers its result as JSON. Every query is scoped to the caller's account;
//! another account's ids read exactly like unknown ones (404).
//!
//! Times (`from`, `to`) are RFC 3339 (`2026-11-01T10:00:00Z`; write `+` as `%2B`), a
//! UTC date (`2026-11-01`) or Unix milliseconds. A project in a path is URL-encoded
//! (`github.com%2Facme%2Fapi`) or named by its name.

use super::error::ApiError;
use super::json::ApiJson;
use super::state::AppState;
use crate::ops::Caller;
use crate::ops::{
    self, ContextParams, DecisionsAnswer, DecisionsParams, IterationAnswer, IterationParams,
    RestoreParams, SearchParams,
};
use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use solaria_shared::wire::{ContextResponse, RestorePage, SearchResponse, TimelineResponse};
use uuid::Uuid;

fn params<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query
        .map(|Query(t)| t)
        .map_err(|e| ApiError::bad_request(format!("invalid query parameters: {}", e.body_text())))
}

fn path(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    path.map(|Path(p)| p)
        .map_err(|e| ApiError::bad_request(format!("invalid path: {}", e.body_text())))
}

/// `GET /memory/search?q=&project=&current_project=&machine=&from=&to=&type=&tags=&limit=`
pub async fn search(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<SearchParams>, QueryRejection>,
) -> Result<Json<SearchResponse>, ApiError> {
    Ok(Json(
        ops::search(&state.storage, caller, params(query)?).await?,
    ))
}

/// `POST /memory/search` with the same fields as a JSON body, and `mode` and
/// `vector` for a search by meaning (a vector does not fit a query string).
pub async fn search_posted(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(params): ApiJson<SearchParams>,
) -> Result<Json<SearchResponse>, ApiError> {
    Ok(Json(ops::search(&state.storage, caller, params).await?))
}

/// The query string of a context request.
#[derive(Debug, Deserialize)]
pub struct ContextQuery {
    budget: Option<usize>,
    /// The agent session the context is for (logged with the injection).
    session: Option<String>,
}

/// `GET /memory/context/{project}?budget=&session=`
pub async fn context(
    State(state): State<AppState>,
    caller: Caller,
    project: Result<Path<String>, PathRejection>,
    query: Result<Query<ContextQuery>, QueryRejection>,
) -> Result<Json<ContextResponse>, ApiError> {
    let project = path(project)?;
    let q = params(query)?;
    let p = ContextParams {
        project,
        budget: q.budget,
        session: q.session,
    };
    Ok(Json(ops::context(&state.storage, caller, p).await?))
}

/// `GET /memory/timeline/{session}`: the session (or the session of the observation,
/// summary or knowledge record with that id), its observations oldest first, and its
/// summary.
pub async fn timeline(
    State(state): State<AppState>,
    caller: Caller,
    session: Result<Path<String>, PathRejection>,
) -> Result<Json<TimelineResponse>, ApiError> {
    let raw = path(session)?;
    let id = Uuid::parse_str(raw.trim()).map_err(|_| {
        let shown: String = raw.chars().take(80).collect();
        ApiError::bad_request(format!(
            "`{shown}` is not a session id: expected a UUID such as 0192f3e4-5b6c-7d8e-9f00-112233445566"
        ))
    })?;
    let t = ops::timeline(&state.storage, caller, id).await?;
    Ok(Json(TimelineResponse {
        session: t.session,
        observations: t.observations,
        summary: t.summary,
        machines: t.machines,
    }))
}

/// `GET /memory/restore?since=&limit=&types=`: the account's live records, page by page
/// (knowledge records only with `types=knowledge`).
pub async fn restore(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<RestoreParams>, QueryRejection>,
) -> Result<Json<RestorePage>, ApiError> {
    Ok(Json(
        ops::restore(&state.storage, caller, params(query)?).await?,
    ))
}

/// `GET /memory/decisions?project=&all=&q=&limit=`: the account's decisions, active
/// ones only unless `all=true`, newest first (best match first with `q`).
pub async fn decisions(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<DecisionsParams>, QueryRejection>,
) -> Result<Json<DecisionsAnswer>, ApiError> {
    Ok(Json(
        ops::decisions(&state.storage, caller, params(query)?).await?,
    ))
}

/// `GET /memory/iteration?id=` or `?project=`: an iteration (by id, else the
/// project's active or latest one) with its decisions, commits and events.
pub async fn iteration(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<IterationParams>, QueryRejection>,
) -> Result<Json<IterationAnswer>, ApiError> {
    Ok(Json(
        ops::iteration(&state.storage, caller, params(query)?).await?,
    ))
}
