//! `sno_generator.state` in the data directory: the generator's high-water marks on disk, so
//! that no restart, clean or after a crash, can repeat an ID even if the clock now reads earlier
//! than before. What it records and its text are `crate::persisted`'s. The file is replaced
//! atomically: written to a temporary file, flushed, renamed over the old one.

use crate::persisted::{parse, to_text};
pub(super) use crate::persisted::{BackfillMark, HighWater, State};
use std::fs::{self, File};
use std::io::{self, Write};

/// Relative to the data directory, the working directory of every server process.
pub(super) const PATH: &str = "sno_generator.state";
const TEMPORARY_PATH: &str = "sno_generator.state.tmp";

pub(super) fn write(state: &State) -> io::Result<()> {
    let mut file = File::create(TEMPORARY_PATH)?;
    file.write_all(to_text(state).as_bytes())?;
    file.sync_all()?;
    fs::rename(TEMPORARY_PATH, PATH)?;
    File::open(".")?.sync_all() // the rename itself
}

/// The recorded state; `Ok(None)` if there is no file (a new cluster, or one whose file was
/// removed or left behind by `pg_upgrade` or a restore).
pub(super) fn read() -> io::Result<Option<State>> {
    let text = match fs::read_to_string(PATH) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    parse(&text).map(Some).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{PATH} is not a valid sno state file"),
        )
    })
}
