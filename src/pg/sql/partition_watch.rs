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
//!   each, one at a time; that worker stops at once unless citus is installed there, and
//!   compares only where sno is installed too and this server is the coordinator (group 0).
//!
//! With `sno.partition_source = 'citus'` each database's worker also reads this node's Citus
//! group, on every node, and the watch makes the group the round confirmed the one the
//! partition comes from (`Shared::use_citus_group`): rounds then come every second while the
//! group is unknown, and at least once a minute after, even with the comparison off.
//!
//! What it costs: one short process per database per interval, and on a coordinator one
//! `run_command_on_all_nodes` per interval. Only registered when `citus` is in
//! `shared_preload_libraries`, and only on a primary (it starts once recovery is over).

use crate::pg::server::partition_watch_findings::{Findings, GroupReading};
use crate::pg::server::shared_memory::shared;
use crate::pg::sql::partitions::{self, NotChecked};
use crate::pg::support::background_worker;
use crate::pg::support::errors;
use crate::pg::support::settings;
use crate::pg::support::timestamps::timestamptz;
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::CStr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Registers the watch when Citus is preloaded too; call from `_PG_init` while preloading.
pub(crate) fn register() {
    if !settings::citus_preloaded() {
        return;
    }
    // A watch whose process ends is back within a second: a round missed at most, whatever
    // sno.citus_watch_interval says.
    background_worker::register("sno partition watch", "sno_partition_watch_main");
}

/// The watch's main loop: a round of checks every interval, on a schedule of its own: a
/// latch set by anything else (every `DROP DATABASE` sets every process's) starts no round.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn sno_partition_watch_main(_argument: pg_sys::Datum) {
    // No database: pg_database is shared.
    background_worker::start();
    announce_this_process();
    let mut last_round: Option<Instant> = None;
    loop {
        let interval = round_interval();
        let due = match (interval, last_round) {
            (None, _) => None,
            (Some(_), None) => Some(Instant::now()),
            (Some(interval), Some(last)) => Some(last + interval),
        };
        if due.is_some_and(|due| due <= Instant::now()) {
            last_round = Some(Instant::now());
            check_every_database();
            continue;
        }
        // Off: wake for a reload that may turn it on.
        background_worker::wait(due.map_or(Duration::from_secs(60), |due| {
            due.saturating_duration_since(Instant::now())
        }));
    }
}

/// How long from one round to the next; `None` when there are no rounds. With
/// `sno.partition_source = 'citus'` there are rounds even with the watch off, to notice a group
/// change, and every second while generation waits for the group.
fn round_interval() -> Option<Duration> {
    let watch = settings::citus_watch_interval();
    if !settings::partition_from_citus() {
        return watch;
    }
    let waiting = shared().is_some_and(|shared| shared.citus_group_in_use().is_none());
    if waiting {
        return Some(GROUP_WAIT_INTERVAL);
    }
    Some(watch.map_or(GROUP_CHECK_INTERVAL, |watch| {
        watch.min(GROUP_CHECK_INTERVAL)
    }))
}

const GROUP_WAIT_INTERVAL: Duration = Duration::from_secs(1);
const GROUP_CHECK_INTERVAL: Duration = Duration::from_secs(60);

/// Records this process as the watch until it exits, however it exits.
fn announce_this_process() {
    let Some(shared) = shared() else {
        return;
    };
    // SAFETY: a plain read of this process's ID.
    shared.partition_watch().pid = unsafe { pg_sys::MyProcPid };
    // SAFETY: registers a callback that PostgreSQL runs once, as this process exits.
    unsafe { pg_sys::on_shmem_exit(Some(forget_this_process), pg_sys::Datum::from(0)) };
}

#[pg_guard]
unsafe extern "C-unwind" fn forget_this_process(_code: i32, _argument: pg_sys::Datum) {
    if let Some(shared) = shared() {
        shared.partition_watch().pid = 0;
    }
}

