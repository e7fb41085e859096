//! Keeping the state file ahead of every ID returned.
//!
//! Shared memory does not survive a restart, nor a crash restart, so the generator's position
//! is kept in `sno_generator.state` (see `state_file`): a reservation about 10 s ahead of the
//! clock, written before any ID beyond it is returned, and the exact state at a clean shutdown.
//! Every write also goes into the WAL, for standbys (`replication`), before the file is put in
//! place (and only once the file's part is written beside it).
//!
//! Two kinds of callers write the file: `sno_generate`, about once per 5 s, when its
//! reservation runs low (or at once, after a clock regression), and backfills, when a cursor
//! passes its mark (`backfills`). Neither waits for the other's disk writes: each composes its
//! state under a short lock, from everything recorded or being recorded, writes and flushes it
//! under a name of its own, and puts it in place under the short lock again only if no newer
//! state is there yet. A newer state covers an older one, so whichever lands, every ID either
//! writer returns is covered once the directory is synced.
//!
//! A state file that cannot be read never stops the server: every other extension, the type
//! and decoding keep working, and only `sno_generate` and `sno_generate_at` raise an error,
//! until the file is restored (it is read again at each call) or removed. How to operate it:
//! docs/persistence.md.

use crate::clock::Clock;
use crate::generator::Generator;
use crate::id::Sno;
use crate::persisted::STATE_FILE;
use crate::pg::server::lwlock::{Guard, LwLocked};
use crate::pg::server::replication;
use crate::pg::server::state_file::{self, BackfillMark, HighWater, State};
use crate::pg::support::errors;
use crate::pg::support::log_spacing::first_this_second;
use crate::pg::support::server_clock::ServerClock;
use crate::pg::support::settings;
use crate::pg::support::timestamps::format_unix_millis;
use crate::time::Units;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering};

/// The state file is written this far ahead of the clock (10 s), so it is written about once
/// per 5 s while IDs are being made, by the caller that first finds less than half of it left.
const LOOKAHEAD_UNITS: u64 = 2_500;
const REFRESH_UNITS: u64 = LOOKAHEAD_UNITS / 2;
/// The renewer (`renewer`) renews when less than this is left (7 s): 2 s before a caller would.
pub(crate) const RENEW_AHEAD_UNITS: u64 = REFRESH_UNITS + 500;

/// The backfill marks the file records, by meta.
pub(crate) type Marks = [Option<BackfillMark>; 256];

/// Everything about the state file in shared memory: whether generation is on, the
/// reservation callers check, and what the file records.
pub(crate) struct Persistence {
    /// Set while generation is off: the state file could not be read at start-up, or the server
    /// started with settings that cannot work (then `settings_unusable` is set too). No ID is
    /// made until `Shared::recover_generation` clears it.
    generation_off: AtomicBool,
    /// Set at start-up when the settings cannot work; the state file is then read only once
    /// they can.
    settings_unusable: AtomicBool,
    /// The process in which an fsync of the state file or the data directory failed, 0 if none
    /// did: generation is off until another process writes and syncs the whole file again
    /// (`Shared::recover_generation`).
    sync_failed_in: AtomicI32,
    reservation: Reservation,
    /// Reservations that could not be written while the previous one still covered callers.
    refresh_failures: AtomicU64,
    refresh_warned_at_ms: AtomicI64,
    /// Held by the one `sno_generate` caller writing a reservation: the others that need one
    /// wait for it and then find themselves covered. Never taken by backfills.
    live_writer: LwLocked<()>,
    /// What the file records; held only for moments, never across a disk write.
    recorded: LwLocked<Recorded>,
}

/// The reservation, read on every ID without a lock: IDs of the timeline of
/// `clock_regressions`, in units up to `through`, are covered by the state file. Both change
/// together, only in [`Reservation::publish`], with the `recorded` lock held.
struct Reservation {
    through: AtomicU64,
    clock_regressions: AtomicU64,
}

