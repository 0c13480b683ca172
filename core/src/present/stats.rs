//! Counts and the sync state: what `solaria stats` / `status`, the MCP
//! `memory_stats` tool and `/api/stats` / `/api/status` report, in one shape.

use crate::semantic;
use crate::store::distill::{Outcome, Totals};
use crate::store::retention::Retention;
use crate::store::sync::LastSync;
use crate::store::views::Stats;
use crate::timefmt;
use serde::Serialize;
use solaria_shared::{MachineId, UnixMillis};
use std::fmt::Write;

/// The sync state of this machine.
#[derive(Debug, Clone, Serialize)]
pub struct SyncState {
    /// The central service this machine is logged in to (or configured for).
    pub server: Option<String>,
    pub logged_in: bool,
    pub machine_id: MachineId,
    pub machine_name: String,
    #[serde(flatten)]
    pub last: LastSync,
    /// Local changes the server has not acknowledged yet.
    pub pending: i64,
    /// Local changes that lost to newer versions and were not acknowledged.
    pub conflicts: usize,
    /// The correction this machine's clock needs to read the server's time (ms;
    /// positive: behind), learned at the last sync and applied to every stamp.
    pub clock_offset_ms: i64,
    /// Whether local retention runs, and why.
    pub retention: RetentionState,
    /// How this machine searches: by words only, or by meaning too, and how to
    /// get the better one (`semantic::Status::describe`).
    pub local_search: String,
    /// How the central service searches, as it said at the last sync
    /// (`search by meaning: on (pgvector 0.6.2)`, or off and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub central_search: Option<String>,
    /// The account's shared project patterns, as the last sync learned them (`None`:
    /// not logged in, or the service has not said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_projects: Option<Vec<String>>,
    /// Pulled records not kept because they named another person's session (the
    /// session rule): none from an honest service.
    pub foreign_dropped: i64,
}

/// The retention in force and what it has removed.
#[derive(Debug, Clone, Serialize)]
pub struct RetentionState {
    #[serde(flatten)]
    pub policy: Retention,
    /// On or off, and why, in a sentence.
    pub why: String,
    /// The newest creation time retention has removed; older memory is on the
    /// server only (a search asks it).
    pub pruned_up_to: Option<UnixMillis>,
}

impl RetentionState {
    /// The state of `policy`, having removed records up to `pruned_up_to`.
    pub fn new(policy: Retention, pruned_up_to: Option<UnixMillis>) -> RetentionState {
        RetentionState {
            why: policy.describe(),
            policy,
            pruned_up_to,
        }
    }

    fn line(&self) -> String {
        match self.pruned_up_to {
            Some(t) => format!("{}; removed up to {}", self.why, timefmt::full(t)),
            None => self.why.clone(),
        }
    }
}

impl SyncState {
    /// `solaria status`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = match &self.server {
            Some(server) => writeln!(out, "server:     {server}"),
            None => writeln!(
                out,
                "server:     none (run `solaria login SERVER --token TOKEN` to sync)"
            ),
        };
        let _ = writeln!(
            out,
            "machine:    {} ({})",
            self.machine_name, self.machine_id
        );
        let _ = match (self.last.at, self.last.status) {
            (Some(t), Some(s)) => writeln!(
                out,
                "last sync:  {} — {s}: {}",
                timefmt::full(t),
                self.last.detail.as_deref().unwrap_or_default()
            ),
            _ => writeln!(out, "last sync:  never"),
        };
        let _ = writeln!(
            out,
            "pending:    {} local change(s) not yet pushed",
            self.pending
        );
        let _ = writeln!(
            out,
            "conflicts:  {} unacknowledged (see `solaria conflicts`)",
            self.conflicts
        );
        if let Some(note) = super::clock_note(self.clock_offset_ms) {
            let _ = writeln!(out, "clock:      {note}");
        }
        let _ = writeln!(out, "retention:  {}", self.retention.line());
        let _ = writeln!(out, "search:     {}", self.local_search);
        if let Some(line) = &self.central_search {
            let _ = writeln!(out, "central:    {line}");
        }
        if let Some(patterns) = self.shared_projects.as_ref().filter(|p| !p.is_empty()) {
            let _ = writeln!(
                out,
                "shared:     {} (the whole team sees these projects; every other one is personal)",
                patterns.join(", ")
            );
        }
        if self.foreign_dropped > 0 {
            let _ = writeln!(
                out,
                "not kept:   {} pulled record(s) that named another person's session (the sync output named each)",
                self.foreign_dropped
            );
        }
        out
    }
}

