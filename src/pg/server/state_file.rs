//! `sno_generator.state` in the data directory: the generator's high-water marks on disk, so
//! that no restart, clean or after a crash, can repeat an ID even if the clock now reads earlier
//! than before. What it records and its text are `crate::persisted`'s. The file is replaced
//! atomically: written to a temporary file, flushed, renamed over the old one.

use crate::persisted::{
    carry_failed_text, carry_failure, parse, parse_fields, to_text, STATE_FILE,
};
pub(crate) use crate::persisted::{BackfillMark, HighWater, State};
use crate::pg::support::settings;
use std::fs::{self, File};
use std::io::{self, Write};

/// Writes the file in place, for a process that is the only writer (replay, shutdown, the carry
/// across pg_upgrade).
pub(crate) fn write(state: &State) -> io::Result<()> {
    write_in_place(&to_text(state))
}

/// Writes a file that turns generation off because pg_upgrade's carry failed (see
/// `recovery::pg_upgrade_carry`), keeping this data directory's own state in it.
pub(crate) fn write_carry_failed(own: Option<&State>, reason: &str) -> io::Result<()> {
    write_in_place(&carry_failed_text(own, reason))
}

fn write_in_place(text: &str) -> io::Result<()> {
    Aside::write(text, 0)?.put_in_place()?;
    sync_directory()
}

/// A state written and flushed beside the file, under a name of its own (`tag`, from 1), so
/// that writers need not wait for one another's disk writes: the one that then puts its file in
/// place decides (see `persistence`).
pub(crate) fn write_aside(state: &State, tag: u64) -> io::Result<Aside> {
    Aside::write(&to_text(state), tag)
}

pub(crate) struct Aside {
    path: String,
}

const ASIDE_PREFIX: &str = "sno_generator.state.tmp";

impl Aside {
    fn write(text: &str, tag: u64) -> io::Result<Aside> {
        let path = match tag {
            0 => ASIDE_PREFIX.to_string(), // the one writer's, at replay, shutdown or pg_upgrade
            _ => format!("{ASIDE_PREFIX}.{tag}"),
        };
        let aside = Aside { path };
        let written = File::create(&aside.path).and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            synced(file.sync_all())
        });
        written.inspect_err(|_| aside.discard_now()).map(|()| aside)
    }

    /// Replaces the file, atomically; durable once the directory is synced. Where the rename
    /// fails, the file written aside goes.
    pub(crate) fn put_in_place(self) -> io::Result<()> {
        fs::rename(&self.path, STATE_FILE).inspect_err(|_| self.discard_now())
    }

    fn discard_now(&self) {
        let _ = fs::remove_file(&self.path);
    }

    pub(crate) fn discard(self) {
        self.discard_now();
    }
}

/// Makes the last rename in the data directory durable.
pub(crate) fn sync_directory() -> io::Result<()> {
    let directory = File::open(".")?;
    if settings::test_only::state_sync_fails() {
        return synced(Err(io::Error::from_raw_os_error(5))); // EIO
    }
    synced(directory.sync_all())
}

/// An fsync that failed. What it was to make durable may never be, and a later fsync of the same
/// file or directory may report success all the same (the kernel can drop the error with the
/// pages): PostgreSQL stops the server there (`data_sync_retry = off`), sno stops generating
/// (`persistence`).
#[derive(Debug)]
struct SyncFailed(io::Error);

impl std::fmt::Display for SyncFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "fsync failed: {}", self.0)
    }
}

impl std::error::Error for SyncFailed {}

fn synced(result: io::Result<()>) -> io::Result<()> {
    result.map_err(|error| io::Error::new(error.kind(), SyncFailed(error)))
}

/// Whether a write failed in an fsync.
pub(crate) fn is_sync_failure(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<SyncFailed>())
}

/// Removes files written aside by processes that ended before putting them in place.
pub(crate) fn remove_leftovers() {
    let Ok(entries) = fs::read_dir(".") else {
        return;
    };
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(ASIDE_PREFIX)
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The recorded state; `Ok(None)` if there is no file (a new cluster, or one whose file was
/// removed or left behind by `pg_upgrade` or a restore).
pub(crate) fn read() -> io::Result<Option<State>> {
    let Some(text) = read_text()? else {
        return Ok(None);
    };
    if let Some(reason) = carry_failure(&text) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            CarryFailed(reason.to_string()),
        ));
    }
    parse(&text).map(Some).ok_or_else(not_a_state_file)
}

/// Why the file is a "carry failed" mark: the state is in the old cluster's data directory, not
/// in a backup of this one.
#[derive(Debug)]
struct CarryFailed(String);

impl std::fmt::Display for CarryFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pg_upgrade did not carry the old cluster's generator state into it: {}",
            self.0
        )
    }
}

impl std::error::Error for CarryFailed {}

/// Whether `read` failed on a "carry failed" mark.
pub(crate) fn is_carry_failure(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<CarryFailed>())
}

/// This data directory's own state, also where a carry across pg_upgrade failed (the file then
/// keeps the state it had, if any).
pub(crate) fn read_own_state_for_upgrade() -> io::Result<Option<State>> {
    let Some(text) = read_text()? else {
        return Ok(None);
    };
    if carry_failure(&text).is_some() {
        return Ok(parse_fields(&text));
    }
    parse(&text).map(Some).ok_or_else(not_a_state_file)
}

/// The file's text, if there is a file.
fn read_text() -> io::Result<Option<String>> {
    match fs::read_to_string(STATE_FILE) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn not_a_state_file() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{STATE_FILE} is not a valid sno state file"),
    )
}