impl Reservation {
    /// Whether the file covers an ID of this unit and tick-tock bit, made while the generator
    /// had handled `regressions` clock regressions. The bit is checked on its own because a
    /// timeline flip becomes visible (in the generator's word) before its count goes up.
    fn covers(&self, unit: u64, tick_tock: bool, regressions: u64) -> bool {
        let through = self.through.load(Ordering::Acquire);
        covered(
            through,
            self.clock_regressions.load(Ordering::Acquire),
            unit,
            tick_tock,
            regressions,
        )
    }

    fn publish(&self, live: &HighWater) {
        self.through.store(live.through.get(), Ordering::Release);
        self.clock_regressions
            .store(live.clock_regressions, Ordering::Release);
    }

    fn through(&self) -> Units {
        Units::saturating(self.through.load(Ordering::Acquire))
    }

    /// Covers nothing more until the next write: what the file records is no longer all that
    /// must be recorded before an ID is returned.
    fn withdraw(&self) {
        self.through.store(0, Ordering::Release);
    }
}

/// Whether a reservation through `through`, recorded after `recorded` clock regressions, covers
/// an ID of `unit` and `tick_tock` made after `regressions` of them.
fn covered(through: u64, recorded: u64, unit: u64, tick_tock: bool, regressions: u64) -> bool {
    unit <= through && tick_tock == (recorded & 1 == 1) && regressions == recorded
}

/// A state written and synced on this server, its record flushed through `end`: its
/// reservation is published once the synchronous standbys have the record
/// ([`Persistence::publish`]).
#[derive(Copy, Clone)]
pub(crate) struct Written {
    number: u64,
    live: HighWater,
    end: pg_sys::XLogRecPtr,
}

impl Written {
    /// Where the state's WAL record (or a newer one, which covers it) ends.
    pub(crate) fn record_end(&self) -> pg_sys::XLogRecPtr {
        self.end
    }

    fn covers(&self, unit: u64, tick_tock: bool, regressions: u64) -> bool {
        let through = self.live.through.get();
        covered(
            through,
            self.live.clock_regressions,
            unit,
            tick_tock,
            regressions,
        )
    }
}

/// What the state file records, as composed by the newest write begun: it covers every write
/// that completed and every one in flight. Writes are numbered as they begin, so that an older
/// one never replaces a newer one's file.
pub(crate) struct Recorded {
    live: Option<HighWater>,
    backfills: Marks,
    /// The Citus group the partition in use comes from (`sno.partition_source = 'citus'`):
    /// every write records it.
    citus_group: Option<u32>,
    /// The partition leased from the registry (`sno.partition_source = 'registry'`): every
    /// write records it, so that a restart or a promotion asks for it again.
    leased_partition: Option<u16>,
    begun: u64,
    /// The newest state whose record is in the WAL, and where that record ends.
    logged: u64,
    logged_end: pg_sys::XLogRecPtr,
    in_place: u64,
    /// The newest state written and synced, whether or not it is published yet.
    durable: Option<Written>,
    /// The newest state published, or, after a withdrawal, the newest composed before it: no
    /// state up to this number is published (again).
    published: u64,
}

impl Recorded {
    pub(crate) const fn nothing() -> Recorded {
        Recorded {
            live: None,
            backfills: [None; 256],
            citus_group: None,
            leased_partition: None,
            begun: 0,
            logged: 0,
            logged_end: 0,
            in_place: 0,
            durable: None,
            published: 0,
        }
    }

    fn state(&self, live: HighWater) -> State {
        State {
            live,
            backfills: self.backfills.iter().flatten().copied().collect(),
            citus_group: self.citus_group,
            leased_partition: self.leased_partition,
        }
    }

    /// The Citus group the partition in use comes from, if it comes from one.
    pub(crate) fn citus_group(&self) -> Option<u32> {
        self.citus_group
    }

    /// The partition leased from the registry, if one was.
    pub(crate) fn leased_partition(&self) -> Option<u16> {
        self.leased_partition
    }

    /// The whole state recorded, if anything was.
    pub(crate) fn known(&self) -> Option<State> {
        self.live.map(|live| self.state(live))
    }
}

