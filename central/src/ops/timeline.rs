//! Records read back whole: a session's timeline (`GET /memory/timeline/{id}`, and
//! around a record for `memory_timeline`), records in full by id or citation
//! (`memory_get_observations`), and restore pages of the account's live records.

use super::{Caller, OpError};
use crate::storage::{self, FeedTypes, Storage};
use serde::Deserialize;
use solaria_shared::mcp::{MAX_IDS, not_found};
use solaria_shared::render::timeline::{Timeline, window};
use solaria_shared::wire::{
    MachineName, RESTORE_DEFAULT_LIMIT, RESTORE_MAX_LIMIT, RestorePage, WireRecord,
};
use solaria_shared::{
    Citation, CitedKind, Knowledge, KnowledgeId, MachineId, RecordType, SessionId,
};
use std::collections::HashMap;
use uuid::Uuid;

/// A record as a caller names it: its id, or a commit by (the start of) its sha.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reference {
    Id(Uuid),
    Sha(String),
}

/// What `raw` (an id or a citation as printed: `[O#…]`, `S#…`, `[C#sha7]`) names.
fn reference(raw: &str) -> Result<Reference, OpError> {
    let cited = Citation::parse_lenient(raw).ok().flatten();
    let bare = cited.as_ref().map_or(raw, |c| c.id.as_str()).trim();
    if let Ok(id) = Uuid::parse_str(bare) {
        return Ok(Reference::Id(id));
    }
    let sha_like = bare.len() >= 7 && bare.bytes().all(|b| b.is_ascii_hexdigit());
    if sha_like && cited.as_ref().is_none_or(|c| c.kind == CitedKind::Commit) {
        return Ok(Reference::Sha(bare.to_ascii_lowercase()));
    }
    let shown: String = raw.chars().take(80).collect();
    Err(OpError::Invalid(format!(
        "`{shown}` is not a record id: expected a UUID or a citation such as [O#0192f3e4-5b6c-7d8e-9f00-112233445566] or [C#0f1e2d3]"
    )))
}

/// The one commit of the account a sha names, if exactly one.
async fn commit(
    storage: &Storage,
    caller: Caller,
    sha: &str,
) -> Result<Option<Knowledge>, OpError> {
    let mut found = storage.commits_by_sha(caller.viewer(), sha).await?;
    Ok(if found.len() == 1 { found.pop() } else { None })
}

/// The session `id` — or the session of the observation, summary or knowledge
/// record `id` — its observations oldest first, its summary, the knowledge recorded
/// in it, and the names of the machines that wrote them. Another account's ids read
/// like unknown ones: [`OpError::NotFound`].
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn timeline(
    storage: &Storage,
    caller: Caller,
    id: Uuid,
) -> Result<storage::Timeline, OpError> {
    storage
        .timeline(caller.viewer(), id)
        .await?
        .ok_or_else(|| OpError::NotFound(format!("session {id} not found")))
}

/// What happened around a record: `memory_timeline`'s arguments, bounded.
#[derive(Debug, Clone)]
pub struct AroundRequest {
    /// An id or a citation (an observation, session, summary, or knowledge recorded
    /// in a session; a commit by its sha).
    pub id: String,
    pub before: usize,
    pub after: usize,
    /// Only records of this type (an observation kind or a knowledge kind).
    pub kind: Option<RecordType>,
}

/// A session's timeline around a record, as the edge shows it
/// (`store/src/views.rs`): the events `before` and `after` the anchor (an
/// observation asked for), or the first ones, and the knowledge recorded in it.
#[derive(Debug, Clone)]
pub struct Around {
    pub timeline: Timeline,
    pub names: HashMap<MachineId, MachineName>,
}

/// The timeline around the record `request.id` names.
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn around(
    storage: &Storage,
    caller: Caller,
    request: &AroundRequest,
) -> Result<Around, OpError> {
    let not_found = || {
        let shown: String = request.id.trim().chars().take(80).collect();
        OpError::NotFound(format!("record {shown} not found"))
    };
    let id = match reference(&request.id)? {
        Reference::Id(id) => id,
        Reference::Sha(sha) => commit(storage, caller, &sha)
            .await?
            .and_then(|k| k.session_id)
            .map(|s| *s.as_uuid())
            .ok_or_else(not_found)?,
    };
    let t = storage
        .timeline(caller.viewer(), id)
        .await?
        .ok_or_else(not_found)?;
    let kind = request.kind;
    // Only an observation anchors the window, as on the edge.
    let anchored = t.observations.iter().any(|o| *o.id.as_uuid() == id);
    let mut all = t.observations;
    all.retain(|o| kind.is_none_or(|k| k.observation_kind() == Some(o.kind)));
    let mut knowledge = t.knowledge;
    knowledge.retain(|k| {
        RecordType::of_knowledge(k.kind()).is_some_and(|t| kind.is_none_or(|want| want == t))
    });
    let at = anchored.then(|| all.iter().position(|o| *o.id.as_uuid() == id).unwrap_or(0));
    let (start, end) = window(all.len(), at, request.before, request.after);
    Ok(Around {
        timeline: Timeline {
            session: t.session,
            summary: t.summary,
            anchor: anchored.then(|| id.to_string()),
            hidden_before: start,
            hidden_after: all.len() - end,
            entries: all[start..end].to_vec(),
            knowledge,
        },
        names: t.machines.into_iter().map(|m| (m.id, m)).collect(),
    })
}

