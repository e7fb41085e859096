//! Keeping the state file ahead of every ID returned, and starting from it.
//!
//! Shared memory does not survive a restart, nor a crash restart, so the generator's position
//! is kept in `sno_generator.state` (see `state_file`): a reservation about 10 s ahead of the
//! clock, written before any ID beyond it is returned, and the exact state at a clean shutdown.
//!
//! A state file that cannot be read never stops the server: every other extension, the type
//! and decoding keep working, and only `sno_generate` and `sno_generate_at` raise an error, until
//! the file is restored (it is read again at each call) or removed.

use crate::clock::Clock;
use crate::generator::Snapshot;
use crate::id::Sno;
use crate::persisted::STATE_FILE;
use crate::pg::server::replication;
use crate::pg::server::shared_memory::{Locked, Shared};
use crate::pg::server::state_file::{self, BackfillMark, HighWater, State};
use crate::pg::support::errors;
use crate::pg::support::log_spacing::first_this_second;
use crate::pg::support::server_clock::ServerClock;
use crate::pg::support::settings;
use crate::time::Units;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;
use std::io;
use std::sync::atomic::Ordering;

/// The state file is written this far ahead of the clock (10 s), so it is written about once
/// per 5 s while IDs are being made, by the caller that first finds less than half of it left.
pub(crate) const LOOKAHEAD_UNITS: u64 = 2_500;
const REFRESH_UNITS: u64 = LOOKAHEAD_UNITS / 2;

/// What the state file says, as last written or read; `live` is `None` before the first write.
pub(crate) struct Recorded {
    pub live: Option<HighWater>,
    pub backfills: [Option<BackfillMark>; 256],
}

impl Recorded {
    pub const fn nothing() -> Recorded {
        Recorded {
            live: None,
            backfills: [None; 256],
        }
    }

    fn state(&self, live: HighWater) -> State {
        State {
            live,
            backfills: self.backfills.iter().flatten().copied().collect(),
        }
    }
}

/// Fills in the generator from the state file at start-up (and after a crash restart). Never
/// stops the server: an unreadable file leaves generation off until it is fixed.
pub(crate) fn load_at_start(shared: &Shared) {
    // SAFETY: the postmaster, before any backend exists.
    let locked = unsafe { shared.unlocked() };
    match state_file::read() {
        Ok(Some(state)) => restore(shared, locked, &state),
        Ok(None) => log_new_history(),
        Err(error) => {
            shared.state_file_unusable.store(true, Ordering::Release);
            log!(
                "sno: could not read {}: {error}; sno_generate and sno_generate_at raise an error \
                 until the file is restored or removed (docs/persistence.md, \"The state file\")",
                STATE_FILE
            );
        }
    }
}

fn log_new_history() {
    let now = ServerClock.unix_millis();
    log!(
        "sno: no state file ({}): starting a new history at {}",
        STATE_FILE,
        crate::pg::support::timestamps::format_unix_millis(now)
    );
}

/// Makes the generator and the backfill cursors continue after what `state` records.
fn restore(shared: &Shared, locked: &mut Locked, state: &State) {
    let config = shared.generator.config();
    let snapshot = Snapshot {
        config,
        sequence: config.sequence_max as u32 + 1,
        now: None,
        wall_hi: state.live.wall_hi,
        wall_safe: state.live.wall_safe,
        drifts: state.live.drifts,
    };
    shared
        .generator
        .restore_in_place(&snapshot)
        .expect("the bounds in force were validated");
    shared
        .reserved_through
        .store(state.live.wall_hi.get(), Ordering::Release);
    shared
        .persisted_drifts
        .store(state.live.drifts, Ordering::Release);
    locked.recorded = Recorded::nothing();
    locked.recorded.live = Some(state.live);
    for mark in &state.backfills {
        locked.recorded.backfills[mark.meta as usize] = Some(*mark);
        locked.backfills.cursors[mark.meta as usize] = mark.cursor();
    }
}

/// Writes the state file, and first the WAL record that gives standbys the same state (`wal`).
fn record(state: &State) -> io::Result<()> {
    replication::log_state(state);
    state_file::write(state)
}

/// At the end of WAL replay: says how far the replayed records carried the generator.
pub(crate) fn log_end_of_replay(records: u64) {
    let Some(shared) = crate::pg::server::shared_memory::shared() else {
        return;
    };
    if records > 0 {
        log!(
            "sno: replayed {records} generator state record(s) from the WAL; {} covers IDs \
             through {} (a clock behind that continues in the other tick-tock timeline)",
            STATE_FILE,
            crate::pg::support::timestamps::format_unix_millis(
                shared.persisted_through().to_unix_millis()
            )
        );
    }
}