impl Persistence {
    pub(crate) const fn new(generation_off: bool) -> Persistence {
        Persistence {
            generation_off: AtomicBool::new(generation_off),
            settings_unusable: AtomicBool::new(generation_off),
            sync_failed_in: AtomicI32::new(0),
            reservation: Reservation {
                through: AtomicU64::new(0),
                clock_regressions: AtomicU64::new(0),
            },
            refresh_failures: AtomicU64::new(0),
            refresh_warned_at_ms: AtomicI64::new(i64::MIN),
            live_writer: LwLocked::new(()),
            recorded: LwLocked::new(Recorded::nothing()),
        }
    }

    /// Gives the locks, when shared memory is made.
    pub(crate) fn attach(&self, live_writer: *mut pg_sys::LWLock, recorded: *mut pg_sys::LWLock) {
        self.live_writer.attach(live_writer);
        self.recorded.attach(recorded);
    }

    /// Whether generation is off (see `generation_off`).
    #[inline(always)]
    pub(crate) fn generation_off(&self) -> bool {
        self.generation_off.load(Ordering::Acquire)
    }

    pub(crate) fn settings_unusable(&self) -> bool {
        self.settings_unusable.load(Ordering::Acquire)
    }

    /// Turns generation off because the state file cannot be read.
    pub(crate) fn turn_off(&self) {
        self.generation_off.store(true, Ordering::Release);
    }

    /// Turns generation back on: its cause is gone.
    pub(crate) fn turn_on(&self) {
        self.settings_unusable.store(false, Ordering::Release);
        self.generation_off.store(false, Ordering::Release);
    }

    /// The process whose fsync failed, while generation is off for it.
    pub(crate) fn sync_failed_in(&self) -> Option<i32> {
        let pid = self.sync_failed_in.load(Ordering::Acquire);
        (pid != 0).then_some(pid)
    }

    /// A whole file was written and synced in another process after the failed sync: generation
    /// goes on.
    pub(crate) fn sync_recovered(&self) {
        self.sync_failed_in.store(0, Ordering::Release);
        self.generation_off.store(false, Ordering::Release);
    }

    /// The settings work now; generation stays off until the state file is read too.
    pub(crate) fn settings_usable(&self) {
        self.settings_unusable.store(false, Ordering::Release);
    }

    /// The unit through which the state file covers issued IDs.
    pub(crate) fn persisted_through(&self) -> Units {
        self.reservation.through()
    }

    pub(crate) fn refresh_failures(&self) -> u64 {
        self.refresh_failures.load(Ordering::Relaxed)
    }

