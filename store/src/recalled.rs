//! What was recalled into each agent session's prompts (the `recalled` table,
//! migration 0005), so that a record is not recalled twice into one session.

use super::{StoreError, Writer};
use rusqlite::{Connection, params};
use solaria_shared::{Citation, UnixMillis};

/// Recalled items are remembered this long per session.
const REMEMBERED_MS: i64 = 7 * 86_400_000;

/// The citations already recalled into the agent session `agent_session`.
pub fn already(conn: &Connection, agent_session: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT cite FROM recalled WHERE agent_session_id = ?1")?;
    let rows = stmt.query_map([agent_session], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Remembers, in `w`'s transaction, that `cites` were recalled into
/// `agent_session` at `now`, and forgets what was recalled longer ago than a
/// session is remembered.
pub fn remember(
    w: &mut Writer<'_>,
    agent_session: &str,
    cites: &[Citation],
    now: UnixMillis,
) -> Result<(), StoreError> {
    for cite in cites {
        w.tx().execute(
            "INSERT OR IGNORE INTO recalled (agent_session_id, cite, recalled_at) VALUES (?1, ?2, ?3)",
            params![agent_session, cite.to_string(), now.0],
        )?;
    }
    w.tx().execute(
        "DELETE FROM recalled WHERE recalled_at < ?1",
        [now.0 - REMEMBERED_MS],
    )?;
    Ok(())
}
