//! What changed in the code each anchored record speaks of (the `staleness` table,
//! migration 0017): written whole for a project each time its git is asked, read by
//! the context, `why` and `solaria review`. Local and derived: never synced.

use super::StoreError;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use solaria_shared::anchors::Staleness;
use solaria_shared::{KnowledgeId, UnixMillis};
use std::collections::BTreeMap;

/// Replaces what is known of `project_key`'s records with `stale` (those with
/// something changed; the others have no row), as seen at `head`.
pub fn replace_project(
    tx: &Transaction<'_>,
    project_key: &str,
    head: &str,
    at: UnixMillis,
    stale: &BTreeMap<KnowledgeId, Staleness>,
) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM staleness WHERE project_key = ?1",
        [project_key],
    )?;
    let mut insert = tx.prepare(
        "INSERT INTO staleness (knowledge_id, project_key, head, checked_at, state)
         SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS
             (SELECT 1 FROM knowledge WHERE id = ?1 AND deleted = 0)",
    )?;
    for (id, s) in stale {
        let Ok(state) = serde_json::to_string(s) else {
            continue;
        };
        insert.execute(params![id.to_string(), project_key, head, at.0, state])?;
    }
    Ok(())
}

/// Forgets what changed in `id`'s code (it was just confirmed where it stands).
pub fn clear(tx: &Transaction<'_>, id: KnowledgeId) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM staleness WHERE knowledge_id = ?1",
        [id.to_string()],
    )?;
    Ok(())
}

fn parse(id: String, state: String) -> Option<(KnowledgeId, Staleness)> {
    // A row this version cannot read is as if never worked out: the next check
    // writes it again.
    Some((id.parse().ok()?, serde_json::from_str(&state).ok()?))
}

/// What changed in the code of `project_key`'s records (every project's when
/// `None`), by record.
pub fn of_projects(
    conn: &Connection,
    project_key: Option<&str>,
) -> Result<BTreeMap<KnowledgeId, Staleness>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT knowledge_id, state FROM staleness WHERE ?1 IS NULL OR project_key = ?1",
    )?;
    read_rows(&mut stmt, project_key)
}

/// The `(knowledge_id, state)` rows `stmt` selects with `param`, by record.
fn read_rows(
    stmt: &mut rusqlite::CachedStatement<'_>,
    param: impl rusqlite::ToSql,
) -> Result<BTreeMap<KnowledgeId, Staleness>, StoreError> {
    let rows = stmt.query_map([param], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let mut out = BTreeMap::new();
    for row in rows {
        let (id, state) = row?;
        out.extend(parse(id, state));
    }
    Ok(out)
}

/// What changed in the code of each of `ids` known to have changed: what a
/// context reads for the records it weighs, never the whole project's table.
pub fn of_records(
    conn: &Connection,
    ids: impl Iterator<Item = KnowledgeId>,
) -> Result<BTreeMap<KnowledgeId, Staleness>, StoreError> {
    let ids: Vec<String> = ids.map(|id| id.to_string()).collect();
    let json = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
    let mut stmt = conn.prepare_cached(
        "SELECT knowledge_id, state FROM staleness
         WHERE knowledge_id IN (SELECT value FROM json_each(?1))",
    )?;
    read_rows(&mut stmt, json)
}

/// What changed in `id`'s code, if anything is known to have.
pub fn of_record(conn: &Connection, id: KnowledgeId) -> Result<Option<Staleness>, StoreError> {
    let row: Option<(String, String)> = conn
        .query_row(
            "SELECT knowledge_id, state FROM staleness WHERE knowledge_id = ?1",
            [id.to_string()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    Ok(row.and_then(|(id, state)| parse(id, state)).map(|(_, s)| s))
}

/// The directories this machine's sessions ran in, one per project and directory,
/// most recently started first, at most `limit`.
pub fn session_dirs(
    conn: &Connection,
    machine: solaria_shared::MachineId,
    limit: usize,
) -> Result<Vec<(solaria_shared::Project, String)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT project_key, max(project_name), cwd FROM sessions
         WHERE machine_id = ?1 AND deleted = 0 AND cwd <> ''
         GROUP BY project_key, cwd ORDER BY max(started_at) DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![machine.to_string(), limit as i64], |r| {
        Ok((
            solaria_shared::Project {
                key: r.get(0)?,
                name: r.get(1)?,
            },
            r.get(2)?,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// What a project's decisions, memories and commits are at: their number and
/// newest version. A check is due again when it moves (or `HEAD` does).
pub fn knowledge_stamp(conn: &Connection, project_key: &str) -> Result<(i64, i64), StoreError> {
    Ok(conn.query_row(
        "SELECT count(*), coalesce(max(updated), 0) FROM knowledge
         WHERE project_key = ?1 AND kind IN ('decision', 'memory', 'commit')",
        [project_key],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}