    /// What the file records, for a moment.
    pub(crate) fn recorded(&self) -> Guard<'_, Recorded> {
        self.recorded.lock()
    }

    /// [`Persistence::recorded`] without the lock: only where no other process can run.
    ///
    /// # Safety
    /// As for [`LwLocked::unlocked`].
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn recorded_unlocked(&self) -> &mut Recorded {
        unsafe { self.recorded.unlocked() }
    }

    /// Takes `state` as what the file records, and publishes its reservation (at start-up, after
    /// the file was read again, and when replay brings a primary's state).
    /// The Citus group in use stays what it was (see [`Persistence::use_citus_group`]); where the
    /// state names another, the reservation waits for a write that records the one in use. So
    /// does the leased partition, once there is one.
    pub(crate) fn restored(&self, recorded: &mut Recorded, state: &State) {
        recorded.live = Some(state.live);
        recorded.backfills = [None; 256];
        for mark in &state.backfills {
            recorded.backfills[mark.meta as usize] = Some(*mark);
        }
        self.reservation.publish(&state.live);
        if state.citus_group != recorded.citus_group {
            self.withdraw(recorded);
        }
        match recorded.leased_partition {
            None => recorded.leased_partition = state.leased_partition,
            Some(in_use) if state.leased_partition != Some(in_use) => self.withdraw(recorded),
            Some(_) => {}
        }
    }

    /// Makes `partition` the leased partition, to be recorded by the next write, before any
    /// further ID is returned.
    pub(crate) fn use_leased_partition(&self, recorded: &mut Recorded, partition: u16) {
        if recorded.leased_partition != Some(partition) {
            recorded.leased_partition = Some(partition);
            self.withdraw(recorded);
        }
    }

    /// Makes `group` the Citus group in use, to be recorded by the next write, before any
    /// further ID is returned.
    pub(crate) fn use_citus_group(&self, recorded: &mut Recorded, group: u32) {
        if recorded.citus_group != Some(group) {
            recorded.citus_group = Some(group);
            self.withdraw(recorded);
        }
    }

    /// Covers nothing more until a state composed from now on is published: the states begun
    /// so far lack something that must be recorded before an ID is returned.
    fn withdraw(&self, recorded: &mut Recorded) {
        recorded.published = recorded.published.max(recorded.begun);
        self.reservation.withdraw();
    }

    /// Makes sure the state file covers `id` before it is returned. Usually a few loads; about
    /// every 5 s one caller writes the next reservation, and after a clock regression the
    /// callers in the new timeline wait until it is recorded.
    #[inline]
    pub(crate) fn ensure_covers(&self, generator: &Generator, id: &Sno) {
        let unit = id.time().get();
        if self.covers(generator, id) {
            if unit + REFRESH_UNITS > self.reservation.through.load(Ordering::Acquire) {
                self.refresh(generator, unit + REFRESH_UNITS);
            }
            return;
        }
        self.cover_uncovered(generator, id);
    }

    /// [`Persistence::ensure_covers`] for an ID no published reservation covers: after a start
    /// or a clock regression. Kept out of line, off the path of every other ID.
    #[cold]
    #[inline(never)]
    fn cover_uncovered(&self, generator: &Generator, id: &Sno) {
        let written = {
            // Cancellable: the caller writing may be stuck on a stalled disk.
            let _writer = self.live_writer.lock_interruptibly();
            if self.covers(generator, id) {
                return;
            }
            match self.durable_covering(generator, id) {
                Some(written) => written,
                None => self.write(generator, |_| {}).unwrap_or_else(|error| {
                    errors::state_file_not_written(&error, state_file::is_sync_failure(&error))
                }),
            }
        };
        self.publish(written);
    }

    /// A state written by another caller, not yet published, that covers `id`: the caller then
    /// waits for its record to reach the synchronous standbys rather than writing another.
    fn durable_covering(&self, generator: &Generator, id: &Sno) -> Option<Written> {
        let recorded = self.recorded.lock();
        recorded.durable.filter(|written| {
            written.number > recorded.published
                && written.covers(
                    id.time().get(),
                    id.tick_tock(),
                    generator.clock_regressions(),
                )
        })
    }

    fn covers(&self, generator: &Generator, id: &Sno) -> bool {
        self.reservation.covers(
            id.time().get(),
            id.tick_tock(),
            generator.clock_regressions(),
        )
    }

    /// Extends a reservation that still covers the caller, unless another caller is at it. A
    /// failure is a WARNING now, while IDs are still covered, rather than an error later. The
    /// caller does not wait for synchronous standbys: the new reservation is published by the
    /// first refresh that finds its record confirmed, or by the first caller it must cover.
    #[cold]
    fn refresh(&self, generator: &Generator, needed_through: u64) {
        let Some(writer) = self.live_writer.try_lock() else {
            return;
        };
        // Someone may have refreshed it while we looked.
        if needed_through <= self.reservation.through.load(Ordering::Acquire) {
            return;
        }
        let unpublished = {
            let recorded = self.recorded.lock();
            recorded.durable.filter(|written| {
                written.number > recorded.published && needed_through <= written.live.through.get()
            })
        };
        let written = match unpublished {
            Some(written) => written,
            None => match self.write(generator, |_| {}) {
                Ok(written) => written,
                Err(error) => {
                    drop(writer);
                    self.warn_refresh_failed(&error);
                    return;
                }
            },
        };
        self.publish_if_confirmed(written);
    }

    /// Publishes the reservation of `written` if the synchronous standbys have its record
    /// already; otherwise leaves it to a later refresh or to the first caller it must cover.
    /// Safe under any lock: it never waits.
    pub(crate) fn publish_if_confirmed(&self, written: Written) {
        if replication::synchronous_standbys_have(written.end) {
            self.publish_confirmed(written);
        }
    }

    /// Publishes the reservation of `written` once the synchronous standbys have its record
    /// (where a commit would wait for them; see `replication`). Called with no lock held: the
    /// wait is a query's, which a cancel ends.
    /// A session whose commits do not wait for standbys does not wait either, but does not
    /// publish an unconfirmed reservation for the others: its caller's ID is covered on this
    /// server, which is all such a session asks for.
    pub(crate) fn publish(&self, written: Written) {
        replication::wait_for_synchronous_standbys(written.end);
        self.publish_if_confirmed(written);
    }

    fn publish_confirmed(&self, written: Written) {
        let mut recorded = self.recorded.lock();
        if written.number > recorded.published {
            recorded.published = written.number;
            self.reservation.publish(&written.live);
        }
    }

    /// The renewer's look: extends the reservation when IDs of its timeline come within
    /// [`RENEW_AHEAD_UNITS`] of its end. Nothing while it is withdrawn or passed (a caller then
    /// writes the one it needs) or in another timeline (after a clock regression, likewise).
    pub(crate) fn renew_ahead(&self, generator: &Generator) {
        let stats = generator.stats();
        let through = self.reservation.through.load(Ordering::Acquire);
        let timeline = self.reservation.clock_regressions.load(Ordering::Acquire);
        let last = stats.last_unit.get();
        if through == 0 || stats.clock_regressions != timeline || last > through {
            return;
        }
        if last + RENEW_AHEAD_UNITS > through {
            self.refresh(generator, last + RENEW_AHEAD_UNITS);
        }
    }

    fn warn_refresh_failed(&self, error: &io::Error) {
        let failures = self.refresh_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if first_this_second(&self.refresh_warned_at_ms) {
            errors::reservation_not_extended(
                error,
                state_file::is_sync_failure(error),
                self.persisted_through(),
                failures,
            );
        }
    }

    /// Puts back a backfill mark that a failed write was to remove, so that later writes record
    /// it again.
    pub(crate) fn put_back_mark(&self, mark: BackfillMark) {
        self.recorded.lock().backfills[mark.meta as usize] = Some(mark);
    }

    /// Serialises changes of the generator's settings with the writes of reservations.
    pub(crate) fn live_writer(&self) -> Guard<'_, ()> {
        self.live_writer.lock()
    }

    /// Writes the state file, with its WAL record flushed before the file is put in place: a
    /// reservation a look-ahead past the clock and every unit the current timeline used, with
    /// the backfill marks as `change` leaves them. Holds no lock across the writes (see the
    /// module documentation). The reservation callers check is not published yet: the caller
    /// passes the result to [`Persistence::publish`] once it holds no lock.
    /// A failed fsync turns generation off (`sync_failed_in`).
    pub(crate) fn write(
        &self,
        generator: &Generator,
        change: impl FnOnce(&mut Marks),
    ) -> io::Result<Written> {
        let written = self.write_and_sync(generator, change);
        if let Err(error) = &written {
            if state_file::is_sync_failure(error) {
                // SAFETY: a plain read of this process's ID.
                let pid = unsafe { pg_sys::MyProcPid };
                self.sync_failed_in.store(pid, Ordering::Release);
                self.turn_off();
            }
        }
        written
    }

    fn write_and_sync(
        &self,
        generator: &Generator,
        change: impl FnOnce(&mut Marks),
    ) -> io::Result<Written> {
        let (state, number) = {
            let mut recorded = self.recorded.lock();
            change(&mut recorded.backfills);
            let live = next_reservation(generator, recorded.live);
            recorded.live = Some(live);
            recorded.begun += 1;
            (recorded.state(live), recorded.begun)
        };
        // The file's part first, beside the file: where it cannot be written (a full or
        // read-only data directory), the call fails without adding a record to the WAL. The
        // record is flushed before the file is put in place, as before.
        let aside = state_file::write_aside(&state, number)?;
        settings::test_only::delay_state_log();
        let end = self.log_in_order(&state, number);
        {
            let mut recorded = self.recorded.lock();
            if number > recorded.in_place {
                // A rename: no data is written while the lock is held.
                aside.put_in_place()?;
                recorded.in_place = number;
            } else {
                aside.discard(); // a newer state, which covers this one, is in place
            }
        }
        settings::test_only::delay_state_write();
        state_file::sync_directory()?;
        let written = Written {
            number,
            live: state.live,
            end,
        };
        let mut recorded = self.recorded.lock();
        if recorded
            .durable
            .is_none_or(|durable| number > durable.number)
        {
            recorded.durable = Some(written);
        }
        Ok(written)
    }

    /// Inserts the record of the state numbered `number` into the WAL in the order the states
    /// were composed, and flushes it. A state composed before one already inserted is covered
    /// by it: its record is left out, so that the states in the WAL never go back, and the flush
    /// waits for the newer one's instead. Under the lock only the insertion, into WAL buffers.
    /// Returns where the flushed record ends.
    fn log_in_order(&self, state: &State, number: u64) -> pg_sys::XLogRecPtr {
        let end = {
            let mut recorded = self.recorded.lock();
            if number > recorded.logged {
                recorded.logged = number;
                recorded.logged_end = replication::insert_state(state);
            }
            recorded.logged_end
        };
        replication::flush(end);
        end
    }
}

