//! Test fixtures shared by the store's unit tests: the session every test record
//! hangs from, so each test writes only the records it is about.

use super::{StoreError, Writer};
use solaria_shared::{Project, RecordMeta, Session, SessionId, UnixMillis};

/// Inserts a Claude Code session of project `p` started at `started_at`, stamped
/// now by `w`; returns it (its `meta` and `project` serve the test's records).
pub(crate) fn session(w: &mut Writer<'_>, started_at: UnixMillis) -> Result<Session, StoreError> {
    let session = Session {
        id: SessionId::new(),
        meta: RecordMeta {
            machine_id: w.machine_id(),
            updated: w.tick(),
            deleted: false,
        },
        project: Project {
            key: "p".into(),
            name: "p".into(),
        },
        agent: "claude-code".into(),
        agent_session_id: "s".into(),
        cwd: "/".into(),
        source: "startup".into(),
        started_at,
        ended_at: None,
    };
    w.insert_session(&session)?;
    Ok(session)
}
