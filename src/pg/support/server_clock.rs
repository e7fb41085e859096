//! The generator's clock inside PostgreSQL: the real-time clock and its deadlines, and waits
//! that a cancel or a shutdown can interrupt.

use crate::clock::{Clock, Deadline, RealtimeClock};
use crate::pg::support::settings::test_only;
use pgrx::pg_sys;

/// Longest single sleep, so that a cancel request is noticed promptly during a long wait (a
/// clock that went back by minutes into the span both timelines have used).
pub(crate) const MAX_SLEEP_MS: i64 = 10;

/// The real-time clock (moved by `sno.test_clock_offset_ms` in test builds), whose waits a
/// cancel or a shutdown interrupts.
pub(crate) struct ServerClock;

impl Clock for ServerClock {
    #[inline]
    fn unix_millis(&self) -> i64 {
        RealtimeClock.unix_millis() + test_only::offset_ms()
    }

    fn wait_millis(&self, millis: i64) {
        pgrx::check_for_interrupts!();
        // SAFETY: pg_usleep only sleeps.
        unsafe { pg_sys::pg_usleep((millis.clamp(1, MAX_SLEEP_MS) * 1000) as _) };
        pgrx::check_for_interrupts!();
    }

    // Deadlines are timed on the real clock, so none is armed or trusted while a test moves
    // this clock (never in released builds): a test's step back is seen at the next call.
    fn deadline(&self, end_ms: i64) -> Deadline {
        self.deadline_within(end_ms, i64::MAX)
    }

    fn deadline_within(&self, end_ms: i64, within_ns: i64) -> Deadline {
        if test_only::offset_ms() != 0 {
            return Deadline::PASSED;
        }
        RealtimeClock.deadline_within(end_ms, within_ns)
    }

    #[inline(always)]
    fn is_before(&self, deadline: Deadline) -> bool {
        test_only::offset_ms() == 0 && RealtimeClock.is_before(deadline)
    }
}

/// Milliseconds on `CLOCK_MONOTONIC`, for spacing log lines: unlike the real-time clock it never
/// goes back, so a step back cannot silence a message until the clock has caught up.
pub(crate) fn monotonic_millis() -> i64 {
    crate::clock::read_millis(libc::CLOCK_MONOTONIC)
}
