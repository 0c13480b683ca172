//! Sync with the central service: push this machine's changes since the
//! last acknowledged push, in batches of at most 1000, then pull the change feed from
//! the stored cursor and apply it with last-write-wins.
//!
//! What keeps it honest: a cursor advances only in the transaction that commits the
//! data it covers (the pull cursor with the pulled records; the push cursor once the
//! server has answered for the batch), so an interrupted sync — network drop,
//! kill -9, server restart — resumes where it stopped, and a re-sent batch is
//! harmless (the server applies versions idempotently). Private spans are stripped
//! from everything pushed; local-only projects are never pushed.

pub mod client;
pub mod credentials;

use crate::config::SyncConfig;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::sync::{self as store_sync, PULL_CURSOR_KEY, PUSH_CURSOR_KEY, SyncStatus};
use crate::store::{vectors, vectors_wire};
use client::{Client, ClientError};
use credentials::Credentials;
use serde::Serialize;
use solaria_shared::embedding::{
    EMBEDDINGS_CAPABILITY, EMBEDDINGS_I8_CAPABILITY, VectorEncoding, WireEmbedding,
};
use solaria_shared::private::{strip_private, strip_private_json};
use solaria_shared::wire::{
    KNOWLEDGE_TYPE, MAX_BATCH, RecordOutcome, TEAM_OBSERVATIONS, WireRecord,
};
use solaria_shared::{UnixMillis, hlc};
use std::time::{Duration, Instant};

/// Vectors per push. A central service with pgvector adds each to its HNSW index
/// inside the request (about 7 ms a vector on a 2-core machine, docs/BENCHMARKS.md),
/// so a batch stays a couple of seconds, far from the service's request timeout: a
/// push that timed out would be retried whole and never get through.
const VECTOR_BATCH: usize = 250;

/// The sync-state key saying which record types this machine's pull cursor has
/// read the feed with (`knowledge` once it asked for knowledge records).
pub const FEED_TYPES_KEY: &str = "feed_types";

/// The most changes pulled per page.
const PULL_PAGE: usize = 1000;

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(
        "this machine is not connected to a central service; run `solaria login SERVER --token TOKEN`"
    )]
    NotLoggedIn,
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "the sync took longer than {0:?} and was stopped; what was done is kept, run `solaria sync` again to continue"
    )]
    Timeout(Duration),
}

/// What a sync did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    pub pushed: usize,
    pub pulled: usize,
    /// Local changes that lost to newer versions from elsewhere.
    pub conflicts: usize,
    /// Records the server refused, with its reasons.
    pub rejected: Vec<String>,
    /// Pulled records not applied here, with the reason: versions no store may
    /// keep (`Knowledge::refused_because`), which no honest machine writes. The
    /// pull goes on past them.
    pub refused_pulled: Vec<String>,
    /// How far this machine's clock is from the server's (ms; positive: behind).
    /// Stamps are corrected by it.
    pub clock_offset_ms: i64,
    /// Changes stamped ahead of the corrected clock that got new stamps.
    pub restamped: usize,
    /// Vectors made here that the server now keeps for the other machines.
    pub vectors_pushed: usize,
    /// Pulled vectors stored in place of an embedding pass.
    pub vectors_pulled: usize,
    /// Vectors not kept, with the reason (malformed, or made from a version that is
    /// no longer current); their records are synced all the same, and this machine
    /// embeds them itself.
    pub vectors_refused: Vec<String>,
    /// This machine's model, when the server keeps vectors of other models only:
    /// its vectors stay here (they go once the operator lists the model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectors_not_taken: Option<String>,
    pub duration_ms: u128,
}

impl SyncReport {
    /// `pushed 3, pulled 1, conflicts 0`: what a log line says of it.
    pub fn counts(&self) -> String {
        format!(
            "pushed {}, pulled {}, conflicts {}",
            self.pushed, self.pulled, self.conflicts
        )
    }
}

/// Options of one run.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    /// Stop (keeping what was done) after this long.
    pub deadline: Duration,
    /// `manual`, `batch` (scheduled) or `session_end`, as the server logs it.
    pub kind: &'static str,
    /// Projects (keys or names) never pushed.
    pub local_only: Vec<String>,
    /// Pull teammates' observations of shared projects too.
    pub team_observations: bool,
}