/// Counts and facts about the local memory, its search and its sync.
#[derive(Debug, Clone, Serialize)]
pub struct StatsReport {
    #[serde(flatten)]
    pub counts: Stats,
    pub data_dir: String,
    /// The store file and its write-ahead log, in bytes.
    pub store_bytes: u64,
    pub machine_id: MachineId,
    pub machine_name: String,
    pub search: semantic::Status,
    pub sync: SyncState,
    pub summarizer: SummarizerState,
}

/// The optional model summarizer (`[summarizer]`): whether it is on, its caps,
/// and what it has done.
#[derive(Debug, Clone, Serialize)]
pub struct SummarizerState {
    pub enabled: bool,
    /// What is called (a program's name or the API and model), never a key.
    pub uses: String,
    pub max_tokens_per_day: u64,
    pub max_tokens_per_session: u64,
    #[serde(flatten)]
    pub totals: Totals,
}

impl SummarizerState {
    fn lines(&self) -> Vec<String> {
        let t = &self.totals;
        let done = t.summarized + t.failed + t.capped + t.skipped;
        if !self.enabled && done == 0 {
            return vec![
                "summarizer:    off (deterministic summaries; see the README to use a model)"
                    .into(),
            ];
        }
        let mut lines = vec![format!(
            "summarizer:    {} {}; {} / {} tokens today (UTC){}, at most {} per session",
            if self.enabled { "on," } else { "off; was" },
            self.uses,
            t.tokens_today,
            self.max_tokens_per_day,
            if t.tokens_today_counted {
                ""
            } else {
                " (estimated)"
            },
            self.max_tokens_per_session
        )];
        lines.push(format!(
            "               {} session(s) summarized, {} failed, {} stopped by a spend cap, {} not sent (local-only)",
            t.summarized, t.failed, t.capped, t.skipped
        ));
        if let Some(p) = &t.last_problem {
            lines.push(format!(
                "               last {}: {} — {}",
                match p.outcome {
                    Outcome::Capped => "stop",
                    _ => "failure",
                },
                timefmt::full(p.at),
                p.reason
            ));
        }
        lines
    }
}

impl StatsReport {
    /// `solaria stats` and `/memory status`.
    pub fn text(&self) -> String {
        let s = &self.counts;
        let mut out = String::new();
        let mut line = |l: String| {
            out.push_str(&l);
            out.push('\n');
        };
        line(format!("data dir:      {}", self.data_dir));
        line(format!(
            "machine:       {} ({})",
            self.machine_name, self.machine_id
        ));
        line(format!(
            "store:         {:.1} MiB",
            self.store_bytes as f64 / 1_048_576.0
        ));
        line(format!("sessions:      {}", s.sessions));
        let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
        line(format!(
            "observations:  {} ({})",
            s.observations,
            kinds.join(", ")
        ));
        line(format!("summaries:     {}", s.summaries));
        line(format!(
            "projects:      {}   machines: {}",
            s.projects, s.machines
        ));
        if let (Some(o), Some(n)) = (s.oldest, s.newest) {
            line(format!(
                "span:          {} … {}",
                timefmt::full(UnixMillis(o)),
                timefmt::full(UnixMillis(n))
            ));
        }
        line(format!("tombstones:    {}", s.tombstones));
        line(format!("search:        {}", self.search.describe()));
        line(match &self.sync.server {
            Some(server) => format!(
                "sync:          {server}; {} change(s) not yet pushed",
                self.sync.pending
            ),
            None => "sync:          not configured (memory stays on this machine)".into(),
        });
        line(format!("retention:     {}", self.sync.retention.line()));
        for l in self.summarizer.lines() {
            line(l);
        }
        out
    }
}
