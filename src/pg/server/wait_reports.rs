//! Server-log lines about callers that wait: a spent pool, and a clock behind both timelines.
//! Each is spaced on the monotonic clock, so a clock stepped back cannot silence it.
//!
//! The generator waits through its clock, so the server's generator is given a clock that
//! reports long waits ([`ReportingClock`]): the core stays unaware of the log.

use crate::clock::{Clock, Deadline};
use crate::generator::Generator;
use crate::pg::support::log_spacing::first_this_second;
use crate::pg::support::server_clock::{ServerClock, MAX_SLEEP_MS};
use crate::pg::support::timestamps::format_unix_millis;
use pgrx::prelude::*;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// What was last said, in shared memory.
pub(crate) struct WaitReports {
    overflow_logged_stalls: AtomicU64,
    overflow_logged_at_ms: AtomicI64,
    /// The unit a regression wait was last logged for.
    wait_logged_for: AtomicU64,
}

impl WaitReports {
    pub(crate) const fn new() -> WaitReports {
        WaitReports {
            overflow_logged_stalls: AtomicU64::new(0),
            overflow_logged_at_ms: AtomicI64::new(i64::MIN),
            wait_logged_for: AtomicU64::new(0),
        }
    }

    /// While callers stall on a spent pool, says so in the server log at most once a second.
    pub(crate) fn log_overflow_at_most_each_second(&self, generator: &Generator) {
        let stalls = generator.overflow_stalls();
        let logged = self.overflow_logged_stalls.load(Ordering::Relaxed);
        if stalls == logged {
            return;
        }
        if !first_this_second(&self.overflow_logged_at_ms) {
            return;
        }
        self.overflow_logged_stalls.store(stalls, Ordering::Relaxed);
        let config = generator.config();
        log!(
            "sno: the sequence pool is overflowing: {} calls waited for a new 4 ms unit \
             (partition {}, sequences {}..{}, {} per unit)",
            stalls - logged,
            config.partition,
            config.sequence_min,
            config.sequence_max,
            config.pool()
        );
    }

    /// A caller is about to wait `millis` for the clock to reach the current timeline's last
    /// unit, because both timelines have used the span the clock is in. Logged once per unit
    /// waited for, by the first caller, with how long the wait is.
    fn log_regression_wait(&self, generator: &Generator, millis: i64) {
        let until = generator.stats().regression_wait_until;
        let logged = self.wait_logged_for.load(Ordering::Relaxed);
        if until.get() == logged
            || self
                .wait_logged_for
                .compare_exchange(logged, until.get(), Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        log!(
            "sno: the clock ({}) is behind IDs this server may have made in both tick-tock \
             timelines; sno_generate waits {:.1} s, until {}, so that none repeats",
            format_unix_millis(ServerClock.unix_millis()),
            millis as f64 / 1000.0,
            format_unix_millis(until.to_unix_millis())
        );
    }
}

/// The server's clock, for the shared generator: a wait longer than a unit (only a clock behind
/// both timelines makes one) is said in the log first.
pub(crate) struct ReportingClock<'a>(pub(crate) &'a WaitReports, pub(crate) &'a Generator);

impl Clock for ReportingClock<'_> {
    #[inline]
    fn unix_millis(&self) -> i64 {
        ServerClock.unix_millis()
    }

    fn wait_millis(&self, millis: i64) {
        if millis > MAX_SLEEP_MS {
            self.0.log_regression_wait(self.1, millis);
        }
        ServerClock.wait_millis(millis)
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        ServerClock.deadline(end_ms)
    }

    fn deadline_within(&self, end_ms: i64, within_ns: i64) -> Deadline {
        ServerClock.deadline_within(end_ms, within_ns)
    }

    #[inline(always)]
    fn is_before(&self, deadline: Deadline) -> bool {
        ServerClock.is_before(deadline)
    }
}
