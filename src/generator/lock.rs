//! A minimal spin lock that can live in shared memory: one atomic flag, no pointers, no OS
//! handle. It guards only the rare clock-regression path and settings changes, never the hot
//! path, and is held for a few loads and stores at a time.

use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Default)]
#[repr(transparent)]
pub(super) struct SpinLock {
    locked: AtomicBool,
}

pub(super) struct SpinLockGuard<'a> {
    lock: &'a SpinLock,
}

impl SpinLock {
    pub const fn new() -> SpinLock {
        SpinLock {
            locked: AtomicBool::new(false),
        }
    }

    /// The lock if it is free now; never waits.
    pub fn try_lock(&self) -> Option<SpinLockGuard<'_>> {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then(|| SpinLockGuard { lock: self })
    }

    pub fn lock(&self) -> SpinLockGuard<'_> {
        while self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
        }
        SpinLockGuard { lock: self }
    }
}

impl Drop for SpinLockGuard<'_> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
