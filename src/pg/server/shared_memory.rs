//! The server's one generator, in shared memory.
//!
//! Shared memory exists only with `shared_preload_libraries = 'sno'`: the postmaster reserves it
//! while loading the library and fills it in once (and again after a crash restart, when
//! PostgreSQL re-creates shared memory); every backend inherits the pointer when it is forked.
//! What is kept there is read and written by `persistence` (the state file), `backfill`
//! (`sno_generate_at`) and `reports` (log lines about waits).

use crate::generator::Generator;
use crate::pg::server::backfills::Backfills;
use crate::pg::server::generated_count;
use crate::pg::server::partition_watch_findings::Watch;
use crate::pg::server::persistence::{self, Recorded};
use crate::pg::support::errors;
use crate::pg::support::settings;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering};

const SHMEM_NAME: &std::ffi::CStr = c"sno generator";
const TRANCHE_NAME: &std::ffi::CStr = c"sno";

#[repr(C)]
pub(crate) struct Shared {
    pub generator: Generator,
    /// IDs in units up to this one are covered by the state file (read on every ID).
    pub(crate) reserved_through: AtomicU64,
    /// The regression count (and so tick-tock bit) the state file records.
    pub(crate) persisted_drifts: AtomicU64,
    /// Set while generation is off: the state file could not be read at start-up, or the server
    /// started with settings that cannot work (then `settings_unusable` is set too). No ID is
    /// made until `recover_generation` clears it.
    pub(crate) state_file_unusable: AtomicBool,
    /// Set at start-up when the settings cannot work; the state file is then read only once
    /// they can (`recover_generation`).
    pub(crate) settings_unusable: AtomicBool,
    /// Reservations that could not be written while the previous one still covered callers.
    pub(crate) refresh_failures: AtomicU64,
    pub(crate) refresh_warned_at_ms: AtomicI64,
    pub(crate) overflow_logged_stalls: AtomicU64,
    pub(crate) overflow_logged_at_ms: AtomicI64,
    /// The unit a regression wait was last logged for.
    pub(crate) wait_logged_for: AtomicU64,
    /// What the state file says, and the backfill cursors: only with the lock held.
    locked: UnsafeCell<Locked>,
}

/// The part of [`Shared`] that only the holder of the lock reads or writes.
pub(crate) struct Locked {
    pub recorded: Recorded,
    pub backfills: Backfills,
    /// What the partition watch found on a Citus coordinator.
    pub citus_watch: Watch,
}

// SAFETY: `locked` is only reached through `Shared::lock`, which holds the LWLock.
unsafe impl Sync for Shared {}

static SHARED: AtomicPtr<Shared> = AtomicPtr::new(ptr::null_mut());
/// Serialises writes of the state file, changes of settings and backfills; never waited for
/// on the hot path of `sno_generate`.
static LOCK: AtomicPtr<pg_sys::LWLock> = AtomicPtr::new(ptr::null_mut());

static mut PREVIOUS_REQUEST_HOOK: pg_sys::shmem_request_hook_type = None;
static mut PREVIOUS_STARTUP_HOOK: pg_sys::shmem_startup_hook_type = None;

/// The shared generator, or `None` when sno was not preloaded.
pub(crate) fn shared() -> Option<&'static Shared> {
    // SAFETY: set once per shared-memory lifetime in the postmaster, before any backend forks.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

/// Asks for shared memory; call from `_PG_init` while preloading.
pub(crate) fn install_hooks() {
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
                errors::misaligned_shared_memory();
            }
            memory.write(new_shared());
            if !(*memory).settings_unusable.load(Ordering::Relaxed) {
                persistence::load_at_start(&*memory);
            }
        }
        generated_count::attach();
        let lock = &raw mut (*pg_sys::GetNamedLWLockTranche(TRANCHE_NAME.as_ptr())).lock;
        pg_sys::LWLockRelease(init_lock);
        SHARED.store(memory, Ordering::Release);
        LOCK.store(lock, Ordering::Release);
        if !pg_sys::IsUnderPostmaster {
            // Runs when the postmaster exits, and also (with a non-zero code) when it re-creates
            // shared memory after a crash; re-registered here each time shared memory is made.
            pg_sys::on_shmem_exit(Some(persistence::save_on_shutdown), pg_sys::Datum::from(0));
        }
    }
}