fn check_every_database() {
    let Some(shared) = shared() else {
        return;
    };
    {
        let mut watch = shared.partition_watch();
        watch.round = Findings::none();
        watch.groups = GroupReading::none();
        watch.groups_missed = 0;
    }
    for (database, name) in BackgroundWorker::transaction(databases) {
        check_in(database, &name);
    }
    let (groups, complete) = {
        let mut watch = shared.partition_watch();
        let mut round = watch.round;
        round.checked_at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_millis() as i64);
        watch.last = round;
        (watch.groups, watch.groups_missed == 0)
    };
    // A round that missed a database's group may have missed one that disagrees.
    if settings::partition_from_citus() && complete {
        use_the_group_read(&groups);
    }
}

/// Makes the group the round read the one the partition comes from, or says what it waits for.
fn use_the_group_read(groups: &GroupReading) {
    let Some(shared) = shared() else {
        return;
    };
    let (why_not, refused) = match groups.verdict() {
        Ok((group, database)) => match shared.use_citus_group(group, &database) {
            Ok(()) => (None, None),
            Err(error) => (Some(error.message()), Some(group)),
        },
        Err(why_not) => (Some(why_not), None),
    };
    {
        let mut watch = shared.partition_watch();
        watch.group_refused = refused;
        watch
            .group_unknown
            .replace(why_not.as_deref().unwrap_or(""));
    }
    let Some(why_not) = why_not else {
        return;
    };
    if let Some(group) = shared.citus_group_in_use() {
        errors::citus_group_kept(group, &why_not);
    }
}

/// The databases that accept connections, with their names, from the shared catalog.
fn databases() -> Vec<(pg_sys::Oid, String)> {
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
                let name = CStr::from_ptr(database.datname.data.as_ptr());
                found.push((database.oid, name.to_string_lossy().into_owned()));
            }
        }
        pg_sys::table_endscan(scan);
        pg_sys::table_close(relation, pg_sys::AccessShareLock as i32);
    }
    found
}

/// Runs the check in one database, in a worker of its own, and waits for it to end, ending it
/// at its deadline. A check that ends without recording what it found is counted as failed.
fn check_in(database: pg_sys::Oid, name: &str) {
    let Some(shared) = shared() else {
        return;
    };
    {
        let mut watch = shared.partition_watch();
        watch.database_recorded = false;
        watch.database_group_read = false;
    }
    let why_not = match start_database_check(database) {
        Some(handle) => wait_for_check(handle),
        None => "no background worker slot was free (max_worker_processes may be too low)",
    };
    let mut watch = shared.partition_watch();
    if !watch.database_group_read {
        watch.groups_missed += 1;
    }
    if !watch.database_recorded {
        watch.round.failed += 1;
        watch.round.note(&format!("database \"{name}\": {why_not}"));
        drop(watch);
        errors::partition_watch_check_failed(name, why_not);
    }
}

/// Waits for a database's check to end, terminating it at its deadline; says what went wrong
/// if it ends without recording a finding.
fn wait_for_check(handle: *mut pg_sys::BackgroundWorkerHandle) -> &'static str {
    let started = Instant::now();
    let mut terminated = false;
    loop {
        let mut pid = 0;
        // SAFETY: the handle PostgreSQL gave for the worker, valid until freed below.
        let status = unsafe { pg_sys::GetBackgroundWorkerPid(handle, &mut pid) };
        if status == pg_sys::BgwHandleStatus::BGWH_STOPPED {
            break;
        }
        let left = CHECK_DEADLINE.saturating_sub(started.elapsed());
        if left.is_zero() && !terminated {
            terminated = true;
            // SAFETY: as above; PostgreSQL sends the worker a SIGTERM.
            unsafe { pg_sys::TerminateBackgroundWorker(handle) };
        }
        // The worker's end sets this process's latch (it is the worker's notify_pid).
        let wait = if left.is_zero() {
            Duration::from_millis(100)
        } else {
            left
        };
        if !BackgroundWorker::wait_latch(Some(wait)) {
            // SAFETY: as above; this process is ending, and so does the check.
            unsafe { pg_sys::TerminateBackgroundWorker(handle) };
            // SAFETY: see sno_partition_watch_main: status 1 gets the watch started again.
            unsafe { pg_sys::proc_exit(1) };
        }
    }
    // SAFETY: the handle is not used again.
    unsafe { pg_sys::pfree(handle.cast()) };
    if terminated {
        "its check did not end within its deadline, 4 s"
    } else {
        "its check ended with an error (the server log says which)"
    }
}

