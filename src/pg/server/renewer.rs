//! The renewer: a background worker that extends the state file's reservation before any
//! caller needs it, so that while IDs are made steadily no `sno_generate` writes the file itself
//! (a WAL flush, two fsyncs and a rename: the latency outlier about every 5 s that the caller
//! who renewed used to pay, docs/persistence.md).
//!
//! It looks twice a second and renews when IDs were made since its last look and less than
//! [`persistence::RENEW_AHEAD_UNITS`] of the reservation is left, 2 s before the first caller
//! would renew it. An idle server writes nothing. Callers still renew where the renewer falls
//! behind (a stalled disk, the worker restarting), and the first ID after a start or a clock
//! regression is written by its caller, who needs it at once. Started once recovery is over, on
//! a primary only; not in pg_upgrade's binary-upgrade mode, which must not write.
//!
//! [`persistence::RENEW_AHEAD_UNITS`]: crate::pg::server::persistence

use crate::pg::server::shared_memory::shared;
use crate::pg::support::{background_worker, settings};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::time::Duration;

const LOOK_EVERY: Duration = Duration::from_millis(500);

/// Registers the renewer; call from `_PG_init` while preloading.
pub(crate) fn register() {
    // SAFETY: a plain read of a flag the postmaster sets from its options before preloading.
    if unsafe { pg_sys::IsBinaryUpgrade } {
        return;
    }
    background_worker::register("sno reservation renewer", "sno_reservation_renewer_main");
}

#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn sno_reservation_renewer_main(_argument: pg_sys::Datum) {
    background_worker::start();
    let mut claimed_at_last_look = None;
    loop {
        background_worker::wait(LOOK_EVERY);
        let Some(shared) = shared() else {
            continue;
        };
        let claimed = shared.claimed();
        let ids_made = claimed_at_last_look.is_some_and(|before| before != claimed);
        claimed_at_last_look = Some(claimed);
        if ids_made && !settings::test_only::renewer_off() {
            shared.renew_ahead();
        }
    }
}
