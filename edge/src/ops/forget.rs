//! Forgetting: tombstones for a record, a session or a project, which erase the
//! content here and reach the other machines at the next sync.

use super::OpResult;
use crate::app::App;
use crate::store::retention::{self, Counts, ForgetTarget};
use serde::Serialize;
use solaria_shared::Session;

/// What a forget erased.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Forgotten {
    /// The records tombstoned.
    pub records: Counts,
    /// The session's events removed from the hooks' spool, never captured.
    pub spooled: usize,
}

/// Forgets `target`. When it is a whole session, `spooled` first removes that
/// session's events still waiting in the hooks' spool (payloads not yet redacted;
/// `crate::capture::forget_spooled` knows how a payload names its session, which
/// this layer cannot ask) and says how many: before the tombstones, so that an
/// event captured meanwhile is in the store when they are written.
pub fn forget(
    app: &App,
    target: &ForgetTarget,
    spooled: impl FnOnce(&Session) -> usize,
) -> OpResult<Forgotten> {
    let mut store = app.store()?;
    let spooled = retention::whole_session(store.conn(), target)?.map_or(0, |s| spooled(&s));
    Ok(Forgotten {
        records: retention::forget(&mut store, target)?,
        spooled,
    })
}
