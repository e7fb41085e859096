//! `sno_generator.state` in the data directory: the generator's high-water marks on disk, so
//! that no restart, clean or after a crash, can repeat an ID even if the clock now reads earlier
//! than before. What it records and its text are `crate::persisted`'s. The file is replaced
//! atomically: written to a temporary file, flushed, renamed over the old one.

use crate::persisted::{
    carry_failed_text, carry_failure, parse, parse_fields, to_text, STATE_FILE,
};
pub(crate) use crate::persisted::{BackfillMark, HighWater, State};
use std::fs::{self, File};
use std::io::{self, Write};

const TEMPORARY_PATH: &str = "sno_generator.state.tmp";

pub(crate) fn write(state: &State) -> io::Result<()> {
    write_text(&to_text(state))
}

/// Writes a file that turns generation off because pg_upgrade's carry failed (see `upgrade`),
/// keeping this data directory's own state in it.
pub(crate) fn write_carry_failed(own: Option<&State>, reason: &str) -> io::Result<()> {
    write_text(&carry_failed_text(own, reason))
}

fn write_text(text: &str) -> io::Result<()> {
    let mut file = File::create(TEMPORARY_PATH)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    fs::rename(TEMPORARY_PATH, STATE_FILE)?;
    File::open(".")?.sync_all() // the rename itself
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
            format!(
                "pg_upgrade did not carry the old cluster's generator state into it: {reason}; \
                 copy the old data directory's {STATE_FILE} over it, or remove it if no clock on this \
                 server is behind the old cluster's newest ID"
            ),
        ));
    }
    parse(&text).map(Some).ok_or_else(not_a_state_file)
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