impl SyncOptions {
    /// A run of `kind` within `deadline`, as `[sync]` says.
    pub fn new(kind: &'static str, deadline: Duration, config: &SyncConfig) -> SyncOptions {
        SyncOptions {
            deadline,
            kind,
            local_only: config.local_only_projects.clone(),
            team_observations: config.team_observations,
        }
    }

    /// What the change feed is asked for (`types`): knowledge, and teammates'
    /// observations when wanted.
    fn feed_types(&self) -> String {
        if self.team_observations {
            format!("{KNOWLEDGE_TYPE},{TEAM_OBSERVATIONS}")
        } else {
            KNOWLEDGE_TYPE.to_string()
        }
    }
}

/// Something to tell the user while a sync runs.
#[derive(Debug, Clone)]
pub enum Progress {
    Pushed { done: usize, left: i64 },
    Pulled { done: usize },
}

/// Runs one push-then-pull against the server of `creds`.
pub fn run(
    store: &mut Store,
    creds: &Credentials,
    options: &SyncOptions,
    mut progress: impl FnMut(Progress),
) -> Result<SyncReport, SyncError> {
    let started = Instant::now();
    let check_time = || {
        if started.elapsed() > options.deadline {
            Err(SyncError::Timeout(options.deadline))
        } else {
            Ok(())
        }
    };
    let client = Client::new(&creds.server, creds.ca_cert.as_deref())?;
    let grant = client.grant(creds)?;
    let jwt = grant.token;
    let server_stores_knowledge = grant.types.iter().any(|t| t == KNOWLEDGE_TYPE);
    let server_stores_vectors = grant.types.iter().any(|t| t == EMBEDDINGS_CAPABILITY);
    // Vectors go both ways as int8 when the server takes it: a quarter of the
    // bytes, no measurable loss in retrieval (docs/BENCHMARKS.md).
    let vector_encoding = if grant.types.iter().any(|t| t == EMBEDDINGS_I8_CAPABILITY) {
        VectorEncoding::I8
    } else {
        VectorEncoding::F32
    };
    let mut report = SyncReport::default();

    // Stamp by the server's clock from now on, and give the changes stamped ahead
    // before the correction new stamps, so that the server accepts them.
    if let Some((server_ms, real_ms)) = client.server_time() {
        let offset = hlc::clock_offset(server_ms, store.wall().reading_at(real_ms));
        let cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let corrected = store.write(|w| w.correct_clock(offset, cursor))?;
        report.clock_offset_ms = corrected.offset_ms;
        report.restamped = corrected.restamped;
    }

    // How the service searches, for `solaria status` (a server without the line
    // says nothing).
    if let Some(line) = client.search_capability() {
        store.write(|w| w.set_state(store_sync::CENTRAL_SEARCH_KEY, &line))?;
    }
    // Which projects the account shares, for the viewer (a server without the
    // endpoint says nothing, and what was known stays).
    if let Ok(shared) = client.shared_projects(&jwt) {
        let patterns = serde_json::to_string(&shared.patterns).unwrap_or_default();
        store.write(|w| w.set_state(store_sync::SHARED_PROJECTS_KEY, &patterns))?;
    }
    if let Ok(names) = client.machines(&jwt) {
        store.write(|w| {
            for m in &names {
                w.set_machine_name(m)?;
            }
            Ok(())
        })?;
    }

    // Push.
    let me = store.machine_id();
    let mut all_pushed = true;
    loop {
        check_time()?;
        let cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let mut batch = store_sync::pending(store.conn(), me, cursor, MAX_BATCH)?;
        // A server of the first release cannot parse knowledge records: push what
        // comes before the first one and keep it and the rest pending (nothing
        // is lost; they go once the server is upgraded).
        let held_at = (!server_stores_knowledge)
            .then(|| {
                batch.iter().position(|r| {
                    matches!(r, WireRecord::Knowledge(_)) && !is_local_only(r, &options.local_only)
                })
            })
            .flatten();
        if let Some(k) = held_at {
            batch.truncate(k);
            let waiting = store_sync::pending_count(store.conn(), me, cursor)?;
            report.rejected.push(format!(
                "{waiting} records wait, starting with a decision, memory or other knowledge record: the server does not store knowledge records yet. Upgrade the central service, then sync again; nothing is lost"
            ));
        }
        let Some(last) = batch.last().map(|r| r.updated().as_i64()) else {
            break;
        };
        let outgoing: Vec<&WireRecord> = batch
            .iter()
            .filter(|r| !is_local_only(r, &options.local_only))
            .collect();
        let answer = if outgoing.is_empty() {
            None
        } else {
            let wire: Vec<WireRecord> = outgoing.iter().map(|r| prepare_outgoing(r)).collect();
            Some(client.push(&jwt, &wire, &[], options.kind)?)
        };
        // A refused record stops the push before it: the cursor never passes a record
        // the server does not hold, so it stays pending (and visible) until fixed.
        let refused_at = answer.as_ref().and_then(|a| {
            a.results
                .iter()
                .position(|o| matches!(o, RecordOutcome::Rejected { .. }))
        });
        let new_cursor = match refused_at {
            None => last,
            Some(k) => {
                let first_refused = outgoing[k].updated();
                batch
                    .iter()
                    .map(|r| r.updated())
                    .take_while(|u| *u < first_refused)
                    .last()
                    .map_or(cursor, |u| u.as_i64())
            }
        };
        store.write(|w| {
            if let Some(answer) = &answer {
                for outcome in &answer.results {
                    match outcome {
                        RecordOutcome::Applied { .. } => report.pushed += 1,
                        RecordOutcome::Stale { winner, .. } => {
                            // Apply the winner before the cursor moves past our loser,
                            // so the loss is recorded as a conflict.
                            let applied = w.apply_winners(std::slice::from_ref(winner), cursor)?;
                            w.count_foreign(applied.foreign)?;
                            report.conflicts += applied.conflicts;
                            report.refused_pulled.extend(applied.refused);
                        }
                        RecordOutcome::Rejected { id, reason } => {
                            report.rejected.push(format!("{id}: {reason}"));
                        }
                    }
                }
                w.observe(answer.server_time);
            }
            w.set_state(PUSH_CURSOR_KEY, &new_cursor.to_string())
        })?;
        if refused_at.is_some() || held_at.is_some() {
            all_pushed = false;
            break;
        }
        let left = store_sync::pending_count(store.conn(), me, new_cursor)?;
        progress(Progress::Pushed {
            done: report.pushed,
            left,
        });
    }

    // Vectors made here, once the server holds every record they belong to, and
    // only of a model the server keeps (it says which; an older one does not).
    let model_taken = match (&grant.vector_models, vectors::index_model(store.conn())?) {
        (Some(taken), Some(ours)) if !taken.contains(&ours.fingerprint) => {
            report.vectors_not_taken = Some(ours.fingerprint);
            false
        }
        _ => true,
    };
    if server_stores_vectors && all_pushed && model_taken {
        push_vectors(
            store,
            &client,
            &jwt,
            options,
            vector_encoding,
            &mut report,
            &check_time,
        )?;
    }

    // Pull. A machine that pulled asking for other types than it asks for now (an
    // edge of the first release, since upgraded, which knew no knowledge records;
    // `team_observations` just turned on) reads the feed once more from the start:
    // its cursor went past what the server left out for it. Re-applying what it
    // already holds changes nothing (last write wins).
    let feed_types = options.feed_types();
    let knew_types =
        store_sync::state(store.conn(), FEED_TYPES_KEY)?.as_deref() == Some(feed_types.as_str());
    if server_stores_knowledge && !knew_types {
        store.write(|w| w.set_state(PULL_CURSOR_KEY, "0"))?;
    }
    let mut erased = 0;
    // Vectors are asked for by this index's model (the caller readied the index
    // for the installed model); another model's are never sent, nor stored.
    let index = if server_stores_vectors {
        vectors::index_model(store.conn())?
    } else {
        None
    };
    let centre = vectors::centre(store.conn())?.unwrap_or_default();
    loop {
        check_time()?;
        let since = store_sync::cursor(store.conn(), PULL_CURSOR_KEY)?;
        let page = client.changes(
            &jwt,
            since,
            PULL_PAGE,
            &feed_types,
            index
                .as_ref()
                .map(|m| (m.fingerprint.as_str(), vector_encoding)),
        )?;
        let records: Vec<WireRecord> = page.changes.into_iter().map(|c| c.record).collect();
        let push_cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let (applied, pulled) = store.write(|w| {
            let applied = w.apply_remote(&records, push_cursor)?;
            w.count_foreign(applied.foreign)?;
            let pulled = match &index {
                Some(model) => {
                    vectors_wire::store_pulled(w.tx(), model, &centre, &page.embeddings)?
                }
                None => vectors_wire::Pulled::default(),
            };
            w.set_state(PULL_CURSOR_KEY, &page.next.to_string())?;
            Ok((applied, pulled))
        })?;
        report.vectors_pulled += pulled.stored;
        for reason in pulled.refused {
            report.vectors_refused.push(reason);
        }
        report.pulled += applied.stored;
        report.conflicts += applied.conflicts;
        erased += applied.erased;
        report.refused_pulled.extend(applied.refused);
        progress(Progress::Pulled {
            done: report.pulled,
        });
        if !page.more {
            break;
        }
    }
    if server_stores_knowledge && !knew_types {
        store.write(|w| w.set_state(FEED_TYPES_KEY, &feed_types))?;
    }
    // Records erased elsewhere lose their vectors now, not at the next embedding pass,
    // and their text leaves the file as it does after a local forget.
    crate::store::vectors::drop_removed(store)?;
    if erased > 0 {
        crate::store::retention::scrub_erased(store)?;
    }
    report.duration_ms = started.elapsed().as_millis();
    Ok(report)
}

