//! Per-process state without thread-local storage.
//!
//! In a shared library, each `thread_local!` access is a call to `__tls_get_addr`, which showed
//! up in the profile of `sno_generate`. A PostgreSQL backend runs SQL on one thread only (pgrx
//! refuses calls into PostgreSQL from any other), so a plain static is already per process.

use std::cell::UnsafeCell;

/// A value in a static, for the one thread of a backend process.
pub(crate) struct BackendLocal<T>(UnsafeCell<T>);

// SAFETY: only the backend's main thread runs extension code (see the module documentation);
// forked processes each get their own copy.
unsafe impl<T: Send> Sync for BackendLocal<T> {}

impl<T> BackendLocal<T> {
    pub const fn new(value: T) -> BackendLocal<T> {
        BackendLocal(UnsafeCell::new(value))
    }

    /// Runs `update` on the value in place (a copy taken and written back cost a stalled
    /// reload of the whole value on every call). `update` must not use this same value again,
    /// and must leave it whole wherever it may raise an ERROR, which unwinds out of it.
    pub fn update<R>(&self, update: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: one thread (see the module documentation), and no re-entry by the contract
        // above, so this is the only reference while it lives.
        update(unsafe { &mut *self.0.get() })
    }

    pub fn replace(&self, value: T) -> T {
        self.update(|current| std::mem::replace(current, value))
    }
}