/// Registers the worker that checks one database, or None when no slot is free.
fn start_database_check(database: pg_sys::Oid) -> Option<*mut pg_sys::BackgroundWorkerHandle> {
    let builder = BackgroundWorkerBuilder::new("sno partition watch (database)")
        .set_library("sno")
        .set_function("sno_partition_watch_database_main")
        .enable_spi_access()
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_argument(Some(pg_sys::Datum::from(database.to_u32())))
        // SAFETY: a plain read of this process's ID.
        .set_notify_pid(unsafe { pg_sys::MyProcPid });
    let mut worker = pg_sys::BackgroundWorker::from(&builder);
    // From 19, CREATE, ALTER and DROP DATABASE end the check instead of failing while it is
    // connected (before 19 they wait up to 5 s for it, longer than its deadline).
    #[cfg(pg19_or_later)]
    {
        worker.bgw_flags |= pg_sys::BGWORKER_INTERRUPTIBLE as i32;
    }
    let mut handle = std::ptr::null_mut();
    // SAFETY: a complete worker description, and a handle for PostgreSQL to fill in.
    unsafe { pg_sys::RegisterDynamicBackgroundWorker(&mut worker, &mut handle) }.then_some(handle)
}

/// How long a database's check may take in all (the watch then ends it), and each node to accept
/// a connection. Both stay
/// under the 5 s that `DROP DATABASE` and `CREATE DATABASE ... TEMPLATE` wait for a database's
/// other sessions to leave (before 19, nothing asks the check to leave), so the watch never
/// makes them fail; and one node that hangs holds up the round by at most this.
const CHECK_DEADLINE: Duration = Duration::from_secs(4);
const NODE_CONNECT_DEADLINE: Duration = Duration::from_secs(3);

/// One database's check, in a worker connected to it.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn sno_partition_watch_database_main(argument: pg_sys::Datum) {
    end_at_next_interrupt_check();
    // SAFETY: the call every background worker makes before it can be signalled.
    unsafe { pg_sys::BackgroundWorkerUnblockSignals() };
    let database = pg_sys::Oid::from(argument.value() as u32);
    BackgroundWorker::connect_worker_to_spi_by_oid(Some(database), None);
    BackgroundWorker::transaction(|| {
        use_own_settings();
        check_this_database();
    });
    if let Some(shared) = shared() {
        shared.partition_watch().database_recorded = true;
    }
}

/// Makes a SIGTERM (a shutdown, or the watch at the check's deadline) end this worker at its next
/// interrupt check, as it ends a backend (PostgreSQL's `die`): every wait for a node (Citus's
/// connection and result waits), for a lock, and the executor checks, so the deadline still
/// holds. A background worker's default handler raises FATAL inside the signal handler, wherever
/// the worker is (in `malloc`, in libpq, queued on a lock): its exit could then hang, leaving the
/// watch waiting for it and `DROP DATABASE` waiting for its barrier, or leave a lock that no
/// one is woken for again.
fn end_at_next_interrupt_check() {
    // The C function itself: the bindings' `die` is a Rust wrapper, not a signal handler.
    extern "C-unwind" {
        #[cfg(not(pg19_or_later))]
        fn die(signal: std::ffi::c_int);
        #[cfg(pg19_or_later)]
        fn die(signal: std::ffi::c_int, info: *const pg_sys::pg_signal_info);
    }
    // SAFETY: installs PostgreSQL's own handler, before the signals are unblocked.
    #[cfg(not(pg18_or_later))]
    unsafe {
        pg_sys::pqsignal(libc::SIGTERM, Some(die));
    }
    // SAFETY: as above; from 18 the backend's pqsignal is pqsignal_be.
    #[cfg(pg18_or_later)]
    unsafe {
        pg_sys::pqsignal_be(libc::SIGTERM, Some(die));
    }
}