/// Writes a replayed state to the state file, retrying each second until it is written: replay
/// must not go past the record with the file stale (a restartpoint would make the record's state
/// lost for good), and stopping the server over a disk that may come back would be worse. A
/// WARNING says so at the first failure and each minute; a shutdown request or the postmaster's
/// death ends the wait (the record is replayed again at the next start).
fn write_replayed(state: &State) {
    let mut failures = 0u64;
    loop {
        match state_file::write(state) {
            Ok(()) if failures == 0 => return,
            Ok(()) => {
                log!(
                    "sno: wrote {} after {failures} failed attempt(s); replay goes on",
                    STATE_FILE
                );
                return;
            }
            Err(error) => {
                if failures.is_multiple_of(60) {
                    errors::replayed_state_not_written(&error, failures + 1);
                }
                failures += 1;
                wait_in_replay(std::time::Duration::from_secs(1));
            }
        }
    }
}

/// Sleeps in the startup process, then handles its interrupts (a reload, a shutdown request,
/// the postmaster's death), as its own loop between records does.
fn wait_in_replay(duration: std::time::Duration) {
    extern "C-unwind" {
        #[cfg(not(feature = "pg18"))]
        fn HandleStartupProcInterrupts();
        #[cfg(feature = "pg18")]
        fn ProcessStartupProcInterrupts();
    }
    // SAFETY: a plain sleep; then the startup process's own interrupt handling, which the
    // bindings lack (startup.h), called where replay would call it between records.
    unsafe {
        pg_sys::pg_usleep(duration.as_micros() as _);
        if pg_sys::MyBackendType == pg_sys::BackendType::B_STARTUP {
            #[cfg(not(feature = "pg18"))]
            HandleStartupProcInterrupts();
            #[cfg(feature = "pg18")]
            ProcessStartupProcInterrupts();
        }
    }
}

/// When the postmaster exits normally (a smart or fast shutdown, and also an immediate one, by
/// which time every backend is gone), the exact state replaces the look-ahead, so that a restart
/// with a clock that did not go back needs no tick-tock. When it re-creates shared memory after a
/// crash (code 1) nothing is written: the look-ahead already on disk covers every ID issued. If
/// a backend died while handling a clock regression, its lock is never released; then the
/// look-ahead stays too, rather than the postmaster waiting forever. A file that could not be
/// read is left as it is, for the operator to restore.
#[pg_guard]
pub(crate) unsafe extern "C-unwind" fn save_on_shutdown(code: c_int, _arg: pg_sys::Datum) {
    let Some(shared) = crate::pg::server::shared_memory::shared() else {
        return;
    };
    if code != 0 && !shared.settings_unusable.load(Ordering::Acquire) {
        // A crash restart: the next shared memory keeps these if the settings reloaded since
        // cannot work (`settings::for_new_shared_memory`).
        settings::remember_working(shared.generator.config());
    }
    if code != 0 || shared.state_file_unusable.load(Ordering::Acquire) {
        return;
    }
    let Some(snapshot) = shared.generator.try_snapshot(&ServerClock) else {
        log!(
            "sno: keeping the look-ahead in {}: a clock regression was being handled",
            STATE_FILE
        );
        return;
    };
    // SAFETY: every backend has exited.
    let locked = unsafe { shared.unlocked() };
    let exact = locked.backfills.exact_marks();
    let state = State {
        live: HighWater::of(&snapshot),
        backfills: exact,
    };
    if let Err(error) = state_file::write(&state) {
        log!("sno: could not write {}: {error}", STATE_FILE);
    }
}

impl Shared {
    /// Raises the error that keeps generation off, unless its cause is gone: settings that could
    /// not work at start-up are read again (this backend's, as of its last reload), then the
    /// state file, so that fixed settings, or a restored (or removed) file, take effect at the
    /// next call, without a restart. The name is the one `generate` calls.
    #[cold]
    pub fn recover_state_file(&self) {
        let mut locked = self.lock();
        if !self.state_file_unusable.load(Ordering::Acquire) {
            return;
        }
        if self.settings_unusable.load(Ordering::Acquire) {
            if let Some(reason) = settings::refused_at_start() {
                errors::settings_refused_at_start(reason);
            }
            let config = settings::requested()
                .unwrap_or_else(|error| errors::settings_unusable(&settings::pool_message(&error)));
            self.generator.reconfigure(config);
            self.settings_unusable.store(false, Ordering::Release);
            log!(
                "sno: the settings can work now: partition {}, sequences {}..{}",
                config.partition,
                config.sequence_min,
                config.sequence_max
            );
        }
        match state_file::read() {
            Ok(Some(state)) => {
                restore(self, &mut locked, &state);
                log!("sno: read {} again; generating IDs", STATE_FILE);
            }
            Ok(None) => log_new_history(),
            Err(error) => errors::state_file_unusable(&error),
        }
        self.state_file_unusable.store(false, Ordering::Release);
    }

    /// The unit through which the state file covers issued IDs.
    pub fn persisted_through(&self) -> Units {
        Units::new(self.reserved_through.load(Ordering::Acquire)).unwrap_or(Units::MAX)
    }