/// Records asked for by id, in full, with what their pages show beside them.
#[derive(Debug, Default)]
pub struct FoundRecords {
    /// The live records found, in the order asked.
    pub records: Vec<WireRecord>,
    /// The key points of the summaries of the sessions among `records`.
    pub session_points: HashMap<SessionId, Vec<String>>,
    /// The links naming each knowledge record among `records` (both ways), and
    /// the records at their other ends.
    pub relations: HashMap<KnowledgeId, (Vec<Knowledge>, Vec<Knowledge>)>,
    /// The names of the machines that wrote `records`.
    pub names: HashMap<MachineId, MachineName>,
    /// The ids (as given) that name no live record of the account.
    pub missing: Vec<String>,
}

/// The live records of the caller's account that `ids` name (ids or citations of
/// any kind: observations, sessions, summaries, knowledge, commits by sha), at most
/// [`MAX_IDS`]. Another account's ids read like unknown ones; when none is found,
/// [`OpError::NotFound`].
#[tracing::instrument(skip_all, fields(machine = %caller.machine, account = %caller.account))]
pub async fn records(
    storage: &Storage,
    caller: Caller,
    ids: &[String],
) -> Result<FoundRecords, OpError> {
    if ids.is_empty() || ids.len() > MAX_IDS {
        return Err(OpError::Invalid(format!(
            "`ids` must hold between 1 and {MAX_IDS} ids, not {}",
            ids.len()
        )));
    }
    let refs = ids
        .iter()
        .map(|raw| reference(raw))
        .collect::<Result<Vec<_>, _>>()?;
    let uuids: Vec<Uuid> = refs
        .iter()
        .filter_map(|r| match r {
            Reference::Id(id) => Some(*id),
            Reference::Sha(_) => None,
        })
        .collect();
    let by_id: HashMap<Uuid, WireRecord> = storage
        .records_by_ids(caller.viewer(), &uuids)
        .await?
        .into_iter()
        .map(|r| (r.id(), r))
        .collect();
    let mut found = FoundRecords::default();
    for (raw, r) in ids.iter().zip(&refs) {
        let record = match r {
            Reference::Id(id) => by_id.get(id).cloned(),
            Reference::Sha(sha) => commit(storage, caller, sha)
                .await?
                .map(WireRecord::Knowledge),
        };
        match record {
            Some(record) => found.records.push(record),
            None => found.missing.push(raw.clone()),
        }
    }
    if found.records.is_empty() {
        return Err(OpError::NotFound(not_found(&found.missing)));
    }
    let sessions: Vec<Uuid> = found
        .records
        .iter()
        .filter_map(|r| match r {
            WireRecord::Session(s) => Some(*s.id.as_uuid()),
            _ => None,
        })
        .collect();
    for summary in storage
        .summaries_of_sessions(caller.viewer(), &sessions)
        .await?
    {
        found
            .session_points
            .insert(summary.session_id, summary.key_points);
    }
    for r in &found.records {
        if let WireRecord::Knowledge(k) = r {
            let links = storage.links_of(caller.viewer(), k).await?;
            let mut wanted: Vec<Uuid> = Vec::new();
            for id in links.iter().flat_map(Knowledge::references) {
                if id != k.id && !wanted.contains(id.as_uuid()) {
                    wanted.push(*id.as_uuid());
                }
            }
            let others: Vec<Knowledge> = storage
                .knowledge_by_ids(caller.viewer(), &wanted)
                .await?
                .into_iter()
                .filter(|o| !o.meta.deleted)
                .collect();
            found.relations.insert(k.id, (links, others));
        }
    }
    let machines: Vec<MachineId> = found.records.iter().map(WireRecord::machine_id).collect();
    found.names = storage.machine_labels(caller.viewer(), &machines).await?;
    Ok(found)
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
        .restore(caller.viewer(), p.since, limit, types)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_read_ids_citations_and_commit_shas() {
        let id = Uuid::now_v7();
        for raw in [
            id.to_string(),
            format!("[O#{id}]"),
            format!("D#{id}"),
            format!(" [S#{id}] "),
        ] {
            assert_eq!(reference(&raw).ok(), Some(Reference::Id(id)), "{raw}");
        }
        assert_eq!(
            reference("[C#0F1E2D3]").ok(),
            Some(Reference::Sha("0f1e2d3".into()))
        );
        for bad in ["[O#nope]", "[D#0f1e2d3]", "0f1e2", "nonsense"] {
            let e = reference(bad).expect_err(bad);
            assert!(e.to_string().contains("not a record id"), "{e}");
        }
    }
}
