//! The summarizer's ledger (`distill_runs`, migration 0007): which sessions were
//! tried as they stand, how each attempt ended, and the tokens spent, by session
//! and by UTC day. Local bookkeeping, never synced. All of the summarizer's SQL.

use super::records::{SUMMARY_COLUMNS, summary_from_row};
use super::{StoreError, Writer};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use solaria_shared::{MachineId, SessionId, Summary, UnixMillis};

/// The tag of every memory the summarizer proposes (`ops::distill`): what marks
/// it as read out of a session's events, so that forgetting the session forgets it
/// (`retention`), and what confirming it takes off.
pub const PROPOSAL_TAG: &str = "summarizer";

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model's summary replaced the deterministic one.
    Summarized,
    /// The call or its answer failed; the deterministic summary stayed.
    Failed,
    /// A spend cap left no room for the call: nothing was sent.
    Capped,
    /// Not to be sent at all (a local-only project).
    Skipped,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Summarized => "summarized",
            Outcome::Failed => "failed",
            Outcome::Capped => "capped",
            Outcome::Skipped => "skipped",
        }
    }

    fn parse(s: &str) -> Outcome {
        match s {
            "summarized" => Outcome::Summarized,
            "capped" => Outcome::Capped,
            "skipped" => Outcome::Skipped,
            _ => Outcome::Failed,
        }
    }
}

/// One attempt at a session's summary.
#[derive(Debug, Clone)]
pub struct Run {
    pub session: SessionId,
    /// The observations the summary covered when it was tried.
    pub observation_count: u32,
    pub at: UnixMillis,
    pub outcome: Outcome,
    pub reason: String,
    pub tokens: u64,
    /// `tokens` came from the API's count, not an estimate.
    pub counted: bool,
}

/// The UTC day of `at`, as the ledger keys it (`2026-11-24`).
pub fn day_of(at: UnixMillis) -> String {
    chrono::DateTime::from_timestamp_millis(at.0)
        .unwrap_or_default()
        .format("%Y-%m-%d")
        .to_string()
}

/// Which closed sessions to look at.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// This machine: only the summaries it wrote are its to rewrite.
    pub machine: MachineId,
    /// Sessions that ended before this are history, never sent.
    pub ended_after: UnixMillis,
    /// Nothing captured in the session since this (it is quiet, likely over).
    pub quiet_since: UnixMillis,
    pub limit: usize,
}

/// Summaries of closed, quiet sessions not yet tried as they stand, oldest first.
/// The model's own summaries are excluded by their ledger row (same count).
pub fn candidates(conn: &Connection, w: &Window) -> Result<Vec<Summary>, StoreError> {
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM summaries
         WHERE deleted = 0 AND machine_id = ?1 AND observation_count > 0
           AND session_id IN (SELECT id FROM sessions
                              WHERE deleted = 0 AND ended_at BETWEEN ?2 AND ?3)
           AND NOT EXISTS (SELECT 1 FROM observations o
                           WHERE o.session_id = summaries.session_id AND o.created_at > ?3)
           AND NOT EXISTS (SELECT 1 FROM distill_runs r
                           WHERE r.session_id = summaries.session_id
                             AND r.observation_count = summaries.observation_count)
         ORDER BY updated LIMIT ?4"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        params![
            w.machine.to_string(),
            w.ended_after.0,
            w.quiet_since.0,
            w.limit as i64
        ],
        summary_from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Records an attempt (in the caller's transaction, with what it wrote).
pub fn record(w: &mut Writer<'_>, run: &Run) -> Result<(), StoreError> {
    w.tx().execute(
        "INSERT OR REPLACE INTO distill_runs
             (session_id, observation_count, at, day, outcome, reason, tokens, counted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            run.session.to_string(),
            run.observation_count,
            run.at.0,
            day_of(run.at),
            run.outcome.as_str(),
            run.reason,
            run.tokens as i64,
            run.counted as i64,
        ],
    )?;
    Ok(())
}

/// Tokens spent on `day` (UTC), all sessions.
pub fn tokens_on(conn: &Connection, day: &str) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT coalesce(sum(tokens), 0) FROM distill_runs WHERE day = ?1",
        [day],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// Tokens spent on one session, all its attempts.
pub fn tokens_of_session(conn: &Connection, session: SessionId) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT coalesce(sum(tokens), 0) FROM distill_runs WHERE session_id = ?1",
        [session.to_string()],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// What the ledger holds, for `solaria stats`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    pub tokens_today: u64,
    /// Whether every one of today's counts came from the API (else some are
    /// estimates).
    pub tokens_today_counted: bool,
    pub summarized: u64,
    pub failed: u64,
    pub capped: u64,
    pub skipped: u64,
    /// The latest attempt that did not summarize: when, how, why.
    pub last_problem: Option<Problem>,
}

/// An attempt that left the deterministic summary in place.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub at: UnixMillis,
    pub outcome: Outcome,
    pub reason: String,
}

/// The ledger's totals, with `today`'s tokens.
pub fn totals(conn: &Connection, today: &str) -> Result<Totals, StoreError> {
    let mut t = Totals {
        tokens_today: tokens_on(conn, today)?,
        ..Totals::default()
    };
    t.tokens_today_counted = conn.query_row(
        "SELECT count(*) = 0 FROM distill_runs WHERE day = ?1 AND counted = 0 AND tokens > 0",
        [today],
        |r| r.get(0),
    )?;
    let mut stmt =
        conn.prepare_cached("SELECT outcome, count(*) FROM distill_runs GROUP BY outcome")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (outcome, n) = row?;
        let n = n.max(0) as u64;
        match Outcome::parse(&outcome) {
            Outcome::Summarized => t.summarized = n,
            Outcome::Failed => t.failed = n,
            Outcome::Capped => t.capped = n,
            Outcome::Skipped => t.skipped = n,
        }
    }
    t.last_problem = conn
        .query_row(
            "SELECT at, outcome, reason FROM distill_runs
             WHERE outcome IN ('failed', 'capped') ORDER BY at DESC LIMIT 1",
            [],
            |r| {
                Ok(Problem {
                    at: UnixMillis(r.get(0)?),
                    outcome: Outcome::parse(&r.get::<_, String>(1)?),
                    reason: r.get(2)?,
                })
            },
        )
        .optional()?;
    Ok(t)
}
