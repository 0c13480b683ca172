//! Forgetting: tombstones for a record, a session or a project, which erase the
//! content here and reach the other machines at the next sync.

use super::OpResult;
use super::knowledge::own_record;
use crate::app::App;
use crate::store::retention::{self, ForgetTarget};
use crate::store::views;
use solaria_shared::Session;

pub use crate::present::maintenance::Forgotten;

/// Forgets `target`. When it is a whole session, `spooled` first removes that
/// session's events still waiting in the hooks' spool (payloads not yet redacted;
/// the edge's `capture::forget_spooled` knows how a payload names its session, which
/// this layer cannot ask) and says how many: before the tombstones, so that an
/// event captured meanwhile is in the store when they are written.
pub fn forget(
    app: &App,
    target: &ForgetTarget,
    spooled: impl FnOnce(&Session) -> usize,
) -> OpResult<Forgotten> {
    let mut store = app.store()?;
    // A teammate's record is theirs to erase; forgetting a project erases only
    // this person's records of it (`store::records::OWN_ROW`).
    let named = match target {
        ForgetTarget::Record(id) | ForgetTarget::Session(id) => Some(id),
        ForgetTarget::Project(_) => None,
    };
    if let Some(id) = named {
        let record = views::resolve(store.conn(), id)?;
        own_record(
            &store,
            record.machine_id(),
            &record.citation().to_string(),
            "forgotten",
        )?;
    }
    let spooled = retention::whole_session(store.conn(), target)?.map_or(0, |s| spooled(&s));
    Ok(Forgotten {
        records: retention::forget(&mut store, target)?,
        spooled,
    })
}
