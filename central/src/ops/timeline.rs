//! Records read back whole: a session's timeline, full observations by id, and
//! restore pages of the account's live records.

use super::{Caller, OpError};
use crate::storage::{FeedTypes, Storage};
use serde::Deserialize;
use solaria_shared::wire::{
    RESTORE_DEFAULT_LIMIT, RESTORE_MAX_LIMIT, RestorePage, TimelineResponse,
};
use solaria_shared::{MachineId, Observation};
use std::collections::HashMap;
use uuid::Uuid;

/// The session `id` — or the session of the observation or summary `id` — its
/// observations oldest first, its summary, and the names of the machines that wrote
/// them. Another account's ids read like unknown ones: [`OpError::NotFound`].
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn timeline(
    storage: &Storage,
    caller: Caller,
    id: Uuid,
) -> Result<TimelineResponse, OpError> {
    let timeline = storage
        .timeline(caller.account, id)
        .await?
        .ok_or_else(|| OpError::NotFound(format!("session {id} not found")))?;
    Ok(TimelineResponse {
        session: timeline.session,
        observations: timeline.observations,
        summary: timeline.summary,
        machines: timeline.machines,
    })
}

/// Observations asked for by id.
#[derive(Debug, Default)]
pub struct FoundObservations {
    /// The live observations found, in the order asked, each once.
    pub found: Vec<Observation>,
    /// The names of the machines that wrote them.
    pub names: HashMap<MachineId, String>,
    /// The ids that name no live observation of the account, each once.
    pub missing: Vec<Uuid>,
}

/// The live observations `ids` of the caller's account (each session read once).
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn observations(
    storage: &Storage,
    caller: Caller,
    ids: &[Uuid],
) -> Result<FoundObservations, OpError> {
    let mut loaded: HashMap<Uuid, Observation> = HashMap::new();
    let mut names: HashMap<MachineId, String> = HashMap::new();
    let mut missing = Vec::new();
    for id in ids {
        if loaded.contains_key(id) || missing.contains(id) {
            continue;
        }
        let Some(timeline) = storage.timeline(caller.account, *id).await? else {
            missing.push(*id);
            continue;
        };
        names.extend(timeline.machines.into_iter().map(|m| (m.id, m.name)));
        loaded.extend(
            timeline
                .observations
                .into_iter()
                .map(|o| (*o.id.as_uuid(), o)),
        );
        if !loaded.contains_key(id) {
            // A session or summary id: not an observation.
            missing.push(*id);
        }
    }
    let mut found = Vec::new();
    for id in ids {
        if let Some(o) = loaded.remove(id) {
            found.push(o);
        }
    }
    Ok(FoundObservations {
        found,
        names,
        missing,
    })
}

/// A restore page as asked: `GET /memory/restore?since=&limit=&types=`.
#[derive(Debug, Default, Deserialize)]
pub struct RestoreParams {
    /// The `next` of the previous page (0 to start).
    #[serde(default)]
    pub since: i64,
    /// Clamped to `1..=RESTORE_MAX_LIMIT`.
    pub limit: Option<usize>,
    /// Record types beyond the first release's three, comma-separated
    /// (`knowledge`), as on the change feed.
    pub types: Option<String>,
}

/// One page of the account's live records, in feed order.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn restore(
    storage: &Storage,
    caller: Caller,
    p: RestoreParams,
) -> Result<RestorePage, OpError> {
    if p.since < 0 {
        return Err(OpError::Invalid(
            "`since` is the `next` of a previous page (0 to start)".into(),
        ));
    }
    let limit = p
        .limit
        .unwrap_or(RESTORE_DEFAULT_LIMIT)
        .clamp(1, RESTORE_MAX_LIMIT);
    let types = FeedTypes::parse(p.types.as_deref());
    Ok(storage
        .restore(caller.account, p.since, limit, types)
        .await?)
}
