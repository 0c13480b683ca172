//! The operations behind both surfaces of the service: each query is a plain
//! `async fn (storage, caller, params) -> Result<answer, OpError>`. The REST handlers
//! (`api/query.rs`) answer its typed result as JSON; the `/mcp` tools (`api/mcp.rs`)
//! render text from it with the renderer the edge uses (`solaria_shared::render`).
//! Validation, limits and account scoping live here, once.

mod context;
mod knowledge;
mod search;
mod timeline;

pub use context::{ContextParams, context};
pub use knowledge::{
    DecisionsAnswer, DecisionsParams, IterationAnswer, IterationParams, decisions, iteration,
    parse_knowledge_id,
};
pub use search::{SearchParams, search};
pub use timeline::{
    Around, AroundRequest, FoundRecords, RestoreParams, around, records, restore, timeline,
};

use crate::storage::{AccountId, PersonId, Role, StorageError, Viewer};
use solaria_shared::MachineId;

/// A machine allowed to act, its account, and the person it acts for (the API's
/// `Caller` extractor checks it).
#[derive(Debug, Clone, Copy)]
pub struct Caller {
    pub machine: MachineId,
    pub account: AccountId,
    pub person: PersonId,
    pub role: Role,
}

impl Caller {
    /// Whom the caller's reads are made for.
    pub fn viewer(&self) -> Viewer {
        Viewer {
            account: self.account,
            person: self.person,
        }
    }
}

/// Why an operation gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// The parameters cannot be used; the message says how to fix them.
    #[error("{0}")]
    Invalid(String),
    /// Nothing the caller's account holds answers to the name or id.
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// A parameter that is present and not blank.
fn given(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}
