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
    include_str!("../migrations/0020_stemmed_words.sql"),
    include_str!("../migrations/0021_machines_told_by.sql"),
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

#[cfg(test)]
mod tests {
    use crate::Store;
    use solaria_shared::knowledge::Decision;
    use solaria_shared::{KnowledgeBody, KnowledgeId, Project};

    fn matches(store: &Store, query: &str) -> i64 {
        store
            .conn()
            .query_row(
                "SELECT count(*) FROM knowledge_fts WHERE knowledge_fts MATCH ?1",
                [query],
                |r| r.get(0),
            )
            .expect("match")
    }

    /// A store last opened by a release whose index knew English stems only
    /// (version 19) is indexed again when this one opens it: a Spanish word is then
    /// found in another form, and what was found before still is.
    #[test]
    fn version_20_indexes_what_is_held_by_spanish_stems_too() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("memory.db");
        let store = Store::open(&path, "laptop").expect("opens");
        let project = Project {
            key: "github.com/alice/pagos".into(),
            name: "pagos".into(),
        };
        let body = KnowledgeBody::Decision(Decision {
            title: "Los tokens de refresco caducan a los siete días".into(),
            chosen: "rotating refresh tokens".into(),
            ..Decision::default()
        });
        let mut store = store;
        store
            .write(|w| w.record_knowledge(KnowledgeId::new(), &project, None, body))
            .expect("a decision");
        // Back to version 19's index (and machines table), as that release left it.
        store
            .conn()
            .execute_batch(
                "DROP TABLE knowledge_fts;
                 CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
                     title, text, scope, content = '', contentless_delete = 1,
                     tokenize = 'porter unicode61 remove_diacritics 2');
                 INSERT INTO knowledge_fts (rowid, title, text, scope)
                 SELECT rowid, title, text, scope FROM knowledge WHERE deleted = 0;
                 ALTER TABLE machines DROP COLUMN told_by;
                 PRAGMA user_version = 19;",
            )
            .expect("the old index");
        assert_eq!(matches(&store, "caducidad"), 0, "porter knows no Spanish");
        assert_eq!(matches(&store, "rotate"), 1);
        drop(store);

        let store = Store::open(&path, "laptop").expect("upgrades");
        assert_eq!(matches(&store, "caducidad"), 1);
        assert_eq!(matches(&store, "rotate"), 1);
        assert_eq!(matches(&store, "\"refrescos caducaron\""), 1);
    }
}
