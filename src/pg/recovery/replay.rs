//! Replaying the generator's state from the WAL (`server::replication` writes it), so that every
//! server replaying it knows how far its primary went.
//!
//! The state file (`state_file`) keeps one data directory from repeating its own IDs, but a
//! physical standby's copy of it comes from its base backup. So each time the primary writes its
//! state file it also writes the same state into the WAL, and redo here makes the replaying
//! server's own state file and generator cover it: a promoted standby starts past anything the old
//! primary could have returned, whatever its clock says.
//!
//! Why a custom WAL resource manager (PostgreSQL 15+), not the alternatives:
//! - a table or a sequence holding the high-water mark is per database, while the generator is
//!   one per server and may serve several databases, and writing it would need a transaction
//!   inside `sno_generate`;
//! - a logical decoding message (`pg_logical_emit_message`) is replayed as nothing on a
//!   physical standby: no code of ours would see it before promotion;
//! - a resource manager's redo runs in the standby's startup process for every record, in WAL
//!   order, and also in archive recovery, point-in-time recovery and crash recovery.
//!
//! The record is inserted and flushed only where the state file is written (never on the per-ID
//! path); the flush lets the WAL senders send it at once. A server without sno stops at the first
//! record, and that is deliberate: a standby that skipped them could be promoted without knowing
//! its primary's IDs. The resource manager's ID must be the same wherever the WAL is read, so it
//! is a constant (167; 128 to 255 are for extensions, 128 for development).
//!
//! How to operate it (preloading on standbys, asynchronous and synchronous standbys, point-in-time
//! recovery, `pg_basebackup`, `pg_rewind`, the ID's registration): docs/replication.md.

use crate::persisted::from_line;
use crate::pg::recovery::partition_mistakes;
use crate::pg::server::replication::{
    NEWEST_READABLE_VERSION, RESOURCE_MANAGER_ID, RESOURCE_MANAGER_NAME, WRITER_FIELD,
    XLOG_SNO_STATE,
};
use crate::pg::server::shared_memory::shared;
use crate::pg::support::errors;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicU64, Ordering};

/// Registers the resource manager; call from `_PG_init` while preloading (PostgreSQL refuses
/// it later), in every server, so that each can replay the records of any other.
pub(crate) fn register_resource_manager() {
    let resource_manager = pg_sys::RmgrData {
        rm_name: RESOURCE_MANAGER_NAME.as_ptr(),
        rm_redo: Some(redo),
        rm_desc: Some(describe),
        rm_identify: Some(identify),
        rm_startup: Some(start_of_replay),
        rm_cleanup: Some(end_of_replay),
        ..Default::default()
    };
    // SAFETY: PostgreSQL copies the struct; the name it points to is static.
    unsafe {
        pg_sys::RegisterCustomRmgr(
            RESOURCE_MANAGER_ID,
            (&raw const resource_manager).cast_mut(),
        )
    };
}

/// How many sno records this replay applied (startup process only), for the log at its end.
static REPLAYED: AtomicU64 = AtomicU64::new(0);

/// The record's main data: the state's one-line text.
///
/// # Safety
/// `record` is the reader state PostgreSQL passes to a resource manager, with a decoded record.
unsafe fn record_text(record: *mut pg_sys::XLogReaderState) -> (u8, String) {
    unsafe {
        let decoded = &*(*record).record;
        let info = decoded.header.xl_info & !(pg_sys::XLR_INFO_MASK as u8);
        if decoded.main_data.is_null() {
            return (info, String::new()); // not one of ours: every record of ours has data
        }
        let data = std::slice::from_raw_parts(
            decoded.main_data.cast::<u8>(),
            decoded.main_data_len as usize,
        );
        (info, String::from_utf8_lossy(data).into_owned())
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: called by PostgreSQL's recovery with a decoded record of ours.
    let (info, text) = unsafe { record_text(record) };
    if info != XLOG_SNO_STATE {
        errors::wal_record_from_newer_sno(&format!("type {info:#04x}"), writer_of(&text));
    }
    let Some(state) = from_line(&text) else {
        match version_of(&text) {
            Some(version) if version > NEWEST_READABLE_VERSION => {
                errors::wal_record_from_newer_sno(&format!("version {version}"), writer_of(&text))
            }
            _ => error!("sno: a WAL record holds no generator state this sno can read: \"{text}\""),
        }
    };
    // Registered only while preloading, as the shared memory is: both exist, or neither.
    if let Some(shared) = shared() {
        shared.cover_replayed(&state);
    }
    REPLAYED.fetch_add(1, Ordering::Relaxed);
}

/// The `version` field of a record's text.
fn version_of(text: &str) -> Option<u64> {
    text.split_whitespace()
        .find_map(|field| field.strip_prefix("version="))?
        .parse()
        .ok()
}

/// The sno release that wrote a record, if it says (0.1.0's records do not).
fn writer_of(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find_map(|field| field.strip_prefix(WRITER_FIELD))
}

/// TEST BUILDS ONLY: writes a record of any type and text, as a newer sno might.
#[cfg(feature = "test-clock")]
#[pg_extern(sql = false)]
fn sno_test_log_wal_record(info: i32, text: &str) {
    use crate::pg::server::replication::register_data;
    // SAFETY: as in `replication::insert_state`; the caller is a superuser (the function is created by a test).
    unsafe {
        pg_sys::XLogBeginInsert();
        register_data(text);
        let end = pg_sys::XLogInsert(RESOURCE_MANAGER_ID, info as u8);
        pg_sys::XLogFlush(end);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn describe(
    buffer: pg_sys::StringInfo,
    record: *mut pg_sys::XLogReaderState,
) {
    // SAFETY: called with a decoded record of ours and a StringInfo to append to.
    let (_, text) = unsafe { record_text(record) };
    let text = CString::new(text).unwrap_or_default();
    unsafe { pg_sys::appendStringInfoString(buffer, text.as_ptr()) };
}

#[pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const c_char {
    match info & !(pg_sys::XLR_INFO_MASK as u8) {
        XLOG_SNO_STATE => c"STATE".as_ptr(),
        _ => std::ptr::null(),
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn start_of_replay() {
    REPLAYED.store(0, Ordering::Relaxed);
}

/// At the end of crash recovery, archive recovery or a standby's promotion.
#[pg_guard]
unsafe extern "C-unwind" fn end_of_replay() {
    partition_mistakes::log_partition_after_archive_recovery();
    if let Some(shared) = shared() {
        shared.log_end_of_replay(REPLAYED.load(Ordering::Relaxed));
    }
}
