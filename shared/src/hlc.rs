//! The hybrid logical clock that orders every edit.
//!
//! A stamp is physical milliseconds plus a logical counter, packed into one `u64`
//! (`ms << 16 | counter`) so that comparing stamps, on either side and in SQL, is a
//! plain integer comparison. Last-write-wins compares `(updated, machine_id)`; see
//! [`wins_over`].

use crate::ids::MachineId;
use serde::{Deserialize, Serialize};
use std::fmt;

const LOGICAL_BITS: u32 = 16;
const LOGICAL_MASK: u64 = (1 << LOGICAL_BITS) - 1;

/// How far ahead of our own clock a received stamp may be before we refuse it.
/// Without a bound, one machine with a clock a day fast would drag every clock it
/// touches a day ahead and win every concurrent edit for that day.
pub const MAX_DRIFT_MS: u64 = 5 * 60 * 1000;

/// One hybrid-logical-clock stamp. Ordered: later stamps compare greater.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Hlc(u64);

impl Hlc {
    /// The stamp for `physical_ms` and `logical`. A `logical` past 16 bits
    /// carries into the millisecond, keeping the order.
    pub fn new(physical_ms: u64, logical: u64) -> Self {
        Hlc((physical_ms << LOGICAL_BITS).saturating_add(logical))
    }

    /// The physical part, in milliseconds since the Unix epoch.
    pub fn physical_ms(self) -> u64 {
        self.0 >> LOGICAL_BITS
    }

    /// The logical counter within the millisecond.
    pub fn logical(self) -> u64 {
        self.0 & LOGICAL_MASK
    }

    /// The packed value, as stored in SQLite and PostgreSQL (`BIGINT`).
    pub fn as_i64(self) -> i64 {
        self.0 as i64
    }

    /// Reads a packed value back. Negative values (never written) read as zero.
    pub fn from_i64(v: i64) -> Self {
        Hlc(v.max(0) as u64)
    }

    fn next(self) -> Self {
        Hlc(self.0.saturating_add(1))
    }
}

impl fmt::Display for Hlc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.physical_ms(), self.logical())
    }
}

/// Last-write-wins: does the version `(a, a_machine)` beat `(b, b_machine)`?
/// The later stamp wins; equal stamps are broken by the larger machine id, so every
/// node picks the same winner. The central service mirrors exactly this in SQL.
pub fn wins_over(a: Hlc, a_machine: MachineId, b: Hlc, b_machine: MachineId) -> bool {
    (a, a_machine) > (b, b_machine)
}

/// Below this difference from the server's clock, a machine's clock is taken as
/// right: the server's time is read from HTTP `Date` headers (whole seconds) over a
/// network, so smaller offsets are measurement noise.
pub const CLOCK_NOISE_MS: i64 = 5_000;

/// From this offset on, the user is told the machine's clock is off.
pub const CLOCK_WARNING_MS: i64 = 60_000;

/// The correction a machine applies to its wall clock when stamping, learned from
/// the server: `server_ms - local_ms` measured at the same moment, or 0 when the
/// difference is within [`CLOCK_NOISE_MS`]. Stamps then follow the server's time
/// (the account's one clock), so a machine whose clock is a day off neither wins
/// every edit (fast) nor loses every edit (slow), and its pushes are not refused.
pub fn clock_offset(server_ms: i64, local_ms: i64) -> i64 {
    let offset = server_ms.saturating_sub(local_ms);
    if offset.abs() < CLOCK_NOISE_MS {
        0
    } else {
        offset
    }
}

/// New stamps for `count` versions this machine wrote with stamps ahead of the
/// corrected time `now_ms` (written before its clock was corrected): in their
/// order, after `floor` (the push cursor and every stamp kept), and from `now_ms`
/// on. A version received from elsewhere is never re-stamped.
pub fn restamps(count: usize, floor: Hlc, now_ms: u64) -> Vec<Hlc> {
    let mut next = Hlc::new(now_ms, 0).max(floor.next());
    (0..count)
        .map(|_| {
            let stamp = next;
            next = next.next();
            stamp
        })
        .collect()
}

/// The clock of one node: issues stamps for local writes and merges stamps received
/// from elsewhere, so that a write made after seeing another is always stamped later.
#[derive(Debug, Clone, Copy, Default)]
pub struct HlcClock {
    last: Hlc,
}

