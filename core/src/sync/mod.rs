//! Sync with the central service, in the steps the sync guide names: the
//! account's word (the server's clock, its search, shared projects, machine
//! names), then **push** (`push.rs`: this machine's changes since the last
//! acknowledged push, in batches of at most 1000, then its vectors), then **pull**
//! (`pull.rs`: the change feed from the stored cursor, applied with
//! last-write-wins), then what was erased elsewhere scrubbed here.
//!
//! What keeps it honest: a cursor advances only in the transaction that commits the
//! data it covers (the pull cursor with the pulled records; the push cursor once the
//! server has answered for the batch), so an interrupted sync — network drop,
//! kill -9, server restart — resumes where it stopped, and a re-sent batch is
//! harmless (the server applies versions idempotently). Private spans are stripped
//! from everything pushed; local-only projects are never pushed.

pub mod client;
pub mod credentials;
mod pull;
mod push;

use crate::config::SyncConfig;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::sync::{self as store_sync, PUSH_CURSOR_KEY, SyncStatus};
use client::{Client, ClientError};
use credentials::Credentials;
use serde::Serialize;
use solaria_shared::embedding::{EMBEDDINGS_CAPABILITY, EMBEDDINGS_I8_CAPABILITY, VectorEncoding};
use solaria_shared::wire::{KNOWLEDGE_TYPE, TEAM_OBSERVATIONS};
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
    let server = Server::granted(creds, options, started)?;
    let mut report = SyncReport::default();
    take_the_accounts_word(store, &server, &mut report)?;
    let all_pushed = push::records(store, &server, &mut report, &mut progress)?;
    push::vectors(store, &server, all_pushed, &mut report)?;
    let erased = pull::changes(store, &server, &mut report, &mut progress)?;
    // Records erased elsewhere lose their vectors now, not at the next embedding pass,
    // and their text leaves the file as it does after a local forget.
    crate::store::vectors::drop_removed(store)?;
    if erased > 0 {
        crate::store::retention::scrub_erased(store)?;
    }
    report.duration_ms = started.elapsed().as_millis();
    Ok(report)
}

/// The central service of one run, once it granted a token: what it stores, and
/// the run's options and deadline.
struct Server<'a> {
    client: Client,
    jwt: String,
    /// The vector models it keeps (`None`: an older server that does not say).
    vector_models: Option<Vec<String>>,
    options: &'a SyncOptions,
    started: Instant,
    /// It stores knowledge records (a server of the first release does not).
    stores_knowledge: bool,
    /// It keeps the vectors machines make.
    stores_vectors: bool,
    /// How vectors travel both ways: int8 when the server takes it, a quarter of
    /// the bytes, no measurable loss in retrieval (docs/BENCHMARKS.md).
    vector_encoding: VectorEncoding,
}

impl<'a> Server<'a> {
    fn granted(
        creds: &Credentials,
        options: &'a SyncOptions,
        started: Instant,
    ) -> Result<Server<'a>, SyncError> {
        let client = Client::new(&creds.server, creds.ca_cert.as_deref())?;
        let grant = client.grant(creds)?;
        let offers = |t: &str| grant.types.iter().any(|offered| offered == t);
        let vector_encoding = if offers(EMBEDDINGS_I8_CAPABILITY) {
            VectorEncoding::I8
        } else {
            VectorEncoding::F32
        };
        Ok(Server {
            jwt: grant.token,
            vector_models: grant.vector_models,
            stores_knowledge: offers(KNOWLEDGE_TYPE),
            stores_vectors: offers(EMBEDDINGS_CAPABILITY),
            vector_encoding,
            client,
            options,
            started,
        })
    }

    /// An error once the run's deadline has passed: what was done is kept.
    fn check_time(&self) -> Result<(), SyncError> {
        if self.started.elapsed() > self.options.deadline {
            Err(SyncError::Timeout(self.options.deadline))
        } else {
            Ok(())
        }
    }
}

/// What the server says of itself and the account before records move: its clock
/// (stamps follow it from now on, and changes stamped ahead of the correction get
/// new stamps the server accepts), how it searches, which projects the account
/// shares and its machines' names. A server without an endpoint says nothing, and
/// what was known stays.
fn take_the_accounts_word(
    store: &mut Store,
    server: &Server<'_>,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    let (client, jwt) = (&server.client, server.jwt.as_str());
    if let Some((server_ms, real_ms)) = client.server_time() {
        let offset = hlc::clock_offset(server_ms, store.wall().reading_at(real_ms));
        let cursor = store_sync::cursor(store.conn(), PUSH_CURSOR_KEY)?;
        let corrected = store.write(|w| w.correct_clock(offset, cursor))?;
        report.clock_offset_ms = corrected.offset_ms;
        report.restamped = corrected.restamped;
    }
    if let Some(line) = client.search_capability() {
        store.write(|w| w.set_state(store_sync::CENTRAL_SEARCH_KEY, &line))?;
    }
    if let Ok(shared) = client.shared_projects(jwt) {
        let patterns = serde_json::to_string(&shared.patterns).unwrap_or_default();
        store.write(|w| w.set_state(store_sync::SHARED_PROJECTS_KEY, &patterns))?;
    }
    if let Ok(names) = client.machines(jwt) {
        store.write(|w| names.iter().try_for_each(|m| w.set_machine_name(m)))?;
    }
    Ok(())
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
