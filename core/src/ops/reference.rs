//! A record as a person or an agent names it (`[D#id]`, `D#id`, a bare or short
//! id) resolved to the one live record it means, or a clear error: none, or which
//! several a short id names.

use super::input::clip;
use super::{OpError, OpResult};
use crate::store::Store;
use crate::store::knowledge as kstore;
use solaria_shared::{Knowledge, KnowledgeKind};

/// One reference resolved to one live record (of `kind`, when given). An
/// ambiguous short id is an error that lists the candidates.
pub fn find_one(
    store: &Store,
    reference: &str,
    kind: Option<KnowledgeKind>,
) -> OpResult<Knowledge> {
    let bare = strip_citation(reference);
    let mut found = kstore::find_knowledge(store.conn(), &bare, kind)?;
    match found.len() {
        0 => Err(OpError::NotFound(vec![clip(reference)])),
        1 => Ok(found.remove(0)),
        _ => Err(OpError::BadInput(format!(
            "{:?} names {} records ({}); give more of the id",
            clip(reference),
            found.len(),
            found
                .iter()
                .map(|k| k.citation().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// `[D#id]`, `D#id` or a bare id → the id text.
fn strip_citation(reference: &str) -> String {
    match solaria_shared::Citation::parse_lenient(reference) {
        Ok(Some(c)) => c.id,
        _ => reference.trim().to_string(),
    }
}
