//! `POST /memory/sync` (push a batch) and `GET /memory/changes` (pull the feed;
//! `types=knowledge` adds the knowledge records, see `storage::FeedTypes`;
//! `embeddings=FINGERPRINT` adds the vectors that model made of the page's records,
//! in f32 unless `embedding_encoding=i8` asks for a quarter of the bytes); and what a
//! machine learns of its account at each sync: its machines' names
//! (`GET /memory/machines`) and its shared project patterns (`GET /memory/shared`).

use super::error::ApiError;
use super::json::ApiJson;
use super::state::AppState;
use crate::ops::Caller;
use crate::storage::{self, FeedTypes, SyncKind};
use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use solaria_shared::embedding::VectorEncoding;
use solaria_shared::hlc::HlcClock;
use solaria_shared::wire::{ChangesPage, MAX_BATCH, SyncBatch, SyncResponse, WireRecord};
use solaria_shared::{MachineId, UnixMillis};

#[derive(Debug, Deserialize)]
pub struct PushParams {
    #[serde(rename = "type")]
    kind: Option<SyncKind>,
}

#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account, records))]
pub async fn push(
    State(state): State<AppState>,
    caller: Caller,
    Query(params): Query<PushParams>,
    ApiJson(batch): ApiJson<SyncBatch>,
) -> Result<Json<SyncResponse>, ApiError> {
    tracing::Span::current().record("records", batch.records.len());
    if batch.records.len() > MAX_BATCH || batch.embeddings.len() > MAX_BATCH {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "batch_too_large",
            format!(
                "{} records and {} vectors in one batch; the limit is {MAX_BATCH} of each: split it and send the parts in order",
                batch.records.len(),
                batch.embeddings.len()
            ),
        ));
    }
    let results = state
        .storage
        .apply_batch(
            caller.viewer(),
            caller.machine,
            batch.records,
            params.kind.unwrap_or(SyncKind::Batch),
        )
        .await?;
    super::metrics::count_outcomes(&results);
    // After the records: a vector is kept only for the version its record now has.
    let embeddings_refused = state
        .storage
        .store_embeddings(caller.viewer(), caller.machine, &batch.embeddings)
        .await?;
    let mut clock = HlcClock::default();
    let server_time = clock.tick(UnixMillis::now().0.max(0) as u64);
    Ok(Json(SyncResponse {
        results,
        server_time,
        embeddings_refused,
    }))
}

#[derive(Debug, Deserialize)]
pub struct ChangesParams {
    #[serde(default)]
    since: i64,
    limit: Option<usize>,
    /// Record types beyond the first release's three, comma-separated
    /// (`knowledge`); without it the page holds only sessions, observations and
    /// summaries, the types every edge parses.
    types: Option<String>,
    /// A model fingerprint: the page also carries the vectors that model made of
    /// its live records (`ChangesPage::embeddings`). Without it, none.
    embeddings: Option<String>,
    /// How those vectors are written: `f32` (the default, what every edge reads)
    /// or `i8` (a quarter of the bytes, for an edge that knows it).
    embedding_encoding: Option<String>,
}

/// The most changes one page may hold.
const MAX_PAGE: usize = 1000;

pub async fn changes(
    State(state): State<AppState>,
    caller: Caller,
    Query(params): Query<ChangesParams>,
) -> Result<Json<ChangesPage>, ApiError> {
    if params.since < 0 {
        return Err(ApiError::bad_request(
            "`since` is a cursor from a previous page (0 to start)",
        ));
    }
    let encoding = match params.embedding_encoding.as_deref() {
        None => VectorEncoding::F32,
        Some(text) => VectorEncoding::parse(text)
            .ok_or_else(|| ApiError::bad_request("`embedding_encoding` is `f32` or `i8`"))?,
    };
    let limit = params.limit.unwrap_or(500).clamp(1, MAX_PAGE);
    let mut page = storage::changes(
        &state.storage,
        caller.viewer(),
        params.since,
        limit,
        FeedTypes::parse(params.types.as_deref()),
    )
    .await?;
    if let Some(model) = params.embeddings.as_deref() {
        let versions: Vec<_> = page
            .changes
            .iter()
            .filter(|c| !c.record.meta().deleted && !matches!(c.record, WireRecord::Session(_)))
            .map(|c| (c.record.id(), c.record.updated()))
            .collect();
        page.embeddings = state
            .storage
            .embeddings_for(caller.account, caller.machine, model, &versions, encoding)
            .await?;
    }
    Ok(Json(page))
}

/// `GET /memory/machines`: the account's machines, their names and, for a
/// teammate's, whose they are, so an edge can label records pulled from the others.
pub async fn machines(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<solaria_shared::wire::MachineName>>, ApiError> {
    let ids: Vec<MachineId> = state
        .storage
        .list_machines(caller.account)
        .await?
        .into_iter()
        .map(|m| m.id)
        .collect();
    Ok(Json(
        state.storage.machine_names(caller.viewer(), &ids).await?,
    ))
}

/// `GET /memory/shared`: the account's shared project patterns, so that a machine
/// can say which of its projects the team sees (every person of the account may
/// know what the account shares).
pub async fn shared(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<solaria_shared::wire::SharedProjects>, ApiError> {
    let patterns = state
        .storage
        .shared_projects(caller.account)
        .await?
        .into_iter()
        .map(|p| p.pattern)
        .collect();
    Ok(Json(solaria_shared::wire::SharedProjects { patterns }))
}
