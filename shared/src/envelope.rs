//! What every record carries, whatever its kind: the sync envelope ([`RecordMeta`],
//! with the one rule of which version replaces another) and the project it belongs
//! to. Observations, sessions and summaries (`record`) and knowledge (`knowledge`)
//! stand on it.

use crate::hlc::Hlc;
use crate::ids::MachineId;
use serde::{Deserialize, Serialize};

/// The sync envelope: who wrote the current version, when (HLC), and whether it is
/// a tombstone. Identical for every record kind, present and future.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordMeta {
    /// The machine that wrote this version.
    pub machine_id: MachineId,
    /// When this version was written, on the hybrid logical clock.
    pub updated: Hlc,
    /// A tombstone: the record was deleted and its content erased.
    pub deleted: bool,
}

impl RecordMeta {
    /// Whether a version with this envelope replaces the stored version `current`,
    /// the one rule of every store (the edge's, central's in SQL too):
    ///
    /// - **erasure is final**: no live version replaces a tombstone, and a tombstone
    ///   replaces any live version, whatever the stamps (a machine that had not seen
    ///   the erasure must not bring the content back, nor win with a later edit);
    /// - otherwise (two live versions, or two tombstones) **last write wins**: the
    ///   later `(updated, machine_id)` ([`crate::hlc::wins_over`]).
    pub fn replaces(&self, current: &RecordMeta) -> bool {
        match (self.deleted, current.deleted) {
            (false, true) => false,
            (true, false) => true,
            // Two live versions, or two tombstones (all erase the same content):
            // every node converges on the same one.
            _ => crate::hlc::wins_over(
                self.updated,
                self.machine_id,
                current.updated,
                current.machine_id,
            ),
        }
    }
}

/// A project: a stable key (the normalised git remote, else the directory path)
/// and a human name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Project {
    pub key: String,
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erasure_is_final_and_otherwise_the_later_write_wins() {
        let (a, b) = (MachineId::new(), MachineId::new());
        let meta = |ms, machine, deleted| RecordMeta {
            machine_id: machine,
            updated: Hlc::new(ms, 0),
            deleted,
        };
        assert!(meta(2, a, false).replaces(&meta(1, b, false)));
        assert!(!meta(1, a, false).replaces(&meta(2, b, false)));
        // A tombstone wins even when older; nothing replaces one.
        assert!(meta(1, a, true).replaces(&meta(9, b, false)));
        assert!(!meta(9, a, false).replaces(&meta(1, b, true)));
        // Between tombstones the later wins, so every node converges.
        assert!(meta(9, a, true).replaces(&meta(1, b, true)));
        assert!(!meta(1, a, true).replaces(&meta(9, b, true)));
    }
}
