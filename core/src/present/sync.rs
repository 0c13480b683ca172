//! What a sync or a restore did, as `solaria sync`, `/memory sync`, the MCP
//! `memory_sync_remote` / `memory_restore` tools and `POST /api/sync` report it.

use crate::sync::SyncReport;
use serde::Serialize;

/// A finished sync with the server it ran against.
#[derive(Debug, Clone, Serialize)]
pub struct SyncOutcome {
    pub server: String,
    #[serde(flatten)]
    pub report: SyncReport,
}

impl SyncOutcome {
    /// What moved, the conflicts to look at, and every record the server refused.
    pub fn text(&self) -> String {
        let r = &self.report;
        let mut out = format!(
            "Synced with {}: pushed {}, pulled {}, conflicts {}, in {:.1} s.",
            self.server,
            r.pushed,
            r.pulled,
            r.conflicts,
            r.duration_ms as f64 / 1000.0
        );
        if r.conflicts > 0 {
            out.push_str(
                "\nSome local changes lost to newer versions from other machines: see `solaria conflicts`.",
            );
        }
        if let Some(note) = super::clock_note(r.clock_offset_ms) {
            out.push_str(&format!("\nClock: {note}."));
            if r.restamped > 0 {
                out.push_str(&format!(
                    " {} change(s) stamped ahead before were stamped again.",
                    r.restamped
                ));
            }
        }
        for refused in &r.rejected {
            out.push_str(&format!("\nrefused by the server: {refused}"));
        }
        for refused in &r.refused_pulled {
            out.push_str(&format!("\npulled but not applied: {refused}"));
        }
        if r.vectors_pushed + r.vectors_pulled > 0 {
            out.push_str(&format!(
                "\nVectors: pushed {}, pulled {} (records searchable by meaning without embedding them here).",
                r.vectors_pushed, r.vectors_pulled
            ));
        }
        if let Some(model) = &r.vectors_not_taken {
            out.push_str(&format!(
                "\nVectors of this machine's model ({model}) stay here: the central service keeps those of the models its operator lists (`vector_models`); the records are synced and found there by words."
            ));
        }
        for refused in &r.vectors_refused {
            out.push_str(&format!(
                "\nvector not kept (its record is synced; it will be embedded again): {refused}"
            ));
        }
        out
    }
}
