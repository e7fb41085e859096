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
