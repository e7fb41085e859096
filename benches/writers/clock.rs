//! The model's clock: virtual time in nanoseconds, set by the simulation before each call.
//!
//! Not the crate's `ManualClock`: that one counts milliseconds and its deadlines ignore the
//! span a lease asks for (`deadline_within`), so with it today's lease would keep a run to the
//! end of its unit, like the old one. This clock times deadlines as `RealtimeClock` does on the
//! CPU's counter, to the nanosecond, with the same 1/8 margin.

use sno::{Clock, Deadline};
use std::cell::Cell;

/// 2025-11-24 00:00 UTC: any time inside the format's range would do.
const START_UNIX_MS: i64 = 1_763_942_400_000;
const NS_PER_MS: i64 = 1_000_000;
/// `RealtimeClock`'s longest deadline (one unit) and the part of it left uncounted.
const LONGEST_DEADLINE_NS: i64 = 4 * NS_PER_MS;
const DEADLINE_MARGIN: f64 = 0.125;

#[derive(Default)]
pub struct VirtualClock {
    ns: Cell<i64>,
    waits: Cell<u64>,
}

impl VirtualClock {
    /// Moves the clock to `ns` after the start; never back.
    pub fn set(&self, ns: i64) {
        assert!(ns >= self.ns.get(), "the model's events run in time order");
        self.ns.set(ns);
    }

    /// How many times the generator waited (a spent pool): none in these loads.
    pub fn waits(&self) -> u64 {
        self.waits.get()
    }
}

impl Clock for VirtualClock {
    fn unix_millis(&self) -> i64 {
        START_UNIX_MS + self.ns.get().div_euclid(NS_PER_MS)
    }

    fn wait_millis(&self, millis: i64) {
        self.waits.set(self.waits.get() + 1);
        self.ns.set(self.ns.get() + millis * NS_PER_MS);
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        self.deadline_within(end_ms, LONGEST_DEADLINE_NS)
    }

    fn deadline_within(&self, end_ms: i64, within_ns: i64) -> Deadline {
        let now = self.ns.get();
        let left = ((end_ms - START_UNIX_MS) * NS_PER_MS - now)
            .min(within_ns)
            .min(LONGEST_DEADLINE_NS);
        if left <= 0 {
            return Deadline::PASSED;
        }
        let counted = (left as f64 * (1.0 - DEADLINE_MARGIN)) as u64;
        Deadline::new(now as u64, now as u64 + counted)
    }

    fn is_before(&self, deadline: Deadline) -> bool {
        deadline.is_armed() && deadline.is_ahead_at(self.ns.get() as u64)
    }
}