impl HlcClock {
    /// A clock that continues after `last` (the largest stamp this node issued or saw).
    pub fn resume(last: Hlc) -> Self {
        HlcClock { last }
    }

    /// The largest stamp issued or seen so far.
    pub fn last(&self) -> Hlc {
        self.last
    }

    /// A stamp for a local write at wall time `now_ms`: greater than every stamp
    /// issued or seen before, even if the wall clock went backwards.
    pub fn tick(&mut self, now_ms: u64) -> Hlc {
        let wall = Hlc::new(now_ms, 0);
        self.last = if wall > self.last {
            wall
        } else {
            self.last.next()
        };
        self.last
    }

    /// Merges a stamp received from another node: every later local stamp is
    /// greater than it. Bounding how far ahead a stamp may be is the receiver's
    /// decision, made before (central refuses a push stamped more than
    /// [`MAX_DRIFT_MS`] ahead of its clock, so the stamps an edge pulls are bounded).
    pub fn observe(&mut self, remote: Hlc) {
        if remote > self.last {
            self.last = remote;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let h = Hlc::new(1_700_000_000_000, 7);
        assert_eq!(h.physical_ms(), 1_700_000_000_000);
        assert_eq!(h.logical(), 7);
        assert_eq!(Hlc::from_i64(h.as_i64()), h);
        assert_eq!(h.to_string(), "1700000000000.7");
    }

    #[test]
    fn a_write_after_seeing_a_later_stamp_is_stamped_after_it() {
        let mut clock = HlcClock::default();
        let mine = clock.tick(1_000);
        clock.observe(Hlc::new(5_000, 3));
        let next = clock.tick(1_001);
        assert!(next > Hlc::new(5_000, 3) && next > mine);
        clock.observe(Hlc::new(10, 0));
        assert!(clock.tick(1_002) > next, "an older stamp changes nothing");
    }

    #[test]
    fn tick_is_monotonic_when_the_wall_clock_goes_backwards() {
        let mut clock = HlcClock::default();
        let a = clock.tick(10_000);
        let b = clock.tick(9_000); // clock stepped back a second
        let c = clock.tick(9_000);
        let d = clock.tick(10_000);
        let e = clock.tick(12_000);
        assert!(a < b && b < c && c < d && d < e, "{a} {b} {c} {d} {e}");
        assert_eq!(
            b.physical_ms(),
            10_000,
            "keeps the highest physical time seen"
        );
        assert_eq!(e, Hlc::new(12_000, 0), "catches up with the wall clock");
    }

    #[test]
    fn many_ticks_in_one_millisecond_stay_ordered_past_the_counter() {
        let mut clock = HlcClock::default();
        let mut prev = clock.tick(5);
        for _ in 0..70_000 {
            let next = clock.tick(5);
            assert!(next > prev);
            prev = next;
        }
    }

    #[test]
    fn small_differences_are_noise_and_large_ones_the_offset() {
        assert_eq!(clock_offset(10_000, 8_000), 0);
        assert_eq!(clock_offset(0, 86_400_000), -86_400_000, "a day fast");
        assert_eq!(clock_offset(86_400_000, 0), 86_400_000, "a day slow");
    }

    #[test]
    fn restamps_keep_order_after_the_floor_from_now() {
        let s = restamps(3, Hlc::new(500, 2), 1_000);
        assert_eq!(
            s,
            vec![Hlc::new(1_000, 0), Hlc::new(1_000, 1), Hlc::new(1_000, 2)]
        );
        let after = restamps(2, Hlc::new(2_000, 7), 1_000);
        assert!(after[0] > Hlc::new(2_000, 7) && after[1] > after[0]);
    }

    #[test]
    fn lww_breaks_ties_by_machine_the_same_way_everywhere() {
        let m1 = MachineId::new();
        let m2 = MachineId::new();
        let (lo, hi) = if m1 < m2 { (m1, m2) } else { (m2, m1) };
        let t = Hlc::new(100, 0);
        assert!(wins_over(t, hi, t, lo));
        assert!(!wins_over(t, lo, t, hi));
        assert!(
            wins_over(Hlc::new(101, 0), lo, t, hi),
            "a later stamp always wins"
        );
        assert!(!wins_over(t, hi, t, hi), "a version does not beat itself");
    }
}
