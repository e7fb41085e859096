//! A clock for tests, behind the `test-util` feature: not part of the crate's API.
//!
//! Tests of the generator need a clock they can set back, hold still and step through units
//! exactly; benchmarks need one that costs nothing to read. Neither is something an
//! application should generate IDs with, so it is compiled only for them (the crate's own
//! tests turn the feature on through a dev-dependency on the crate itself).

use super::{Clock, Deadline};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A clock that only moves when told to, for tests and deterministic benchmarks.
///
/// Waiting does not block: it moves this clock forward by the time waited, as if the caller had
/// slept, and counts the wait. Its deadlines are exact: checking one reads the clock.
///
/// ```
/// use sno::{Clock, Config, Generator, ManualClock};
///
/// let clock = ManualClock::new(1_700_000_000_000);
/// let generator = Generator::new(Config::new(1));
/// let before = generator.generate(0, &clock)?;
/// clock.set(1_700_000_000_000 - 60_000); // a minute back
/// let after = generator.generate(0, &clock)?;
/// assert!(after.tick_tock(), "a clock set back starts the other timeline");
/// assert_ne!(before, after);
/// # Ok::<(), sno::GenerateError>(())
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    unix_ms: AtomicI64,
    waits: AtomicU64,
}

impl ManualClock {
    /// A clock that reads `unix_ms` until it is set, advanced or waited on.
    pub fn new(unix_ms: i64) -> ManualClock {
        ManualClock {
            unix_ms: AtomicI64::new(unix_ms),
            waits: AtomicU64::new(0),
        }
    }

    /// Makes the clock read `unix_ms`, earlier or later than now.
    pub fn set(&self, unix_ms: i64) {
        self.unix_ms.store(unix_ms, Ordering::SeqCst);
    }

    /// Moves the clock by `millis` (back, if negative).
    pub fn advance(&self, millis: i64) {
        self.unix_ms.fetch_add(millis, Ordering::SeqCst);
    }

    /// How many times a caller waited on this clock.
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn unix_millis(&self) -> i64 {
        self.unix_ms.load(Ordering::SeqCst)
    }

    fn wait_millis(&self, millis: i64) {
        self.waits.fetch_add(1, Ordering::SeqCst);
        self.advance(millis);
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        Deadline::new(timer_millis(self.unix_millis()), timer_millis(end_ms))
    }

    fn is_before(&self, deadline: Deadline) -> bool {
        deadline.is_ahead_at(timer_millis(self.unix_millis()))
    }
}

/// Unix milliseconds as an unsigned timer reading, in the same order.
fn timer_millis(unix_ms: i64) -> u64 {
    (unix_ms as u64) ^ (1 << 63)
}
