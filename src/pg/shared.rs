//! The server's one generator, in shared memory, and what keeps it safe across restarts.
//!
//! Shared memory exists only with `shared_preload_libraries = 'sno'`: the postmaster reserves it
//! while loading the library and fills it in once (and again after a crash restart, when
//! PostgreSQL re-creates shared memory); every backend inherits the pointer when it is forked.

use super::clock::ServerClock;
use super::errors::{fatal, raise};
use super::generated_count;
use super::settings;
use super::state_file::{self, HighWater};
use crate::clock::Clock;
use crate::generator::{Config, Generator, Snapshot};
use crate::id::Sno;
use crate::time::Units;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;
use std::ptr;
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, Ordering};

/// The state file is written this far ahead of the clock (10 s), so it is written about once
/// per 5 s while IDs are being made, by the caller that first finds less than half of it left.
const LOOKAHEAD_UNITS: u64 = 2_500;
const REFRESH_UNITS: u64 = LOOKAHEAD_UNITS / 2;

const SHMEM_NAME: &std::ffi::CStr = c"sno generator";
const TRANCHE_NAME: &std::ffi::CStr = c"sno";

#[repr(C)]
pub(super) struct Shared {
    pub generator: Generator,
    /// IDs in units up to this one are covered by the state file.
    reserved_through: AtomicU64,
    /// The regression count (and so tick-tock bit) the state file records.
    persisted_drifts: AtomicU64,
    /// `PgReloadTime` of the backend that applied the settings in force.
    settings_reload_time: AtomicI64,
    overflow_logged_stalls: AtomicU64,
    overflow_logged_at_ms: AtomicI64,
}

static SHARED: AtomicPtr<Shared> = AtomicPtr::new(ptr::null_mut());
/// Serialises writes of the state file and changes of settings; never waited for on the hot
/// path.
static LOCK: AtomicPtr<pg_sys::LWLock> = AtomicPtr::new(ptr::null_mut());

static mut PREVIOUS_REQUEST_HOOK: pg_sys::shmem_request_hook_type = None;
static mut PREVIOUS_STARTUP_HOOK: pg_sys::shmem_startup_hook_type = None;

/// The shared generator, or `None` when sno was not preloaded.
pub(super) fn shared() -> Option<&'static Shared> {
    // SAFETY: set once per shared-memory lifetime in the postmaster, before any backend forks.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