/// a sync the user asks for has a 2-minute overall timeout.
pub const MANUAL_DEADLINE: Duration = Duration::from_secs(120);

/// A sync the user asked for now (`solaria sync`, `memory_sync`, `POST /api/sync`):
/// marked started first, so that one killed midway reads as interrupted in the
/// status (never as the previous run's success), run within [`MANUAL_DEADLINE`],
/// and its outcome recorded whatever it was. The outer error is the store's (the
/// bookkeeping failed); the inner result is the sync's own.
pub fn run_manual(
    store: &mut Store,
    creds: &Credentials,
    config: &SyncConfig,
    progress: impl FnMut(Progress),
) -> Result<Result<SyncReport, SyncError>, StoreError> {
    store.write(|w| w.mark_sync_started(UnixMillis::now()))?;
    let options = SyncOptions::new("manual", MANUAL_DEADLINE, config);
    let outcome = run(store, creds, &options, progress);
    record_outcome(store, &outcome)?;
    Ok(outcome)
}

/// Records the outcome of a sync attempt for `solaria status`.
pub fn record_outcome(
    store: &mut Store,
    outcome: &Result<SyncReport, SyncError>,
) -> Result<(), StoreError> {
    let now = UnixMillis::now().0.to_string();
    let (status, detail) = match outcome {
        Ok(r) => (
            // Refused records stay pending: a sync that left some behind is not a success.
            if r.rejected.is_empty() {
                SyncStatus::Success
            } else {
                SyncStatus::Partial
            },
            format!("{}, rejected {}", r.counts(), r.rejected.len()),
        ),
        Err(e) => (SyncStatus::Failed, e.to_string()),
    };
    store.write(|w| {
        w.set_state("last_sync_at", &now)?;
        w.set_state("last_sync_status", status.as_str())?;
        w.set_state("last_sync_detail", &detail)?;
        if status == SyncStatus::Success {
            w.set_state("last_success_at", &now)?;
        }
        Ok(())
    })
}