/// The reservation to record next: a look-ahead past the clock and the current timeline's last
/// unit, joined with what is recorded already, so that each timeline keeps its own bound
/// (`HighWater::covering`: a reservation made for the other timeline, before a clock
/// regression flipped it, becomes that timeline's bound, since it may have returned IDs up to
/// there). Taking the snapshot waits for a timeline flip in progress, so the regression count
/// it records matches the timeline in the word.
fn next_reservation(generator: &Generator, recorded: Option<HighWater>) -> HighWater {
    let snapshot = generator.snapshot(&ServerClock);
    let now = Units::from_unix_millis(ServerClock.unix_millis()).unwrap_or(Units::MIN);
    let ahead = HighWater {
        through: Units::saturating(snapshot.last_unit.get().max(now.get()) + LOOKAHEAD_UNITS),
        ..HighWater::of(&snapshot)
    };
    recorded.map_or(ahead, |recorded| ahead.covering(&recorded))
}

/// The state file's state, at start-up (and after a crash restart): `Ok(None)` when there is
/// none, which starts a new history. Leftovers of writes that a crash interrupted go.
pub(crate) fn read_at_start() -> io::Result<Option<State>> {
    state_file::remove_leftovers();
    let state = state_file::read()?;
    if state.is_none() {
        log_new_history();
    }
    Ok(state)
}