/// Asks for shared memory; call from `_PG_init` while preloading.
pub(super) fn install_hooks() {
    // SAFETY: _PG_init runs single-threaded in the postmaster; hooks are chained as usual.
    unsafe {
        PREVIOUS_REQUEST_HOOK = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(request_shared_memory);
        PREVIOUS_STARTUP_HOOK = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(start_up_shared_memory);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn request_shared_memory() {
    unsafe {
        if let Some(previous) = PREVIOUS_REQUEST_HOOK {
            previous();
        }
        pg_sys::RequestAddinShmemSpace(size_of::<Shared>());
        pg_sys::RequestAddinShmemSpace(generated_count::shared_memory_size());
        pg_sys::RequestNamedLWLockTranche(TRANCHE_NAME.as_ptr(), 1);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn start_up_shared_memory() {
    unsafe {
        if let Some(previous) = PREVIOUS_STARTUP_HOOK {
            previous();
        }
        let init_lock = addin_shmem_init_lock();
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let memory = pg_sys::ShmemInitStruct(SHMEM_NAME.as_ptr(), size_of::<Shared>(), &mut found)
            .cast::<Shared>();
        if !found {
            if memory.align_offset(align_of::<Shared>()) != 0 {
                fatal(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    "sno: shared memory is not aligned to a cache line".into(),
                    "PostgreSQL aligns shared memory to cache lines; report this as a bug.",
                );
            }
            memory.write(initial_state());
        }
        generated_count::attach();
        let lock = &raw mut (*pg_sys::GetNamedLWLockTranche(TRANCHE_NAME.as_ptr())).lock;
        pg_sys::LWLockRelease(init_lock);
        SHARED.store(memory, Ordering::Release);
        LOCK.store(lock, Ordering::Release);
        if !pg_sys::IsUnderPostmaster {
            // Runs when the postmaster exits, and also (with a non-zero code) when it re-creates
            // shared memory after a crash; re-registered here each time shared memory is made.
            pg_sys::on_shmem_exit(Some(save_on_shutdown), pg_sys::Datum::from(0));
        }
    }
}

/// PostgreSQL's `AddinShmemInitLock`, which the bindings lack: slot 21 of the main LWLock
/// array (lwlocknames.txt), as pgrx's own shared-memory code uses.
unsafe fn addin_shmem_init_lock() -> *mut pg_sys::LWLock {
    unsafe { &raw mut (*pg_sys::MainLWLockArray.add(21)).lock }
}

/// The generator as the settings and the state file say, or a FATAL error: the server must
/// not start with settings or a state that could repeat IDs.
fn initial_state() -> Shared {
    let config = settings::requested().unwrap_or_else(|error| {
        fatal(
            PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
            settings::pool_message(&error),
            "Fix the sno settings in postgresql.conf.",
        )
    });
    if !settings::partition_is_set() {
        log!(
            "sno: sno.partition is not set; using partition {} derived from the system identifier",
            config.partition
        );
    }
    let generator = Generator::new(config);
    let mark = state_file::read().unwrap_or_else(|error| {
        fatal(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!("sno: could not read {}: {error}", state_file::PATH),
            "The file protects against repeating IDs after a restart. Restore it, or, only if no \
             clock has ever gone back past the newest ID, remove it.",
        )
    });
    if let Some(mark) = mark {
        restore(&generator, config, mark);
    }
    Shared {
        generator,
        reserved_through: AtomicU64::new(mark.map_or(0, |m| m.wall_hi.get())),
        persisted_drifts: AtomicU64::new(mark.map_or(0, |m| m.drifts)),
        settings_reload_time: AtomicI64::new(settings::reload_time()),
        overflow_logged_stalls: AtomicU64::new(0),
        overflow_logged_at_ms: AtomicI64::new(0),
    }
}

fn restore(generator: &Generator, config: Config, mark: HighWater) {
    let snapshot = Snapshot {
        config,
        sequence: config.sequence_max as u32 + 1,
        now: None,
        wall_hi: mark.wall_hi,
        wall_safe: mark.wall_safe,
        drifts: mark.drifts,
    };
    generator
        .restore_in_place(&snapshot)
        .expect("bounds were validated above");
}

/// When the postmaster exits normally (a smart or fast shutdown, and also an immediate one, by
/// which time every backend is gone), the exact state replaces the look-ahead, so that a restart
/// with a clock that did not go back needs no tick-tock. When it re-creates shared memory after a
/// crash (code 1) nothing is written: the look-ahead already on disk covers every ID issued. If
/// a backend died while handling a clock regression, its lock is never released; then the
/// look-ahead stays too, rather than the postmaster waiting forever.
#[pg_guard]
unsafe extern "C-unwind" fn save_on_shutdown(code: c_int, _arg: pg_sys::Datum) {
    let Some(shared) = shared() else { return };
    if code != 0 {
        return;
    }
    let Some(snapshot) = shared.generator.try_snapshot(&ServerClock) else {
        log!(
            "sno: keeping the look-ahead in {}: a clock regression was being handled",
            state_file::PATH
        );
        return;
    };
    if let Err(error) = state_file::write(HighWater::of(&snapshot)) {
        log!("sno: could not write {}: {error}", state_file::PATH);
    }
}

struct LockGuard(*mut pg_sys::LWLock);

impl Drop for LockGuard {
    fn drop(&mut self) {
        // SAFETY: acquired by `lock` or `try_lock`, released once, here (an ERROR raised while it
        // is held unwinds through this drop).
        unsafe { pg_sys::LWLockRelease(self.0) }
    }
}

fn lock() -> LockGuard {
    let lock = LOCK.load(Ordering::Acquire);
    // SAFETY: the tranche's lock lives in shared memory for the server's life.
    unsafe { pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
    LockGuard(lock)
}

fn try_lock() -> Option<LockGuard> {
    let lock = LOCK.load(Ordering::Acquire);
    // SAFETY: as in `lock`.
    unsafe { pg_sys::LWLockConditionalAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) }
        .then(|| LockGuard(lock))
}

impl Shared {
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
                if let Some(_locked) = try_lock() {
                    // Someone may have refreshed it while we looked. Best effort: if the write
                    // fails, the reservation still holds, and the caller that runs out of it
                    // reports the error.
                    if unit + REFRESH_UNITS > self.reserved_through.load(Ordering::Acquire) {
                        let _ = self.persist();
                    }
                }
            }
            return;
        }
        let _locked = lock();
        if !self.covers(unit, id.tick_tock()) {
            if let Err(error) = self.persist() {
                raise_io_error(error);
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

    /// Writes a reservation a look-ahead past the clock and every unit used so far, never
    /// behind the previous one. Lock held. Taking the snapshot waits for a tick-tock flip in
    /// progress, so the regression count it records matches the timeline in the word.
    fn persist(&self) -> std::io::Result<()> {
        let snapshot = self.generator.snapshot(&ServerClock);
        let now = Units::from_unix_millis(ServerClock.unix_millis()).unwrap_or(Units::MIN);
        let ahead = snapshot.wall_hi.get().max(now.get()) + LOOKAHEAD_UNITS;
        let reserved = ahead.max(self.reserved_through.load(Ordering::Acquire));
        let wall_hi = Units::new(reserved).unwrap_or(Units::MAX);
        state_file::write(HighWater {
            wall_hi,
            ..HighWater::of(&snapshot)
        })?;
        self.reserved_through
            .store(wall_hi.get(), Ordering::Release);
        self.persisted_drifts
            .store(snapshot.drifts, Ordering::Release);
        Ok(())
    }

    /// Applies this backend's settings after it reloaded its configuration, unless a newer
    /// reload in another backend already applied others.
    pub fn apply_reloaded_settings(&self) {
        let config = match settings::requested() {
            Ok(config) => config,
            Err(error) => {
                warning!(
                    "sno: ignoring new settings: {}; keeping partition {} and sequences {}..{}",
                    settings::pool_message(&error),
                    self.generator.config().partition,
                    self.generator.config().sequence_min,
                    self.generator.config().sequence_max
                );
                return;
            }
        };
        if config == self.generator.config() {
            // Remember the newer reload anyway, so that no process still holding older values
            // can count as newer than it.
            self.settings_reload_time
                .fetch_max(settings::reload_time(), Ordering::AcqRel);
            return;
        }
        let _locked = lock();
        let reload_time = settings::reload_time();
        if reload_time > self.settings_reload_time.load(Ordering::Acquire) {
            self.generator.reconfigure(config);
            self.settings_reload_time
                .store(reload_time, Ordering::Release);
        }
    }

    /// While callers stall on a spent pool, says so in the server log at most once a second.
    pub fn log_overflow_at_most_each_second(&self) {
        let stalls = self.generator.overflow_stalls();
        let logged = self.overflow_logged_stalls.load(Ordering::Relaxed);
        if stalls == logged {
            return;
        }
        let now_ms = ServerClock.unix_millis();
        let last_ms = self.overflow_logged_at_ms.load(Ordering::Relaxed);
        if now_ms - last_ms < 1000
            || self
                .overflow_logged_at_ms
                .compare_exchange(last_ms, now_ms, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
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
}

/// 58030: the state file could not be written, so the ID cannot be guaranteed unique after a
/// crash and is not returned.
fn raise_io_error(error: std::io::Error) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!("sno: could not write {}: {error}", state_file::PATH),
        None,
    )
}