fn is_local_only(r: &WireRecord, local_only: &[String]) -> bool {
    let project = r.project();
    is_local_project(&project.key, &project.name, local_only)
}

fn is_local_project(key: &str, name: &str, local_only: &[String]) -> bool {
    crate::config::is_local_only(local_only, key, name)
}

/// Pushes the outbox's vectors (those made here since the last sync), a batch at a
/// time in `encoding`, each entry taken off once the server has answered for it. A
/// vector the server does not keep is not retried: the record's other machines
/// embed it.
fn push_vectors(
    store: &mut Store,
    client: &Client,
    jwt: &str,
    options: &SyncOptions,
    encoding: VectorEncoding,
    report: &mut SyncReport,
    check_time: &dyn Fn() -> Result<(), SyncError>,
) -> Result<(), SyncError> {
    store.write(|w| vectors_wire::backfill_outbox(w.tx()))?;
    loop {
        check_time()?;
        let entries = vectors_wire::outgoing(store.conn(), VECTOR_BATCH)?;
        if entries.is_empty() {
            return Ok(());
        }
        let embeddings: Vec<WireEmbedding> = entries
            .iter()
            .filter(|e| !is_local_project(&e.project.0, &e.project.1, &options.local_only))
            .filter_map(|e| e.embedding.as_ref())
            // A stored vector that does not read back is not sent at all.
            .filter_map(|e| e.reencoded(encoding).ok())
            .collect();
        if !embeddings.is_empty() {
            let answer = client.push(jwt, &[], &embeddings, options.kind)?;
            report.vectors_pushed += embeddings.len() - answer.embeddings_refused.len();
            report.vectors_refused.extend(
                answer
                    .embeddings_refused
                    .into_iter()
                    .map(|r| format!("vector of {}: {}", r.id, r.reason)),
            );
        }
        store.write(|w| vectors_wire::sent(w.tx(), &entries))?;
    }
}

