//! Spacing messages that could flood the log. The spacing is timed on the monotonic clock, so a
//! clock stepped back cannot silence a message until it has caught up.

use crate::pg::support::server_clock::monotonic_millis;
use std::sync::atomic::{AtomicI64, Ordering};

/// Whether the caller is the first in a second since `last_ms` (monotonic milliseconds) was
/// set, and if so, sets it: for messages that must not flood the log.
pub(crate) fn first_this_second(last_ms: &AtomicI64) -> bool {
    let now_ms = monotonic_millis();
    let last = last_ms.load(Ordering::Relaxed);
    now_ms.saturating_sub(last) >= 1000
        && last_ms
            .compare_exchange(last, now_ms, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
}
