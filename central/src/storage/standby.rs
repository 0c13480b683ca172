//! Reads from a streaming standby, and how far behind the primary it may be.
//!
//! Every [`PROBE_EVERY`] the service notes the primary's WAL insert position and
//! asks the standby how far it has replayed. A standby that has replayed past a
//! position noted at time *t* holds everything the primary committed before *t*,
//! so its lag is at most *now − t* for the latest such *t*; that bound grows with
//! the time since it was measured, so a probe that hangs ends the standby's turn.
//! Reads that may lag go to the standby only while the bound is within the
//! operator's `read_max_lag_ms`; otherwise (behind, unreachable, not yet probed)
//! they go to the primary, as does a read whose standby connection fails. Nothing
//! here writes.

use super::base::StorageError;
use super::sql;
use sqlx::PgPool;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the standby's lag is measured.
pub const PROBE_EVERY: Duration = Duration::from_millis(250);

/// How the standby is doing now, as reads are routed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StandbyState {
    /// Not probed yet: reads go to the primary.
    Unknown,
    /// Within the bound: reads that may lag go to it.
    Serving { behind_at_most: Duration },
    /// Further behind than the bound allows (`None`: more than the probes remember).
    Behind { lag: Option<Duration> },
    /// The standby (or the primary, to compare with) does not answer.
    Unreachable,
}

impl StandbyState {
    /// One line for `/readyz` and the logs.
    pub fn line(&self) -> String {
        match self {
            StandbyState::Unknown => "standby: not measured yet (reads go to the primary)".into(),
            StandbyState::Serving { behind_at_most } => format!(
                "standby: serving reads, at most {} ms behind",
                behind_at_most.as_millis()
            ),
            StandbyState::Behind { lag: Some(lag) } => format!(
                "standby: {} ms behind, over the bound (reads go to the primary)",
                lag.as_millis()
            ),
            StandbyState::Behind { lag: None } => {
                "standby: behind by more than it remembers (reads go to the primary)".into()
            }
            StandbyState::Unreachable => "standby: not reachable (reads go to the primary)".into(),
        }
    }
}

/// What the last probe found, and when.
#[derive(Debug, Clone, Copy)]
enum Measure {
    None,
    /// The lag bound found at `at` (`None`: behind every position remembered).
    Lag {
        lag: Option<Duration>,
        at: Instant,
    },
    Failed,
}

/// A standby's pool, its bound and what the probes found.
#[derive(Debug)]
pub struct Standby {
    pub(super) pool: PgPool,
    max_lag: Duration,
    measure: Mutex<Measure>,
    probe: Mutex<Option<tokio::task::AbortHandle>>,
}

impl Drop for Standby {
    fn drop(&mut self) {
        if let Some(probe) = self.probe.lock().ok().and_then(|mut p| p.take()) {
            probe.abort();
        }
    }
}

