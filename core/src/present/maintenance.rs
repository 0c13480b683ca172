//! The wording of upkeep asked for by hand: the conflicts to review, what a forget
//! erased, what a prune removed (or would), and what an embedding pass made.

use crate::semantic::PassReport;
use crate::store::retention::{Counts, Pruned, Retention, RetentionMode};
use crate::store::sync::Conflict;
use crate::timefmt;
use solaria_shared::UnixMillis;
use std::time::Duration;

/// What a forget erased.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Forgotten {
    /// The records tombstoned.
    pub records: Counts,
    /// The session's events removed from the hooks' spool, never captured.
    pub spooled: usize,
}

impl Forgotten {
    /// How many records of each kind were erased, and where the erasure goes next.
    pub fn text(&self) -> String {
        let counts = self.records;
        let mut out = format!(
            "Forgot {} record(s): {} observation(s), {} summar(y/ies), {} session(s), {} \
             decision(s)/memor(y/ies)/other knowledge. Their content is erased here; the \
             deletion reaches other machines at the next sync.\n",
            counts.total(),
            counts.observations,
            counts.summaries,
            counts.sessions,
            counts.knowledge
        );
        if self.spooled > 0 {
            out.push_str(&format!(
                "Removed {} event(s) of the session that were waiting to be captured (the \
                 hooks' spool).\n",
                self.spooled
            ));
        }
        out
    }
}

/// What marking conflicts seen did.
pub fn acknowledged(n: usize) -> String {
    format!("Acknowledged {n} conflict(s).")
}

/// The conflicts recorded on this machine, with the name of each one's winner.
#[derive(Debug)]
pub struct ConflictsPage {
    pub conflicts: Vec<Conflict>,
    /// Who wrote each winner: its machine, with the person for a teammate's
    /// (`ana on ana-laptop`), one per conflict.
    pub winners: Vec<String>,
    pub now: UnixMillis,
}

impl ConflictsPage {
    pub fn text(&self) -> String {
        if self.conflicts.is_empty() {
            return "No conflicts.\n".to_string();
        }
        let mut out = String::new();
        for (c, winner) in self.conflicts.iter().zip(&self.winners) {
            out.push_str(&format!(
                "#{} {} {} — your change of {} lost to the version of {} by @{winner} (detected {}){}\n",
                c.id,
                c.kind,
                c.record_id,
                c.local_updated,
                c.winner_updated,
                timefmt::short(c.detected_at, self.now),
                if c.acknowledged { " [seen]" } else { "" }
            ));
        }
        out.push_str(
            "`solaria show ID` shows the version kept; `solaria conflicts --ack` marks these seen.\n",
        );
        out
    }
}

/// What `solaria prune` did under the retention in force (`pruned` is `None` when
/// retention is off and nothing was looked at).
#[derive(Debug)]
pub struct PruneReport {
    pub retention: Retention,
    pub pruned: Option<Pruned>,
    pub dry_run: bool,
}

impl PruneReport {
    pub fn text(&self) -> String {
        let mut out = format!("Retention is {}.\n", self.retention.describe());
        let Some(pruned) = &self.pruned else {
            out.push_str("Nothing was removed.\n");
            return out;
        };
        let verb = if self.dry_run {
            "Would remove"
        } else {
            "Removed"
        };
        out.push_str(&format!("{verb} {}.\n", what(pruned)));
        if self.retention.mode == RetentionMode::AfterServer {
            out.push_str("Changes not yet pushed to the server are kept.\n");
        }
        if self.dry_run {
            out.push_str("Nothing was removed (dry run).\n");
        }
        out
    }
}

/// `3 observation(s) (2 tool_use, 1 prompt), 1 summar(y/ies), 0 empty session(s), created 2026-01-02 10:00Z … 2026-02-01 09:00Z`.
fn what(p: &Pruned) -> String {
    let kinds: Vec<String> = p.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let kinds = if kinds.is_empty() {
        String::new()
    } else {
        format!(" ({})", kinds.join(", "))
    };
    let span = match (p.oldest, p.newest) {
        (Some(o), Some(n)) => format!(
            ", created {} … {}",
            timefmt::full(UnixMillis(o)),
            timefmt::full(UnixMillis(n))
        ),
        _ => String::new(),
    };
    format!(
        "{} observation(s){kinds}, {} summar(y/ies), {} empty session(s){span}",
        p.counts.observations, p.counts.summaries, p.counts.sessions
    )
}

/// What `solaria embed` made.
#[derive(Debug)]
pub struct EmbedReport {
    pub pass: PassReport,
    pub took: Duration,
}

impl EmbedReport {
    pub fn text(&self) -> String {
        let mut out = String::new();
        if self.pass.rebuilt {
            out.push_str(
                "the model changed: the old vectors were discarded and every record re-queued\n",
            );
        }
        out.push_str(&format!(
            "{} vector(s) made, {} removed in {:.1} s; {} record(s) still waiting\n",
            self.pass.embedded,
            self.pass.removed,
            self.took.as_secs_f64(),
            self.pass.remaining
        ));
        out
    }
}
