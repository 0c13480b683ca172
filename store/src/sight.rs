//! What a record's writer may see here: the visibility rule
//! (`solaria_shared::sharing::sees`) applied to the references a record makes —
//! the record it supersedes, the ends of a link, the decisions a commit
//! implements, the iteration it belongs to. A reference takes effect only on a
//! record its writer may see: a teammate supersedes or links a decision of a
//! shared project, never one of your personal projects, even when they learnt its
//! id. People are told apart by `machines.person` (`records::teammate`): a machine
//! of this machine's person names none.

use super::StoreError;
use super::records::teammate;
use rusqlite::{Connection, OptionalExtension};
use solaria_shared::sharing::sees;
use solaria_shared::{Knowledge, MachineId};

/// The sync-state key holding the account's shared project patterns as JSON,
/// learned at each sync.
pub const SHARED_PROJECTS_KEY: &str = "shared_projects";

/// The account's shared project patterns as the last sync learned them; `None`
/// before any sync with a server that says.
pub fn shared_projects(conn: &Connection) -> Result<Option<Vec<String>>, StoreError> {
    let text: Option<String> = conn
        .prepare_cached("SELECT value FROM sync_state WHERE key = ?1")?
        .query_row([SHARED_PROJECTS_KEY], |r| r.get(0))
        .optional()?;
    Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
}

/// The account's shared project patterns as this machine last learnt them.
#[derive(Debug, Clone, Default)]
pub struct Sight {
    patterns: Vec<String>,
}

impl Sight {
    /// The patterns the last sync learnt (none before any sync: every project is
    /// then this person's own).
    pub fn of(conn: &Connection) -> Result<Sight, StoreError> {
        Ok(Sight {
            patterns: shared_projects(conn)?.unwrap_or_default(),
        })
    }

    /// Whether the person whose machine `writer` is may see `target`.
    pub fn writer_sees(
        &self,
        conn: &Connection,
        writer: MachineId,
        target: &Knowledge,
    ) -> Result<bool, StoreError> {
        let reader = teammate(conn, writer)?;
        let author = teammate(conn, target.meta.machine_id)?;
        Ok(sees(&reader, &author, &target.project.key, &self.patterns))
    }

    /// `referrers` less those whose writer may not see `target`.
    pub fn referring_to(
        &self,
        conn: &Connection,
        target: &Knowledge,
        referrers: Vec<Knowledge>,
    ) -> Result<Vec<Knowledge>, StoreError> {
        let mut kept = Vec::with_capacity(referrers.len());
        for r in referrers {
            if self.writer_sees(conn, r.meta.machine_id, target)? {
                kept.push(r);
            }
        }
        Ok(kept)
    }
}
