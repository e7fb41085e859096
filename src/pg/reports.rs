//! Server-log lines about callers that wait: a spent pool, and a clock behind both timelines.
//! Each is spaced on the monotonic clock, so a clock stepped back cannot silence it.

use super::clock::{monotonic_millis, ServerClock};
use super::functions::format_unix_millis;
use super::shared::Shared;
use crate::clock::Clock;
use pgrx::prelude::*;
use std::sync::atomic::{AtomicI64, Ordering};

/// Whether the caller is the first in a second since `last_ms` (monotonic milliseconds) was
/// set, and if so, sets it: for messages that must not flood the log.
pub(super) fn first_this_second(last_ms: &AtomicI64) -> bool {
    let now_ms = monotonic_millis();
    let last = last_ms.load(Ordering::Relaxed);
    now_ms.saturating_sub(last) >= 1000
        && last_ms
            .compare_exchange(last, now_ms, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
}

impl Shared {
    /// While callers stall on a spent pool, says so in the server log at most once a second.
    pub fn log_overflow_at_most_each_second(&self) {
        let stalls = self.generator.overflow_stalls();
        let logged = self.overflow_logged_stalls.load(Ordering::Relaxed);
        if stalls == logged {
            return;
        }
        if !first_this_second(&self.overflow_logged_at_ms) {
            return;
        }
        self.overflow_logged_stalls.store(stalls, Ordering::Relaxed);
        let config = self.generator.config();
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
    pub fn log_regression_wait(&self, millis: i64) {
        let until = self.generator.stats().regression_wait_until;
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
