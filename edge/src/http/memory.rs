//! The endpoints that read the memory: `/api/search`, `/api/timeline/{id}` and
//! `/api/context`, with their parameters checked and their answers shaped as JSON.

use super::ApiState;
use super::error::{ApiError, clip};
use crate::cli::App;
use crate::context;
use crate::present;
use crate::semantic;
use crate::store::hybrid::SearchMode;
use crate::store::records;
use crate::store::search::{Hit, RecordType, SearchQuery};
use crate::store::views;
use crate::timefmt;
use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use solaria_shared::{Project, UnixMillis};
use std::ops::RangeInclusive;

/// The most results a search returns.
const MAX_LIMIT: usize = 100;
/// The most events shown on either side of a timeline's anchor.
const MAX_WINDOW: usize = 50;
/// The longest query text, in characters.
const MAX_QUERY_CHARS: usize = 1_000;

/// A parameter as given: absent and empty are the same.
fn given(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.trim().is_empty())
}

/// A whole-number parameter within `range`, `default` when absent.
fn bounded(
    name: &str,
    value: Option<String>,
    default: usize,
    range: RangeInclusive<usize>,
) -> Result<usize, ApiError> {
    let Some(text) = given(value) else {
        return Ok(default);
    };
    match text.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(ApiError::bad_request(format!(
            "`{name}` must be a whole number from {} to {}, not {:?}",
            range.start(),
            range.end(),
            clip(&text)
        ))),
    }
}

/// `GET /api/search` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchParams {
    q: Option<String>,
    mode: Option<String>,
    project: Option<String>,
    #[serde(rename = "type")]
    record_type: Option<String>,
    machine: Option<String>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<String>,
    /// A project key whose records rank a little higher (the CLI passes the one
    /// it runs in; the daemon itself has none).
    current_project: Option<String>,
}

/// `GET /api/search`'s answer.
#[derive(Debug, Serialize)]
pub(super) struct SearchAnswer {
    query: String,
    mode: SearchMode,
    /// Why a search without `mode` ran by words only (the model does not load).
    #[serde(skip_serializing_if = "Option::is_none")]
    fell_back: Option<String>,
    hits: Vec<ApiHit>,
}

/// One hit: the store's, with its citation and its machine's name.
#[derive(Debug, Serialize)]
struct ApiHit {
    /// `[O#id]` for an observation, `[S#session]` for a session summary.
    cite: String,
    #[serde(flatten)]
    hit: Hit,
    machine_name: String,
}

pub(super) async fn search(
    State(s): State<ApiState>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Result<Json<SearchAnswer>, ApiError> {
    let Query(p) = params?;
    s.blocking(move |app| search_json(app, p)).await
}

fn search_json(app: &App, p: SearchParams) -> Result<SearchAnswer, ApiError> {
    let text = given(p.q).ok_or_else(|| {
        ApiError::bad_request("`q` is required: the words to look for (/api/search?q=flaky+test)")
    })?;
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "`q` is too long: at most {MAX_QUERY_CHARS} characters"
        )));
    }
    let now = UnixMillis::now();
    let when = |name: &str, value: Option<String>| -> Result<Option<UnixMillis>, ApiError> {
        given(value)
            .map(|t| {
                timefmt::parse_when(&t, now)
                    .map_err(|e| ApiError::bad_request(format!("`{name}`: {e}")))
            })
            .transpose()
    };
    let record_type = given(p.record_type)
        .map(|t| t.parse::<RecordType>())
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("`type`: {}", clip(&e))))?;
    let mode = given(p.mode)
        .map(|m| m.parse::<SearchMode>())
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("`mode`: {}", clip(&e))))?;
    let query = SearchQuery {
        text,
        project: given(p.project),
        record_type,
        machine: given(p.machine),
        since: when("since", p.since)?,
        until: when("until", p.until)?,
        limit: bounded("limit", p.limit, 20, 1..=MAX_LIMIT)?,
        // The daemon has no current project of its own: only a caller's is favoured.
        current_project: given(p.current_project),
    };
    let store = app.store()?;
    let searched = semantic::search(
        &app.config,
        &app.paths,
        &store,
        &query,
        mode,
        semantic::ModelSource::Cached,
    )?;
    let mut names = present::MachineNames::new(store.conn(), store.machine_id());
    let hits = searched
        .hits
        .into_iter()
        .map(|hit| ApiHit {
            cite: present::citation(&hit),
            machine_name: names.name_of(&hit.machine_id),
            hit,
        })
        .collect();
    Ok(SearchAnswer {
        query: query.text,
        mode: searched.mode,
        fell_back: searched.fell_back,
        hits,
    })
}

/// `GET /api/timeline/{id}` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WindowParams {
    before: Option<String>,
    after: Option<String>,
}

pub(super) async fn timeline(
    State(s): State<ApiState>,
    id: Result<Path<String>, PathRejection>,
    params: Result<Query<WindowParams>, QueryRejection>,
) -> Result<Json<views::Timeline>, ApiError> {
    let Path(id) = id?;
    let Query(p) = params?;
    s.blocking(move |app| {
        let before = bounded("before", p.before, 5, 0..=MAX_WINDOW)?;
        let after = bounded("after", p.after, 5, 0..=MAX_WINDOW)?;
        let store = app.store()?;
        Ok(views::timeline(store.conn(), &id, before, after)?)
    })
    .await
}

/// `GET /api/context` parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ContextParams {
    project: Option<String>,
}

/// `GET /api/context`'s answer.
#[derive(Debug, Serialize)]
pub(super) struct ContextAnswer {
    project: Project,
    /// What SessionStart would inject; `None` when there is nothing to say.
    context: Option<String>,
    /// About how many tokens `context` costs.
    tokens: usize,
}

pub(super) async fn context_of(
    State(s): State<ApiState>,
    params: Result<Query<ContextParams>, QueryRejection>,
) -> Result<Json<ContextAnswer>, ApiError> {
    let Query(p) = params?;
    s.blocking(move |app| {
        let name = given(p.project).ok_or_else(|| {
            ApiError::bad_request(
                "`project` is required: a project key or name (/api/context?project=api)",
            )
        })?;
        let store = app.store()?;
        let project = records::resolve_project(store.conn(), &name)?.ok_or_else(|| {
            ApiError::not_found(format!(
                "no project named {:?} in the memory (see /api/stats)",
                clip(&name)
            ))
        })?;
        let text = context::build(&store, &project, &app.config.context, UnixMillis::now())?;
        Ok(ContextAnswer {
            tokens: text.as_deref().map_or(0, context::estimate_tokens),
            project,
            context: text,
        })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn numbers_out_of_bounds_are_refused() {
        assert_eq!(bounded("limit", None, 20, 1..=100).expect("default"), 20);
        assert_eq!(
            bounded("limit", Some("100".into()), 20, 1..=100).expect("max"),
            100
        );
        for bad in ["0", "101", "-1", "ten", "1e3"] {
            let e = bounded("limit", Some(bad.into()), 20, 1..=100).expect_err(bad);
            assert_eq!(e.status, StatusCode::BAD_REQUEST);
            assert!(e.message.contains("`limit`"), "{}", e.message);
        }
    }
}
