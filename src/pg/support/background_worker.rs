//! sno's long-lived background workers (the renewer, the partition watch): how they are
//! registered, start, wait and end, alike.

use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::pg_sys;
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
    BackgroundWorker::connect_worker_to_spi_by_oid(None, None);
}

/// Sleeps for `duration` or until woken, then applies a reload if one came. Ends the worker on
/// a SIGTERM (pg_terminate_backend, or a shutdown) with exit status 1, so that PostgreSQL starts
/// it again unless the server is shutting down (it never restarts a worker that exits 0).
pub(crate) fn wait(duration: Duration) {
    if !BackgroundWorker::wait_latch(Some(duration)) {
        // SAFETY: the documented way for a background worker to end.
        unsafe { pg_sys::proc_exit(1) };
    }
    if BackgroundWorker::sighup_received() {
        // SAFETY: the documented way for a background worker to apply a reload.
        unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
    }
}