/// The settings the check depends on, set to its own values: `ALTER DATABASE ... SET` applies to
/// this worker too, and a database owner may set these. No timeout of a statement or a lock
/// wait: the watch's deadline (`CHECK_DEADLINE`) bounds the whole check instead.
const OWN_SETTINGS: &str = "SELECT \
    pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true), \
    pg_catalog.set_config('lock_timeout', '0', true), \
    pg_catalog.set_config('statement_timeout', '0', true), \
    pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true), \
    pg_catalog.set_config('citus.node_connection_timeout', $1, true)";

fn use_own_settings() {
    let connect = NODE_CONNECT_DEADLINE.as_millis().to_string();
    // is_local: they last until the transaction's end, which is the worker's.
    Spi::run_with_args(OWN_SETTINGS, &[connect.as_str().into()])
        .unwrap_or_else(|error| panic!("sno partition watch: {error}"));
}

const HAS_EXTENSION: &str = "SELECT EXISTS (SELECT FROM pg_catalog.pg_extension \
    WHERE extname OPERATOR(pg_catalog.=) $1)";
/// This node's Citus group, and whether Citus confirms it: group 0 is the coordinator's, but
/// also every node's that no coordinator has added; Citus itself takes a node for the
/// coordinator when its group is 0 and its metadata lists an active node
/// (`citus_is_coordinator()`), which an added worker never has with group 0.
const LOCAL_GROUP: &str = "SELECT g.groupid::int8, \
    g.groupid OPERATOR(pg_catalog.<>) 0 \
    OR EXISTS (SELECT FROM pg_catalog.pg_dist_node AS n WHERE n.isactive) \
    FROM pg_catalog.pg_dist_local_group AS g";

fn has_extension(name: &str) -> bool {
    Spi::get_one_with_args::<bool>(HAS_EXTENSION, &[name.into()])
        .unwrap_or_else(|error| panic!("sno partition watch: {error}"))
        == Some(true)
}

fn check_this_database() {
    let group_read = || {
        if let Some(shared) = shared() {
            shared.partition_watch().database_group_read = true;
        }
    };
    if !has_extension("citus") {
        group_read();
        return;
    }
    let name = Spi::get_one::<String>("SELECT pg_catalog.current_database()::text")
        .ok()
        .flatten()
        .unwrap_or_default();
    let group = read_local_group();
    if settings::partition_from_citus() {
        if let (Some(group), Some(shared)) = (group, shared()) {
            shared.partition_watch().groups.add(&name, group.0, group.1);
        }
    }
    group_read();
    // Group 0 is the coordinator's (or a node's not yet added, where there is nothing to check).
    if group.is_some_and(|(group, _)| group == 0) && has_extension("sno") {
        check_clashes(&name);
    }
}

/// This node's Citus group in this database, and whether Citus confirms it (`LOCAL_GROUP`).
fn read_local_group() -> Option<(u32, bool)> {
    Spi::connect(|client| {
        let row = client.select(LOCAL_GROUP, Some(1), &[])?.first();
        let group = row.get::<i64>(1)?;
        let confirmed = row.get::<bool>(2)?;
        Ok::<_, pgrx::spi::Error>(group.zip(confirmed))
    })
    .unwrap_or_else(|error| panic!("sno partition watch: {error}"))
    .and_then(|(group, confirmed)| Some((u32::try_from(group).ok()?, confirmed)))
}

fn check_clashes(name: &str) {
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
                errors::partitions_shared_noticed(name, &clashes);
            }
        }
        Err(NotChecked::NodeDidNotAnswer { node, answer }) => {
            round.unanswered += 1;
            round.note(&format!(
                "database \"{name}\": {node} did not answer: {answer}"
            ));
            drop(watch);
            errors::partition_watch_unanswered(name, &node, &answer);
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
        name!(failed, i32),
        name!(detail, Option<String>),
    ),
> {
    let Some(shared) = shared() else {
        errors::not_preloaded("sno_partition_watch")
    };
    let (last, pid) = {
        let watch = shared.partition_watch();
        (watch.last, watch.pid)
    };
    let watching = pid != 0 && settings::citus_watch_interval().is_some();
    TableIterator::once((
        watching,
        (last.checked_at_ms > 0).then(|| timestamptz(last.checked_at_ms)),
        last.databases,
        last.nodes,
        last.clashes,
        last.unanswered,
        last.failed,
        last.detail(),
    ))
}