impl Standby {
    /// Wraps the standby's pool and starts probing it against `primary`.
    pub(super) fn start(pool: PgPool, primary: PgPool, max_lag: Duration) -> Arc<Standby> {
        let standby = Arc::new(Standby {
            pool,
            max_lag,
            measure: Mutex::new(Measure::None),
            probe: Mutex::new(None),
        });
        let watched = Arc::downgrade(&standby);
        let task = tokio::spawn(async move {
            let mut noted = Notes::default();
            let mut ticks = tokio::time::interval(PROBE_EVERY);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(standby) = watched.upgrade() else {
                    return;
                };
                let measure = match probe(&primary, &standby.pool, &mut noted).await {
                    Ok(lag) => Measure::Lag {
                        lag,
                        at: Instant::now(),
                    },
                    Err(e) => {
                        tracing::debug!(error = %e, "standby probe failed");
                        Measure::Failed
                    }
                };
                standby.record(measure);
            }
        });
        if let Ok(mut slot) = standby.probe.lock() {
            *slot = Some(task.abort_handle());
        }
        standby
    }

    fn measure(&self) -> Measure {
        match self.measure.lock() {
            Ok(m) => *m,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    fn record(&self, measure: Measure) {
        let before = self.state();
        match self.measure.lock() {
            Ok(mut m) => *m = measure,
            Err(poisoned) => *poisoned.into_inner() = measure,
        }
        let now = self.state();
        if std::mem::discriminant(&before) != std::mem::discriminant(&now) {
            tracing::info!("{}", now.line());
        }
    }

    /// The state now: a lag measured a while ago has grown by that while since (a
    /// probe that hangs cannot keep a standby serving).
    pub(super) fn state(&self) -> StandbyState {
        state_at(self.measure(), self.max_lag, Instant::now())
    }

    /// Whether reads that may lag go here now.
    pub(super) fn serves_reads(&self) -> bool {
        matches!(self.state(), StandbyState::Serving { .. })
    }
}

/// What `measure` says at `now`, against the bound `max_lag`.
fn state_at(measure: Measure, max_lag: Duration, now: Instant) -> StandbyState {
    match measure {
        Measure::None => StandbyState::Unknown,
        Measure::Failed => StandbyState::Unreachable,
        Measure::Lag { lag: None, .. } => StandbyState::Behind { lag: None },
        Measure::Lag { lag: Some(lag), at } => {
            let behind = lag + now.saturating_duration_since(at);
            if behind <= max_lag {
                StandbyState::Serving {
                    behind_at_most: behind,
                }
            } else {
                StandbyState::Behind { lag: Some(behind) }
            }
        }
    }
}

/// The primary's insert positions, with when each was noted, oldest first.
#[derive(Debug, Default)]
struct Notes(VecDeque<(Instant, u64)>);

/// Positions remembered: enough for lags of a few minutes.
const NOTES_KEPT: usize = 1024;

/// One measurement: notes the primary's position, reads the standby's, and returns
/// the bound on its lag (`None`: behind every note kept).
async fn probe(
    primary: &PgPool,
    standby: &PgPool,
    notes: &mut Notes,
) -> Result<Option<Duration>, StorageError> {
    let at = Instant::now();
    let inserted = position(
        primary,
        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8",
    )
    .await?;
    notes.0.push_back((at, inserted as u64));
    if notes.0.len() > NOTES_KEPT {
        notes.0.pop_front();
    }
    // A database that is not in recovery is its own primary (or the same server):
    // what it has written it shows.
    let replayed = position(
        standby,
        "SELECT pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                                     ELSE pg_current_wal_insert_lsn() END, '0/0')::int8",
    )
    .await?;
    Ok(notes.lag_bound(replayed as u64, Instant::now()))
}

impl Notes {
    /// How far behind a standby that has replayed up to `replayed` is at most, at
    /// `now`: the time since the latest position it has passed was noted (`None`:
    /// it has passed none still remembered).
    fn lag_bound(&self, replayed: u64, now: Instant) -> Option<Duration> {
        self.0
            .iter()
            .rev()
            .find(|(_, position)| *position <= replayed)
            .map(|(noted, _)| now.saturating_duration_since(*noted))
    }
}

/// A WAL position read by `statement`, in a transaction of its own (a pooler in
/// transaction mode keeps the statement on one server).
async fn position(pool: &PgPool, statement: &'static str) -> Result<i64, StorageError> {
    let mut tx = pool.begin().await?;
    let at: i64 = sql::query_scalar(statement).fetch_one(&mut *tx).await?;
    tx.commit().await?;
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_lag_is_the_age_of_the_latest_position_the_standby_has_passed() {
        let t0 = Instant::now();
        let notes = Notes(VecDeque::from([
            (t0, 100),
            (t0 + SECOND, 200),
            (t0 + 2 * SECOND, 300),
        ]));
        let now = t0 + 3 * SECOND;
        assert_eq!(
            notes.lag_bound(300, now),
            Some(SECOND),
            "caught up at the last note"
        );
        assert_eq!(
            notes.lag_bound(250, now),
            Some(2 * SECOND),
            "past 200, not 300"
        );
        assert_eq!(
            notes.lag_bound(99, now),
            None,
            "behind every note remembered"
        );
    }

    #[test]
    fn a_measure_grows_stale_so_a_probe_that_hangs_ends_the_standby_s_turn() {
        let at = Instant::now();
        let measure = Measure::Lag {
            lag: Some(Duration::from_millis(100)),
            at,
        };
        assert_eq!(
            state_at(measure, SECOND, at),
            StandbyState::Serving {
                behind_at_most: Duration::from_millis(100)
            }
        );
        // No probe has answered for two seconds: the standby may be that far behind.
        assert!(matches!(
            state_at(measure, SECOND, at + 2 * SECOND),
            StandbyState::Behind { lag: Some(_) }
        ));
        assert_eq!(
            state_at(Measure::Failed, SECOND, at),
            StandbyState::Unreachable
        );
        assert_eq!(state_at(Measure::None, SECOND, at), StandbyState::Unknown);
    }
}
