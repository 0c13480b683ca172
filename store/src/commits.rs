//! The commit records that still wait for their author and file statistics:
//! what the daemon's completion pass reads (`ops::commits::complete_pending`).

use super::StoreError;
use super::knowledge::{KNOWLEDGE_COLUMNS, knowledge_from_row};
use rusqlite::Connection;
use solaria_shared::Knowledge;

/// Up to `limit` live commits of this store with `complete = false`, oldest
/// first. Reads only commit rows (the `knowledge_kind` index), so it costs
/// next to nothing when none waits.
pub fn pending_commits(conn: &Connection, limit: usize) -> Result<Vec<Knowledge>, StoreError> {
    let sql = format!(
        "SELECT {KNOWLEDGE_COLUMNS} FROM knowledge
         WHERE kind = 'commit' AND deleted = 0
           AND coalesce(json_extract(body, '$.complete'), 0) = 0
         ORDER BY created_at, rowid LIMIT ?1"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([limit as i64], knowledge_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
