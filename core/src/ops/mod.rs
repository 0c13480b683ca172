//! The operations layer: every request a person or an agent can make of the memory,
//! as a typed request and a typed result, shared by the three surfaces (the CLI,
//! the MCP server and the local HTTP API). A surface parses its input into a
//! request (with [`input`], so a bad field reads the same everywhere), calls the
//! operation, and renders the result with `crate::present` (text) or as JSON.
//! Nothing here prints, and nothing here knows which surface called.

pub mod anchors;
pub mod browse;
pub mod close_pairs;
pub mod commits;
pub mod context;
mod daemon_client;
pub mod distill;
pub mod doctor;
pub mod export;
pub mod forget;
mod gitlog;
pub mod import;
pub mod input;
pub mod knowledge;
pub mod maintenance;
pub mod passages;
pub mod project;
pub mod recall;
pub mod records;
pub mod reference;
pub mod remote;
pub mod repository;
pub mod review;
pub mod search;
pub mod staleness;
pub mod status;
pub mod sync;

use crate::app::AppError;
use crate::present::MachineLabels;
use crate::semantic::{SearchError, SemanticError};
use crate::store::{Store, StoreError};
use crate::sync::SyncError;
use solaria_shared::MachineId;

/// Why an operation did not answer. Each surface maps the variants to its own
/// form (an exit code and message, a tool error, an HTTP status).
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// The request itself is wrong; the message names the field and what it takes.
    #[error("{0}")]
    BadInput(String),
    /// No record has this id (ids as the caller gave them).
    #[error("no record with id {}", quoted(.0))]
    NotFound(Vec<String>),
    /// No project of the memory has this name, key, slug or path; the closest
    /// known ones (`name (key)`, at most three) are suggested.
    #[error("no project named {name:?} in the memory{}", did_you_mean(.suggestions))]
    UnknownProject {
        name: String,
        suggestions: Vec<String>,
    },
    /// The operation needs a central service and this machine has none.
    #[error(transparent)]
    NotLoggedIn(SyncError),
    /// The central service failed to answer (unreachable, refused, broken).
    #[error("{what} with {server} failed: {source}")]
    Remote {
        what: &'static str,
        server: String,
        source: SyncError,
    },
    /// A search that needs the embedding model cannot run (the model must change,
    /// not the request).
    #[error(transparent)]
    Model(SearchError),
    /// `solaria embed` was asked for and no embedding model is installed there.
    #[error("no embedding model in {}: run `solaria model install` first", .0.display())]
    NoModel(std::path::PathBuf),
    /// No daemon of this version serves this data dir (the viewer is one of its
    /// pages).
    #[error(
        "no `solaria serve` of this version answers for {}: start it (`solaria serve`, or \
         `solaria install` runs it as a user service) and try again",
        .0.display()
    )]
    NoDaemon(std::path::PathBuf),
    /// The embedding pass failed (the model, or the store under it).
    #[error(transparent)]
    Embedding(#[from] SemanticError),
    #[error(transparent)]
    App(#[from] AppError),
    #[error(transparent)]
    Store(StoreError),
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    format!("; closest: {}", suggestions.join(", "))
}

fn quoted(ids: &[String]) -> String {
    ids.iter()
        .map(|id| format!("{id:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl From<StoreError> for OpError {
    fn from(e: StoreError) -> OpError {
        match e {
            StoreError::NotFound(id) => OpError::NotFound(vec![id]),
            other => OpError::Store(other),
        }
    }
}

impl From<SearchError> for OpError {
    fn from(e: SearchError) -> OpError {
        match e {
            SearchError::Store(s) => OpError::from(s),
            model => OpError::Model(model),
        }
    }
}

impl OpError {
    /// A failure of `what` (a sync, a search) against the central service `server`.
    pub fn remote(what: &'static str, server: &str, e: SyncError) -> OpError {
        match e {
            SyncError::NotLoggedIn => OpError::NotLoggedIn(e),
            SyncError::Store(s) => OpError::from(s),
            source => OpError::Remote {
                what,
                server: server.to_string(),
                source,
            },
        }
    }
}

/// Refuses what only a person may do (`solaria confirm`, opening the viewer) when
/// an agent asks: through MCP, or from its shell (`crate::config::Env::agent_shell`).
pub(crate) fn person_only(app: &crate::app::App, what: &str, command: &str) -> OpResult<()> {
    match &app.writer {
        solaria_shared::knowledge::WrittenBy::Agent(agent) => Err(OpError::BadInput(format!(
            "{what} is a person's word: run `{command}` in your own terminal, not through {} \
             (its shell says so)",
            if agent.is_empty() { "an agent" } else { agent }
        ))),
        _ => Ok(()),
    }
}

/// Machine names looked up once each, for the results that name machines.
pub(crate) struct MachineNames<'a> {
    store: &'a Store,
    labels: MachineLabels,
}

impl<'a> MachineNames<'a> {
    pub(crate) fn new(store: &'a Store) -> MachineNames<'a> {
        MachineNames {
            store,
            labels: MachineLabels {
                this_machine: Some(store.machine_id()),
                ..MachineLabels::default()
            },
        }
    }

    /// The name of machine `m` (its id when it has none).
    pub(crate) fn name(&mut self, m: MachineId) -> String {
        if let Some(label) = self.labels.names.get(&m) {
            return label.clone();
        }
        let writer = crate::store::records::machine_writer(self.store.conn(), m);
        let label = writer.label();
        self.labels.authors.insert(m, writer.author());
        self.labels.names.insert(m, label.clone());
        label
    }

    /// Who wrote on machine `m`.
    pub(crate) fn author(&mut self, m: MachineId) -> solaria_shared::wire::Author {
        self.name(m);
        self.labels.author(m)
    }

    /// The labels of every machine named so far.
    pub(crate) fn labels(self) -> MachineLabels {
        self.labels
    }

    /// The labels of every machine named so far, this reader kept for more.
    pub(crate) fn labels_so_far(&self) -> MachineLabels {
        self.labels.clone()
    }
}

/// The answer of every operation.
pub type OpResult<T> = Result<T, OpError>;
