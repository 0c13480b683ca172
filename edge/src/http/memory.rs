//! The endpoints that read the memory: `/api/search`, `/api/timeline/{id}` and
//! `/api/context`: query strings parsed into the operations' requests, their
//! results answered as JSON.

use super::ApiState;
use super::error::ApiError;
use crate::ops::context::{ProjectContext, context_of};
use crate::ops::input::{self, bounded_text, given};
use crate::ops::recall::{Recall, RecallRequest};
use crate::ops::records::{self, DEFAULT_WINDOW, MAX_WINDOW, TimelineRequest};
use crate::ops::search::{self, Model, SearchFields};
use crate::present::records::TimelinePage;
use crate::present::search::SearchResult;
use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use solaria_shared::UnixMillis;
use solaria_shared::render::snippet::MAX_PASSAGE_CHARS;
use solaria_shared::wire::QueryVector;

pub(super) async fn search(
    State(s): State<ApiState>,
    params: Result<Query<SearchFields>, QueryRejection>,
) -> Result<Json<SearchResult>, ApiError> {
    let Query(fields) = params?;
    let request = fields.request(UnixMillis::now())?;
    s.blocking(move |app| search::search(app, &request, Model::Kept))
        .await
}

/// `POST /api/recall`: what a prompt recalls, by meaning too when the daemon's
/// model made the stored vectors (asked by the prompt hooks; docs/LOCAL_API.md).
pub(super) async fn recall(
    State(s): State<ApiState>,
    body: Result<Json<RecallRequest>, JsonRejection>,
) -> Result<Json<Recall>, ApiError> {
    let Json(request) = body?;
    if request.prompt.chars().count() > MAX_PROMPT_CHARS {
        return Err(ApiError::bad_request(format!(
            "`prompt` is too long: at most {MAX_PROMPT_CHARS} characters"
        )));
    }
    s.blocking(move |app| crate::ops::recall::for_request(app, &request))
        .await
}

/// `POST /api/embed` body: the text of a query to search the central service by
/// meaning with.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EmbedRequest {
    text: String,
}

/// `POST /api/embed`: a query's vector by the model the daemon keeps loaded, so a
/// `solaria search --remote` by meaning does not load one (docs/LOCAL_API.md).
pub(super) async fn embed(
    State(s): State<ApiState>,
    body: Result<Json<EmbedRequest>, JsonRejection>,
) -> Result<Json<QueryVector>, ApiError> {
    let Json(request) = body?;
    if request.text.trim().is_empty() {
        return Err(ApiError::bad_request("`text` is empty: the query to embed"));
    }
    if request.text.chars().count() > search::MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "`text` is too long: at most {} characters",
            search::MAX_QUERY_CHARS
        )));
    }
    s.blocking(move |app| crate::ops::remote::embedding(app, &request.text))
        .await
}

/// `POST /api/closest` body: a query's vector and, per hit, the passages to weigh.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClosestRequest {
    vector: QueryVector,
    lists: Vec<Vec<String>>,
}

/// `POST /api/closest`: for each list of passages (a remote hit's sentences), the
/// index of the one closest to the query's vector by the model the daemon keeps
/// loaded, which must have made the vector; as many passages as a search weighs.
pub(super) async fn closest(
    State(s): State<ApiState>,
    body: Result<Json<ClosestRequest>, JsonRejection>,
) -> Result<Json<Vec<Option<usize>>>, ApiError> {
    let Json(request) = body?;
    let passages: usize = request.lists.iter().map(Vec::len).sum();
    if passages > crate::ops::passages::MEANING_PASSAGES {
        return Err(ApiError::bad_request(format!(
            "{passages} passages: at most {} a search",
            crate::ops::passages::MEANING_PASSAGES
        )));
    }
    if request
        .lists
        .iter()
        .flatten()
        .any(|p| p.chars().count() > MAX_PASSAGE_CHARS)
    {
        return Err(ApiError::bad_request(format!(
            "a passage is too long: at most {MAX_PASSAGE_CHARS} characters"
        )));
    }
    if request.vector.values.is_empty()
        || request.vector.values.len() > solaria_shared::wire::MAX_QUERY_DIMENSIONS
    {
        return Err(ApiError::bad_request("`vector` has no or too many values"));
    }
    s.blocking(move |app| crate::ops::remote::closest(app, &request.vector, &request.lists))
        .await
}

/// The longest prompt `/api/recall` weighs, in characters (a prompt hook sends the
/// whole prompt; a model reads a few hundred tokens of it anyway).
const MAX_PROMPT_CHARS: usize = 20_000;

/// `GET /api/timeline/{id}` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WindowParams {
    before: Option<String>,
    after: Option<String>,
    /// Only records of this type (`tool_use`, `decision`…).
    #[serde(rename = "type")]
    record_type: Option<String>,
}

pub(super) async fn timeline(
    State(s): State<ApiState>,
    id: Result<Path<String>, PathRejection>,
    params: Result<Query<WindowParams>, QueryRejection>,
) -> Result<Json<TimelinePage>, ApiError> {
    let Path(id) = id?;
    let Query(p) = params?;
    let request = TimelineRequest {
        id,
        before: bounded_text("before", p.before, DEFAULT_WINDOW, 0..=MAX_WINDOW)?,
        after: bounded_text("after", p.after, DEFAULT_WINDOW, 0..=MAX_WINDOW)?,
        kind: input::parsed("type", p.record_type)?,
    };
    s.blocking(move |app| records::timeline(app, &request))
        .await
}

/// `GET /api/context` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ContextParams {
    project: Option<String>,
}

pub(super) async fn context_of_project(
    State(s): State<ApiState>,
    params: Result<Query<ContextParams>, QueryRejection>,
) -> Result<Json<ProjectContext>, ApiError> {
    let Query(p) = params?;
    let name = given(p.project).ok_or_else(|| {
        ApiError::bad_request(
            "`project` is required: a project name, key, owner/repo or path (/api/context?project=api)",
        )
    })?;
    s.blocking(move |app| context_of(app, Some(&name))).await
}
