//! Forgetting: tombstones for a record, a session or a project, which erase the
//! content here and reach the other machines at the next sync.

use super::OpResult;
use crate::app::App;
use crate::store::retention::{self, Counts, ForgetTarget};

/// Forgets `target`; the counts of what was erased.
pub fn forget(app: &App, target: &ForgetTarget) -> OpResult<Counts> {
    let mut store = app.store()?;
    Ok(retention::forget(&mut store, target)?)
}
