//! A value in shared memory behind an LWLock of its own.
//!
//! Each part of the shared state that processes change together has its own lock, so that no
//! part waits for another's disk writes: the generator's reservation is written under one, the
//! backfill cursors under another (see `persistence` and `backfills`).

use pgrx::pg_sys;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A `T` that only the holder of its LWLock reads or writes.
pub(crate) struct LwLocked<T> {
    lock: AtomicPtr<pg_sys::LWLock>,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through `lock` and `try_lock`, which hold the LWLock, or
// `unlocked`, whose callers promise that no other process runs.
unsafe impl<T: Send> Sync for LwLocked<T> {}

impl<T> LwLocked<T> {
    /// A value whose lock is given by [`LwLocked::attach`] before any process uses it.
    pub(crate) const fn new(value: T) -> LwLocked<T> {
        LwLocked {
            lock: AtomicPtr::new(ptr::null_mut()),
            value: UnsafeCell::new(value),
        }
    }

    /// Gives the value its lock, when shared memory is made (before any backend exists).
    pub(crate) fn attach(&self, lock: *mut pg_sys::LWLock) {
        self.lock.store(lock, Ordering::Release);
    }

    /// Waits for the lock, exclusively; released when the guard is dropped (also when an ERROR
    /// unwinds through it).
    pub(crate) fn lock(&self) -> Guard<'_, T> {
        let lock = self.lock.load(Ordering::Acquire);
        // SAFETY: an LWLock of sno's tranche, in shared memory for the server's life.
        unsafe { pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        Guard { lock, value: self }
    }

    /// The lock if it is free now.
    pub(crate) fn try_lock(&self) -> Option<Guard<'_, T>> {
        let lock = self.lock.load(Ordering::Acquire);
        // SAFETY: as in `lock`.
        let acquired =
            unsafe { pg_sys::LWLockConditionalAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE) };
        // Not `then_some`: it would build (and drop, so release) a guard for a lock not held.
        #[allow(clippy::unnecessary_lazy_evaluations)]
        acquired.then(|| Guard { lock, value: self })
    }

    /// Waits for the lock as a query waits, cancellable and ended by a shutdown, for callers
    /// that may wait behind a disk write but must not hold up a cancel (monitoring).
    pub(crate) fn lock_interruptibly(&self) -> Guard<'_, T> {
        loop {
            if let Some(guard) = self.try_lock() {
                return guard;
            }
            pgrx::check_for_interrupts!();
            // SAFETY: a plain sleep; a millisecond is short beside a disk write.
            unsafe { pg_sys::pg_usleep(1000) };
        }
    }

    /// The value without the lock: only where no other process can run (start-up before any
    /// backend exists, and the postmaster's exit after they all ended).
    ///
    /// # Safety
    /// No other process may hold or take the lock meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn unlocked(&self) -> &mut T {
        unsafe { &mut *self.value.get() }
    }
}

/// The held lock of an [`LwLocked`].
pub(crate) struct Guard<'a, T> {
    lock: *mut pg_sys::LWLock,
    value: &'a LwLocked<T>,
}

impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: acquired by `lock` or `try_lock`, released once, here.
        unsafe { pg_sys::LWLockRelease(self.lock) }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the lock is held.
        unsafe { &*self.value.value.get() }
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the lock is held exclusively, and this guard is the only way in.
        unsafe { &mut *self.value.value.get() }
    }
}