/// PostgreSQL's `AddinShmemInitLock`, which the bindings lack: slot 21 of the main LWLock
/// array (lwlocknames.txt), as pgrx's own shared-memory code uses.
unsafe fn addin_shmem_init_lock() -> *mut pg_sys::LWLock {
    unsafe { &raw mut (*pg_sys::MainLWLockArray.add(21)).lock }
}

/// A generator with the settings in postgresql.conf that has issued nothing; with settings that
/// cannot work, one that issues nothing until they can (see `settings::for_new_shared_memory`).
fn new_shared() -> Shared {
    let (config, unusable) = match settings::for_new_shared_memory() {
        Ok(config) => (config, false),
        Err(unusable) => {
            errors::settings_unusable_at_start(&unusable.reason);
            (unusable.placeholder, true)
        }
    };
    if !settings::partition_is_set() {
        log!(
            "sno: sno.partition is not set; using partition {} derived from the system identifier",
            config.partition
        );
    }
    Shared {
        generator: Generator::new(config),
        reserved_through: AtomicU64::new(0),
        persisted_drifts: AtomicU64::new(0),
        state_file_unusable: AtomicBool::new(unusable),
        settings_unusable: AtomicBool::new(unusable),
        refresh_failures: AtomicU64::new(0),
        refresh_warned_at_ms: AtomicI64::new(i64::MIN),
        overflow_logged_stalls: AtomicU64::new(0),
        overflow_logged_at_ms: AtomicI64::new(i64::MIN),
        wait_logged_for: AtomicU64::new(0),
        locked: UnsafeCell::new(Locked {
            recorded: Recorded::nothing(),
            backfills: Backfills::new(),
            citus_watch: Watch::new(),
        }),
    }
}

/// The lock over [`Locked`], released when dropped (also when an ERROR unwinds through it).
pub(crate) struct LockGuard<'a> {
    lock: *mut pg_sys::LWLock,
    shared: &'a Shared,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: acquired by `lock` or `try_lock`, released once, here.
        unsafe { pg_sys::LWLockRelease(self.lock) }
    }
}

impl std::ops::Deref for LockGuard<'_> {
    type Target = Locked;
    fn deref(&self) -> &Locked {
        // SAFETY: the lock is held.
        unsafe { &*self.shared.locked.get() }
    }
}

impl std::ops::DerefMut for LockGuard<'_> {
    fn deref_mut(&mut self) -> &mut Locked {
        // SAFETY: the lock is held exclusively, and this guard is the only way in.
        unsafe { &mut *self.shared.locked.get() }
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> LockGuard<'_> {
        let lock = LOCK.load(Ordering::Acquire);
        // SAFETY: the tranche's lock lives in shared memory for the server's life.
        unsafe { pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        LockGuard { lock, shared: self }
    }

    pub(crate) fn try_lock(&self) -> Option<LockGuard<'_>> {
        let lock = LOCK.load(Ordering::Acquire);
        // SAFETY: as in `lock`.
        let acquired =
            unsafe { pg_sys::LWLockConditionalAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        // Not `then_some`: it would build (and drop, so release) a guard for a lock not held.
        #[allow(clippy::unnecessary_lazy_evaluations)]
        acquired.then(|| LockGuard { lock, shared: self })
    }

    /// [`Locked`] without the lock: only where no other process can run (start-up before any
    /// backend exists, and the postmaster's exit after they all ended).
    ///
    /// # Safety
    /// No other process may hold or take the lock meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn unlocked(&self) -> &mut Locked {
        unsafe { &mut *self.locked.get() }
    }
}

impl Shared {
    /// Applies this backend's settings after it read its configuration files again, unless a
    /// further reload is already pending here (another backend may have applied newer ones).
    pub fn apply_reloaded_settings(&self) {
        if settings::reload_pending() {
            return;
        }
        let config = match settings::requested() {
            Ok(config) => config,
            Err(error) => {
                let current = self.generator.config();
                warning!(
                    "sno: ignoring new settings: {}; keeping partition {} and sequences {}..{}",
                    settings::pool_message(&error),
                    current.partition,
                    current.sequence_min,
                    current.sequence_max
                );
                return;
            }
        };
        if config != self.generator.config() {
            let _serialized = self.lock();
            self.generator.reconfigure(config);
        }
    }
}
