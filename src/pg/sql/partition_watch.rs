//! The partition watch: on a server that preloads Citus as well as sno, a background worker
//! compares the partitions of the Citus cluster it coordinates every minute
//! (`sno.citus_watch_interval`), as `sno_check_partitions()` does, and when two nodes could make
//! the same ID it says so loudly: a WARNING in the coordinator's log at every check, and the
//! count in `sno_partition_watch().clashes` for an operator's monitoring.
//!
//! Why periodic, from a background worker:
//! - Citus has no hook for an extension when a node is added (`citus_add_node` writes its
//!   catalog directly, so not even a trigger on `pg_dist_node` fires), and a node's sno settings
//!   change by a reload on that node at any time, with the coordinator told nothing; only a
//!   check that runs again notices a node reloaded into another's partition.
//! - A check inside `sno_generate` would put connections to every node on the insert path.
//! - Which database holds the Citus metadata is only known by looking, so the watch lists the
//!   databases (connected to none, it never holds one open) and starts a short-lived worker in
//!   each, one at a time; that worker stops at once unless citus and sno are both installed
//!   there and this server is the coordinator (Citus group 0).
//!
//! What it costs: one short process per database per interval, and on a coordinator one
//! `run_command_on_all_nodes` per interval. Only registered when `citus` is in
//! `shared_preload_libraries`, and only on a primary (it starts once recovery is over).

use crate::pg::server::partition_watch_findings::Findings;
use crate::pg::server::shared_memory::shared;
use crate::pg::sql::partitions::{self, NotChecked};
use crate::pg::support::errors;
use crate::pg::support::settings;
use crate::pg::support::timestamps::timestamptz;
use pgrx::bgworkers::SignalWakeFlags;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::CStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Registers the watch when Citus is preloaded too; call from `_PG_init` while preloading.
pub(crate) fn register() {
    if !citus_preloaded() {
        return;
    }
    BackgroundWorkerBuilder::new("sno partition watch")
        .set_library("sno")
        .set_function("sno_partition_watch_main")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(Duration::from_secs(60)))
        .load();
}

fn citus_preloaded() -> bool {
    // SAFETY: a plain read of a setting that always exists; the string lives as long as it.
    let libraries = unsafe {
        CStr::from_ptr(pg_sys::GetConfigOption(
            c"shared_preload_libraries".as_ptr(),
            false,
            false,
        ))
    };
    libraries.to_string_lossy().split(',').any(|library| {
        let library = library.trim().trim_matches('"');
        let name = library.rsplit('/').next().unwrap_or(library);
        name.strip_suffix(".so").unwrap_or(name) == "citus"
    })
}

/// The watch's main loop: a round of checks, then a wait for the interval (or a reload).
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn sno_partition_watch_main(_argument: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    // No database: pg_database is shared, and a connection would keep its database from being
    // dropped (or, for template1, copied by CREATE DATABASE).
    BackgroundWorker::connect_worker_to_spi_by_oid(None, None);
    loop {
        let interval = settings::citus_watch_interval();
        if interval.is_some() {
            check_every_database();
        }
        // Off: wake for a reload that may turn it on.
        if !BackgroundWorker::wait_latch(Some(interval.unwrap_or(Duration::from_secs(60)))) {
            return;
        }
        if BackgroundWorker::sighup_received() {
            // SAFETY: the documented way for a background worker to apply a reload.
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
        }
    }
}

fn check_every_database() {
    let Some(shared) = shared() else {
        return;
    };
    shared.partition_watch().round = Findings::none();
    for database in BackgroundWorker::transaction(databases) {
        check_in(database);
    }
    let mut watch = shared.partition_watch();
    let mut round = watch.round;
    round.checked_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as i64);
    watch.last = round;
}

/// The databases that accept connections, from the shared catalog.
fn databases() -> Vec<pg_sys::Oid> {
    let mut found = Vec::new();
    // SAFETY: a catalog scan inside the transaction the caller started, as the autovacuum
    // launcher does to list databases.
    unsafe {
        let relation =
            pg_sys::table_open(pg_sys::DatabaseRelationId, pg_sys::AccessShareLock as i32);
        let scan = pg_sys::table_beginscan_catalog(relation, 0, std::ptr::null_mut());
        loop {
            let tuple = pg_sys::heap_getnext(scan, pg_sys::ScanDirection::ForwardScanDirection);
            if tuple.is_null() {
                break;
            }
            let database = &*pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_database>(tuple);
            // -2 marks a database that a DROP DATABASE left half-dropped (16 and later).
            if database.datallowconn && !database.datistemplate && database.datconnlimit != -2 {
                found.push(database.oid);
            }
        }
        pg_sys::table_endscan(scan);
        pg_sys::table_close(relation, pg_sys::AccessShareLock as i32);
    }
    found
}