    /// Makes sure the state file covers `id` before it is returned: its unit is within the
    /// reservation and its timeline (tick-tock bit and regression count) is the recorded one.
    /// Usually a few loads; about every 5 s one caller writes the next reservation, and after a
    /// clock regression the callers in the new timeline wait until it is recorded.
    pub fn ensure_persisted(&self, id: &Sno) {
        let unit = id.time().get();
        if self.covers(unit, id.tick_tock()) {
            if unit + REFRESH_UNITS > self.reserved_through.load(Ordering::Acquire) {
                self.refresh_reservation(unit);
            }
            return;
        }
        let mut locked = self.lock();
        if !self.covers(unit, id.tick_tock()) {
            if let Err(error) = self.persist_live(&mut locked) {
                errors::state_file_not_written(&error);
            }
        }
    }

    /// Extends a reservation that still covers the caller, unless another caller is at it. A
    /// failure is a WARNING now, while IDs are still covered, rather than an error later.
    #[cold]
    fn refresh_reservation(&self, unit: u64) {
        let Some(mut locked) = self.try_lock() else {
            return;
        };
        // Someone may have refreshed it while we looked.
        if unit + REFRESH_UNITS > self.reserved_through.load(Ordering::Acquire) {
            if let Err(error) = self.persist_live(&mut locked) {
                drop(locked);
                self.warn_refresh_failed(&error);
            }
        }
    }

    /// Whether the state file already covers an ID of this unit and tick-tock bit. The bit is
    /// checked on its own because a tick-tock flip becomes visible (in the word) before the
    /// regression count goes up.
    fn covers(&self, unit: u64, tick_tock: bool) -> bool {
        let persisted_drifts = self.persisted_drifts.load(Ordering::Acquire);
        unit <= self.reserved_through.load(Ordering::Acquire)
            && tick_tock == (persisted_drifts & 1 == 1)
            && self.generator.clock_regressions() == persisted_drifts
    }

    /// Writes a reservation a look-ahead past the clock and every unit the current timeline
    /// used. Lock held. Taking the snapshot waits for a tick-tock flip in progress, so the
    /// regression count it records matches the timeline in the word.
    ///
    /// Each timeline keeps its own bound. A reservation made for the current timeline carries
    /// over to it; one made for the other timeline (before a clock regression flipped it) becomes
    /// that timeline's bound, since it may have returned IDs up to there. Carrying the other
    /// timeline's reservation over to the current one instead would, after a crash, make the
    /// restored generator wait for the clock to pass a point as far ahead as the clock went back.
    pub(crate) fn persist_live(&self, locked: &mut Locked) -> io::Result<()> {
        let snapshot = self.generator.snapshot(&ServerClock);
        let now = Units::from_unix_millis(ServerClock.unix_millis()).unwrap_or(Units::MIN);
        let mut reserved = snapshot.wall_hi.get().max(now.get()) + LOOKAHEAD_UNITS;
        let mut wall_safe = snapshot.wall_safe.get();
        if let Some(previous) = locked.recorded.live {
            if previous.drifts == snapshot.drifts {
                reserved = reserved.max(previous.wall_hi.get());
            } else if (previous.drifts ^ snapshot.drifts) & 1 == 1 {
                wall_safe = wall_safe.max(previous.wall_hi.get());
            }
        }
        let live = HighWater {
            wall_hi: Units::new(reserved).unwrap_or(Units::MAX),
            wall_safe: Units::new(wall_safe).unwrap_or(Units::MAX),
            drifts: snapshot.drifts,
        };
        record(&locked.recorded.state(live))?;
        locked.recorded.live = Some(live);
        self.reserved_through
            .store(live.wall_hi.get(), Ordering::Release);
        self.persisted_drifts.store(live.drifts, Ordering::Release);
        Ok(())
    }

    /// On a server replaying WAL: makes the generator and the state file cover `state`, a state
    /// the primary recorded (see `wal`), joined with what this server already knew. The file is
    /// written durably before replay goes on, since a restartpoint after this record means it is
    /// never replayed again: a write that fails is retried, and replay waits meanwhile
    /// (`write_replayed`).
    pub(crate) fn cover_replayed(&self, state: &State) {
        let covering = {
            let locked = self.lock();
            let known = locked.recorded.live.map(|live| locked.recorded.state(live));
            let covering = match &known {
                Some(known) => known.covering(state),
                None => state.clone(),
            };
            if known.as_ref() == Some(&covering) {
                return; // replayed again after a restart, or older than what the file says
            }
            covering
        };
        // Without the lock: a retry may take long, and backends must not block on it. Only this
        // process writes the file while the server replays WAL (nothing generates).
        write_replayed(&covering);
        let mut locked = self.lock();
        // With settings that cannot work, generation stays off; it reads this file once they can.
        if !self.settings_unusable.load(Ordering::Acquire)
            && self.state_file_unusable.swap(false, Ordering::AcqRel)
        {
            log!(
                "sno: the primary's generator state from the WAL replaces the unreadable {}",
                STATE_FILE
            );
        }
        restore(self, &mut locked, &covering);
    }

    fn warn_refresh_failed(&self, error: &io::Error) {
        let failures = self.refresh_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if !first_this_second(&self.refresh_warned_at_ms) {
            return;
        }
        errors::reservation_not_extended(error, self.persisted_through(), failures);
    }
}