/// A record as it may leave this machine: every `<private>` span stripped from
/// every user-text field (the one list of them is `WireRecord::map_user_text`).
fn prepare_outgoing(r: &WireRecord) -> WireRecord {
    let mut out = r.clone();
    out.map_user_text(
        &mut |t| strip_private(t).into_owned(),
        &mut strip_private_json,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sync::last_sync;

    fn outcome_read_back(outcome: Result<SyncReport, SyncError>) -> store_sync::LastSync {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("m.db"), "m").expect("opens");
        record_outcome(&mut store, &outcome).expect("recorded");
        last_sync(store.conn()).expect("read")
    }

    #[test]
    fn a_commit_message_leaves_without_its_private_spans() {
        use solaria_shared::knowledge::Commit;
        use solaria_shared::{Knowledge, KnowledgeBody, KnowledgeId, MachineId, Project};
        let k = Knowledge::new(
            KnowledgeId::new(),
            MachineId::new(),
            solaria_shared::Hlc::new(1_700_000_000_000, 0),
            Project {
                key: "github.com/acme/api".into(),
                name: "api".into(),
            },
            None,
            KnowledgeBody::Commit(Commit {
                sha: "0123456789abcdef0123456789abcdef01234567".into(),
                message: "Fix login <private>vault 7731</private>".into(),
                files: vec!["<private>vault 7731</private>.rs".into()],
                ..Commit::default()
            }),
        );
        let sent = prepare_outgoing(&WireRecord::Knowledge(k));
        let json = serde_json::to_string(&sent).expect("serialises");
        assert!(!json.contains("7731"), "{json}");
        assert!(json.contains("Fix login"), "{json}");
    }

    #[test]
    fn a_sync_the_server_refused_records_of_is_partial_never_success() {
        let clean = outcome_read_back(Ok(SyncReport::default()));
        assert_eq!(clean.status, Some(SyncStatus::Success));
        let refused = outcome_read_back(Ok(SyncReport {
            pushed: 3,
            rejected: vec!["0192…: version stamp is ahead".into()],
            ..SyncReport::default()
        }));
        assert_eq!(refused.status, Some(SyncStatus::Partial));
        assert!(
            refused
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("rejected 1")),
            "{refused:?}"
        );
        let failed = outcome_read_back(Err(SyncError::NotLoggedIn));
        assert_eq!(failed.status, Some(SyncStatus::Failed));
    }
}
