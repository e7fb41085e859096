//! The generator's state in the WAL, so that every server replaying it knows how far its primary
//! went: each time the primary writes its state file (`persistence`), it also writes the same
//! state into the WAL. Replay is `recovery::replay`; why a resource manager of its own, and how to
//! operate it: docs/replication.md.

use crate::persisted::to_line;
use crate::pg::server::state_file::State;
use pgrx::pg_sys;
use std::ffi::CStr;

/// sno's resource manager ID (see the module documentation).
pub(crate) const RESOURCE_MANAGER_ID: u8 = 167;
pub(crate) const RESOURCE_MANAGER_NAME: &CStr = c"sno";
/// The one kind of record: the generator's whole state, in the state file's one-line form.
/// Resource managers own the high four bits of a record's info byte.
pub(crate) const XLOG_SNO_STATE: u8 = 0x10;

/// The newest version of the state's text that `persisted::parse` reads. A record of a later
/// version comes from a newer sno, and replay stops at it (`redo`).
pub(crate) const NEWEST_READABLE_VERSION: u64 = 2;
/// The field that names the sno release that wrote a record, so that a server too old to read
/// it can say which release to install. Readers ignore fields they do not know; every later
/// version must keep writing this one.
pub(crate) const WRITER_FIELD: &str = "writer=";

/// Inserts `state` into the WAL, and returns where its record ends (for [`flush`]). Only a
/// server that generates writes it, and only a primary generates.
pub(crate) fn insert_state(state: &State) -> pg_sys::XLogRecPtr {
    let line = format!(
        "{} {WRITER_FIELD}{}",
        to_line(state),
        env!("CARGO_PKG_VERSION")
    );
    // SAFETY: a record with one piece of main data, inserted from a backend of a primary (the
    // callers refuse to generate in recovery), outside any other record's insertion.
    unsafe {
        pg_sys::XLogBeginInsert();
        register_data(&line);
        pg_sys::XLogInsert(RESOURCE_MANAGER_ID, XLOG_SNO_STATE)
    }
}

/// Flushes the WAL through `end`, so that standbys have the records before it as soon as
/// possible and a crash cannot lose them.
pub(crate) fn flush(end: pg_sys::XLogRecPtr) {
    // SAFETY: a plain flush request; one already flushed returns at once.
    unsafe { pg_sys::XLogFlush(end) }
}

/// Before 18 the data is a `char *` (never written to) and, on 15, its length an `int`.
#[cfg(not(pg18_or_later))]
pub(crate) unsafe fn register_data(data: &str) {
    unsafe { pg_sys::XLogRegisterData(data.as_ptr().cast_mut().cast(), data.len() as _) }
}

#[cfg(pg18_or_later)]
pub(crate) unsafe fn register_data(data: &str) {
    unsafe { pg_sys::XLogRegisterData(data.as_ptr().cast(), data.len() as u32) }
}