pub(crate) fn log_new_history() {
    log!(
        "sno: no state file ({STATE_FILE}): starting a new history at {}",
        format_unix_millis(ServerClock.unix_millis())
    );
}

/// Writes a replayed state to the state file, retrying each second until it is written: replay
/// must not go past the record with the file stale (a restartpoint would make the record's state
/// lost for good), and stopping the server over a disk that may come back would be worse. A
/// WARNING says so at the first failure and each minute; a shutdown request or the postmaster's
/// death ends the wait (the record is replayed again at the next start).
pub(crate) fn write_replayed(state: &State) {
    let mut failures = 0u64;
    loop {
        match state_file::write(state) {
            Ok(()) if failures == 0 => return,
            Ok(()) => {
                log!("sno: wrote {STATE_FILE} after {failures} failed attempt(s); replay goes on");
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
        #[cfg(not(pg18_or_later))]
        fn HandleStartupProcInterrupts();
        #[cfg(pg18_or_later)]
        fn ProcessStartupProcInterrupts();
    }
    // SAFETY: a plain sleep; then the startup process's own interrupt handling, which the
    // bindings lack (startup.h), called where replay would call it between records.
    unsafe {
        pg_sys::pg_usleep(duration.as_micros() as _);
        if pg_sys::MyBackendType == pg_sys::BackendType::B_STARTUP {
            #[cfg(not(pg18_or_later))]
            HandleStartupProcInterrupts();
            #[cfg(pg18_or_later)]
            ProcessStartupProcInterrupts();
        }
    }
}