/// Runs the check in one database, in a worker of its own, and waits for it to end.
fn check_in(database: pg_sys::Oid) {
    let worker = BackgroundWorkerBuilder::new("sno partition watch (database)")
        .set_library("sno")
        .set_function("sno_partition_watch_database_main")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_argument(Some(pg_sys::Datum::from(database.to_u32())))
        // SAFETY: a plain read of this process's ID.
        .set_notify_pid(unsafe { pg_sys::MyProcPid })
        .load_dynamic();
    match worker {
        Ok(worker) => {
            let _ = worker.wait_for_shutdown();
        }
        Err(_) => log!(
            "sno: partition watch: no background worker slot to check database {}; \
             max_worker_processes may be too low",
            database.to_u32()
        ),
    }
}

/// One database's check, in a worker connected to it.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn sno_partition_watch_database_main(argument: pg_sys::Datum) {
    // PostgreSQL's own handlers: a SIGTERM (a shutdown) ends the worker at once, even while it
    // waits for a node, instead of setting a flag that nothing here looks at.
    // SAFETY: the call every background worker makes before it can be signalled.
    unsafe { pg_sys::BackgroundWorkerUnblockSignals() };
    let database = pg_sys::Oid::from(argument.value() as u32);
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(database), None);
    BackgroundWorker::transaction(check_this_database);
}

/// Whether this server coordinates a Citus cluster with sno in this database.
const COORDINATES_CITUS_WITH_SNO: &str = "SELECT \
    EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'sno') \
    AND EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus')";
/// Citus's group 0 is the coordinator's.
const IS_COORDINATOR: &str = "SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_local_group \
    WHERE groupid OPERATOR(pg_catalog.=) 0)";

fn check_this_database() {
    let coordinates = Spi::run("SET LOCAL search_path = pg_catalog, pg_temp")
        .and_then(|()| Spi::get_one::<bool>(COORDINATES_CITUS_WITH_SNO))
        .and_then(|both| match both {
            Some(true) => Spi::get_one::<bool>(IS_COORDINATOR),
            _ => Ok(Some(false)),
        })
        .unwrap_or_else(|error| panic!("sno partition watch: {error}"));
    if coordinates != Some(true) {
        return;
    }
    let name = Spi::get_one::<String>("SELECT pg_catalog.current_database()::text")
        .ok()
        .flatten()
        .unwrap_or_default();
    let result = partitions::find_clashes();
    let Some(shared) = shared() else {
        return;
    };
    let mut watch = shared.partition_watch();
    let round = &mut watch.round;
    round.databases += 1;
    match result {
        Ok((nodes, clashes)) => {
            round.nodes += nodes as i32;
            round.clashes += clashes.len() as i32;
            if let Some(first) = clashes.first() {
                round.note(&format!("database \"{name}\": {first}"));
            }
            drop(watch);
            if !clashes.is_empty() {
                errors::partitions_shared_noticed(&name, &clashes);
            }
        }
        Err(NotChecked::NodeDidNotAnswer { node, answer }) => {
            round.unanswered += 1;
            round.note(&format!(
                "database \"{name}\": {node} did not answer: {answer}"
            ));
            drop(watch);
            errors::partition_watch_unanswered(&name, &node, &answer);
        }
        Err(NotChecked::NoCitus) => {}
    }
}

#[allow(clippy::type_complexity)]
#[pg_extern(sql = false)]
fn sno_partition_watch() -> TableIterator<
    'static,
    (
        name!(watching, bool),
        name!(checked_at, Option<TimestampWithTimeZone>),
        name!(databases, i32),
        name!(nodes, i32),
        name!(clashes, i32),
        name!(unanswered, i32),
        name!(detail, Option<String>),
    ),
> {
    let Some(shared) = shared() else {
        errors::not_preloaded()
    };
    let last = shared.partition_watch().last;
    let watching = citus_preloaded() && settings::citus_watch_interval().is_some();
    TableIterator::once((
        watching,
        (last.checked_at_ms > 0).then(|| timestamptz(last.checked_at_ms)),
        last.databases,
        last.nodes,
        last.clashes,
        last.unanswered,
        last.detail(),
    ))
}
