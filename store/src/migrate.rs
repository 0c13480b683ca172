//! Versioned migrations from `store/migrations/`, applied at open under the write
//! lock so that many processes opening a fresh store at once migrate it once.

use super::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use solaria_shared::MachineId;
use std::path::Path;

/// The migrations, in order. Never edit a released one: append a new file.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_init.sql"),
    include_str!("../migrations/0002_vectors.sql"),
    include_str!("../migrations/0003_erasure_final.sql"),
    include_str!("../migrations/0004_knowledge.sql"),
    include_str!("../migrations/0005_recall.sql"),
    include_str!("../migrations/0006_knowledge_vectors.sql"),
    include_str!("../migrations/0007_distill.sql"),
    include_str!("../migrations/0008_vector_outbox.sql"),
    include_str!("../migrations/0009_vector_backfill.sql"),
    include_str!("../migrations/0010_identifier_pairs.sql"),
    include_str!("../migrations/0011_json_line_breaks.sql"),
    include_str!("../migrations/0012_json_strings_only.sql"),
    include_str!("../migrations/0013_written_by.sql"),
    include_str!("../migrations/0014_machine_person.sql"),
    include_str!("../migrations/0015_injections.sql"),
    include_str!("../migrations/0016_summaries_by_id.sql"),
    include_str!("../migrations/0017_staleness.sql"),
    include_str!("../migrations/0018_close_pairs.sql"),
    include_str!("../migrations/0019_knowledge_supersedes.sql"),
];

/// Brings the store up to date and, on a fresh store, records the machine id.
pub(super) fn run(
    conn: &mut Connection,
    path: &Path,
    machine_name: &str,
) -> Result<(), StoreError> {
    let known = MIGRATIONS.len() as i64;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == known {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Re-read under the lock: another process may have migrated meanwhile.
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > known {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            known,
        });
    }
    for sql in &MIGRATIONS[version as usize..] {
        tx.execute_batch(sql)?;
    }
    if version == 0 {
        let machine = MachineId::new().to_string();
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('machine_id', ?1)",
            [&machine],
        )?;
        tx.execute(
            "INSERT INTO machines (id, name) VALUES (?1, ?2)",
            [&machine, machine_name],
        )?;
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.commit()?;
    Ok(())
}
