//! Pairs of a decision or memory written here and a standing one of its project
//! close to it in subject (the `close_pairs` table, migration 0018), waiting for a
//! person to supersede the old one, keep both, or link them. Local: proposed by
//! the machine the new record was written on, never synced.

use super::StoreError;
use rusqlite::{Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use solaria_shared::{Knowledge, KnowledgeId, UnixMillis};

/// How a new record came close to a standing one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Closeness {
    /// The share of the new record's weighed words the standing one holds, 0..=1.
    pub words: f64,
    /// Their similarity in meaning (from the model's centre), when both were
    /// weighed by meaning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<f64>,
    /// For two decisions: an option the standing one set aside that the new one
    /// names — the surest sign that one turns the other around.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names_option: Option<String>,
}

/// A standing record close to a new one, and how.
#[derive(Debug, Clone, Serialize)]
pub struct Close {
    pub standing: Knowledge,
    pub closeness: Closeness,
}

/// A pair waiting for a person, both ends standing.
#[derive(Debug, Clone, Serialize)]
pub struct PendingPair {
    /// The record written later.
    pub record: Knowledge,
    pub standing: Knowledge,
    pub closeness: Closeness,
}

/// One pair's row: `record` was written after `standing`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub record: KnowledgeId,
    pub standing: KnowledgeId,
    pub proposed_at: UnixMillis,
    pub closeness: Closeness,
}

/// Keeps the pairs proposed for `record` (a pair proposed before is left as it was).
pub fn propose(
    tx: &Transaction<'_>,
    record: KnowledgeId,
    project_key: &str,
    at: UnixMillis,
    pairs: &[(KnowledgeId, Closeness)],
) -> Result<(), StoreError> {
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO close_pairs
             (record_id, standing_id, project_key, proposed_at, closeness)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (standing, closeness) in pairs {
        let Ok(json) = serde_json::to_string(closeness) else {
            continue;
        };
        insert.execute(params![
            record.to_string(),
            standing.to_string(),
            project_key,
            at.0,
            json
        ])?;
    }
    Ok(())
}

/// Settles the pair of `a` and `b`, whichever was the new one: a person chose.
/// `true` when there was such a pair.
pub fn settle(tx: &Transaction<'_>, a: KnowledgeId, b: KnowledgeId) -> Result<bool, StoreError> {
    let n = tx.execute(
        "DELETE FROM close_pairs WHERE (record_id = ?1 AND standing_id = ?2)
                                    OR (record_id = ?2 AND standing_id = ?1)",
        params![a.to_string(), b.to_string()],
    )?;
    Ok(n > 0)
}

/// The pairs waiting in `project_key` (every project's when `None`), newest first.
/// Whether both records still stand is for the caller to judge.
pub fn pending(conn: &Connection, project_key: Option<&str>) -> Result<Vec<Pending>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT record_id, standing_id, proposed_at, closeness FROM close_pairs
         WHERE ?1 IS NULL OR project_key = ?1
         ORDER BY proposed_at DESC, record_id, standing_id",
    )?;
    let rows = stmt.query_map([project_key], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (record, standing, at, closeness) = row?;
        // A row this version cannot read is left out, never an error.
        if let (Ok(record), Ok(standing), Ok(closeness)) = (
            record.parse(),
            standing.parse(),
            serde_json::from_str(&closeness),
        ) {
            out.push(Pending {
                record,
                standing,
                proposed_at: UnixMillis(at),
                closeness,
            });
        }
    }
    Ok(out)
}