/// Waits until the synchronous standbys have the WAL through `end`, wherever this session's
/// `synchronous_commit` and the server's `synchronous_standby_names` would make a commit wait
/// for them: an ID covered by a record must not reach a client before a standby that a failover
/// may promote has the record. A plain `SELECT sno_generate(1)` has no commit that would wait.
///
/// The wait polls what the WAL senders publish, outside every lock and without joining the
/// commits' queue, so a cancel, a statement timeout or a shutdown ends it with their own error.
/// It shows as the `SyncRep` wait event, as a commit's does.
pub(crate) fn wait_for_synchronous_standbys(end: pg_sys::XLogRecPtr) {
    let Some(mode) = synchronous_wait_mode() else {
        return;
    };
    let mut poll_ms = 1;
    while !is_confirmed(end, mode) {
        pgrx::check_for_interrupts!();
        // SAFETY: this backend's own latch, outside any LWLock.
        unsafe {
            pg_sys::WaitLatch(
                pg_sys::MyLatch,
                (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as _,
                poll_ms,
                pg_sys::WaitEventIPC::WAIT_EVENT_SYNC_REP,
            );
            pg_sys::ResetLatch(pg_sys::MyLatch);
        }
        poll_ms = (poll_ms * 2).min(SYNCHRONOUS_POLL_MOST_MS);
    }
}

/// Whether the synchronous standbys already have the WAL through `end`, or none is configured:
/// whether a reservation whose record ends there may be published for every session. Without
/// waiting; a session whose commits would not wait (`synchronous_commit = local`) asks as a
/// commit under the default setting (`on`) would wait.
pub(crate) fn synchronous_standbys_have(end: pg_sys::XLogRecPtr) -> bool {
    // SAFETY: a plain read of a setting.
    if unsafe { pg_sys::max_wal_senders } == 0 {
        return true;
    }
    let mode = synchronous_wait_mode().unwrap_or(pg_sys::SYNC_REP_WAIT_FLUSH as usize);
    is_confirmed(end, mode)
}

/// The longest a wait for the synchronous standbys sleeps between two looks: it looks after 1,
/// 2, 4 and then every 8 ms. A standby's round trip takes a millisecond or more, so the first
/// looks find most waits over; one that lasts (a slow or absent standby) costs each waiting
/// session 125 looks a second, not 1,000. Such waits come once per reservation at most (about
/// every 5 s), so the few milliseconds more are nothing beside them.
const SYNCHRONOUS_POLL_MOST_MS: std::ffi::c_long = 8;

/// Which of the WAL senders' positions a commit of this session would wait for, as PostgreSQL's
/// `SyncRepRequested()` and the `synchronous_commit` setting decide; `None`: it would not wait.
fn synchronous_wait_mode() -> Option<usize> {
    use pg_sys::SyncCommitLevel::*;
    // SAFETY: plain reads of this backend's settings.
    let (senders, level) = unsafe { (pg_sys::max_wal_senders, pg_sys::synchronous_commit) };
    if senders == 0 {
        return None;
    }
    match level as pg_sys::SyncCommitLevel::Type {
        SYNCHRONOUS_COMMIT_REMOTE_WRITE => Some(pg_sys::SYNC_REP_WAIT_WRITE as usize),
        SYNCHRONOUS_COMMIT_REMOTE_FLUSH => Some(pg_sys::SYNC_REP_WAIT_FLUSH as usize),
        SYNCHRONOUS_COMMIT_REMOTE_APPLY => Some(pg_sys::SYNC_REP_WAIT_APPLY as usize),
        _ => None,
    }
}

/// Whether the synchronous standbys have reached `end` in `mode`, or none is configured. Until
/// the checkpointer has first looked at `synchronous_standby_names`, the setting decides, as in
/// PostgreSQL's own wait.
fn is_confirmed(end: pg_sys::XLogRecPtr, mode: usize) -> bool {
    // SAFETY: WalSndCtl is in shared memory for the server's life (max_wal_senders > 0 here).
    // The WAL senders change these fields under SyncRepLock; reading them without it sees an
    // older or a newer value, never a torn one (one byte, and an aligned 8-byte word), and an
    // older one only prolongs the wait by a poll.
    unsafe {
        let control = pg_sys::WalSndCtl;
        if control.is_null() {
            return true;
        }
        let status = std::ptr::read_volatile(&(*control).sync_standbys_status) as u32;
        if status & pg_sys::SYNC_STANDBY_INIT == 0 {
            return !standbys_named();
        }
        status & pg_sys::SYNC_STANDBY_DEFINED == 0
            || std::ptr::read_volatile(&(*control).lsn[mode]) >= end
    }
}

/// Whether `synchronous_standby_names` names any standby, in this backend's configuration.
fn standbys_named() -> bool {
    // SAFETY: the setting's string, or null, owned by the GUC machinery.
    unsafe {
        let names = pg_sys::SyncRepStandbyNames;
        !names.is_null() && *names != 0
    }
}
