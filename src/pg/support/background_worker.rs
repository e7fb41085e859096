//! sno's long-lived background workers (the renewer, the partition watch, the lease holder): how
//! they are registered, start, wait and end, alike, and how one tells a shutdown from
//! `pg_terminate_backend`.

use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::pg_sys;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Registers the worker `name` that runs `function` of sno's library on a primary, from the end
/// of recovery on. One whose process ends (terminated, or an error) is back within a second.
/// Call from `_PG_init` while preloading.
pub(crate) fn register(name: &str, function: &str) {
    BackgroundWorkerBuilder::new(name)
        .set_library("sno")
        .set_function(function)
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(Duration::from_secs(1)))
        .load();
}

/// The start of a worker's main function: reloads and SIGTERM wake it, and it connects to no
/// database. The connection is only so that `pg_stat_activity` lists it; one to a database
/// would keep that database from being dropped (or, for template1, copied by CREATE DATABASE).
pub(crate) fn start() {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    // At once: connecting takes a while, and a shutdown may come meanwhile.
    note_sigterm_sender();
    BackgroundWorker::connect_worker_to_spi_by_oid(None, None);
}

/// Sleeps for `duration` or until woken, then applies a reload if one came. Ends the worker on
/// a SIGTERM (pg_terminate_backend, or a shutdown): see [`end`].
pub(crate) fn wait(duration: Duration) {
    if !BackgroundWorker::wait_latch(Some(duration)) {
        end();
    }
    if BackgroundWorker::sighup_received() {
        // SAFETY: the documented way for a background worker to apply a reload.
        unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
    }
}

/// What the worker does before it ends, if anything: see [`before_ending`].
static BEFORE_ENDING: OnceLock<fn()> = OnceLock::new();
/// Set once the worker is ending.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Makes [`end`] call `last` first. Call at most once, at start. A SIGTERM that comes while it
/// runs (a shutdown can send two) does not cut it short: it must bound its own waits.
pub(crate) fn before_ending(last: fn()) {
    let _ = BEFORE_ENDING.set(last);
}

/// Ends the worker (see [`end`]) if a SIGTERM came since the last look, unless it is ending
/// already: a SIGTERM then is one more for the same end (a shutdown can send two).
pub(crate) fn end_if_asked() {
    if BackgroundWorker::sigterm_received() && !ENDING.load(Ordering::Acquire) {
        end();
    }
}

/// Ends the worker, after what [`before_ending`] gave: with exit status 1 after
/// `pg_terminate_backend`, so that PostgreSQL starts it again, and 0 at a shutdown, where it
/// would not be started again anyway and status 1 only puts "exited with exit code 1" in the
/// log of every clean stop.
#[allow(unreachable_code)] // proc_exit returns `!` in the bindings of some majors only
pub(crate) fn end() -> ! {
    ENDING.store(true, Ordering::Release);
    if let Some(last) = BEFORE_ENDING.get() {
        last();
    }
    let status = if shutting_down() { 0 } else { 1 };
    // SAFETY: the documented way for a background worker to end.
    unsafe { pg_sys::proc_exit(status) };
    unreachable!("proc_exit does not return")
}

/// Set when the postmaster sends this worker SIGTERM: the server is shutting down.
static POSTMASTER_SENT_SIGTERM: AtomicBool = AtomicBool::new(false);
/// The SIGTERM handler `attach_signal_handlers` installed, which `note_sender_then_handle` calls.
static SIGTERM_HANDLER: OnceLock<libc::sigaction> = OnceLock::new();

/// Makes [`shutting_down`] tell a shutdown from `pg_terminate_backend`: both send SIGTERM, the
/// one from the postmaster, the other from a backend.
fn note_sigterm_sender() {
    // SAFETY: sigaction reads the action in force into `installed`, then installs one that
    // calls it, with its mask and flags.
    unsafe {
        let mut installed: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGTERM, std::ptr::null(), &mut installed);
        if SIGTERM_HANDLER.set(installed).is_err() {
            return;
        }
        let mut noting = installed;
        noting.sa_sigaction = note_sender_then_handle as *const () as usize;
        noting.sa_flags |= libc::SA_SIGINFO;
        libc::sigaction(libc::SIGTERM, &noting, std::ptr::null_mut());
    }
}

/// Whether the SIGTERM that is ending this worker came from the postmaster: a shutdown.
pub(crate) fn shutting_down() -> bool {
    POSTMASTER_SENT_SIGTERM.load(Ordering::Acquire)
}

extern "C" fn note_sender_then_handle(
    signal: c_int,
    info: *mut libc::siginfo_t,
    context: *mut c_void,
) {
    // SAFETY: the kernel's siginfo for this signal; PostmasterPid is set before any child
    // starts. Only an atomic store and a call to the handler PostgreSQL installed follow.
    unsafe {
        if !info.is_null() && (*info).si_pid() == pg_sys::PostmasterPid {
            POSTMASTER_SENT_SIGTERM.store(true, Ordering::Release);
        }
        let Some(handler) = SIGTERM_HANDLER.get() else {
            return;
        };
        match handler.sa_sigaction {
            libc::SIG_DFL | libc::SIG_IGN => {}
            address if handler.sa_flags & libc::SA_SIGINFO != 0 => {
                let handle: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
                    std::mem::transmute(address);
                handle(signal, info, context);
            }
            address => {
                let handle: extern "C" fn(c_int) = std::mem::transmute(address);
                handle(signal);
            }
        }
    }
}
