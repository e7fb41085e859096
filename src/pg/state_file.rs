//! The generator's high-water mark on disk, so that no restart, clean or after a crash, can
//! repeat an ID even if the clock now reads earlier than before.
//!
//! The file holds a unit through which IDs may have been issued (`wall_hi`), the other
//! timeline's last unit (`wall_safe`) and the regression count (`drifts`, whose low bit is the
//! tick-tock bit). While the server runs, `wall_hi` is a reservation ahead of the clock, written
//! before any ID beyond it is returned (as pgEdge's snowflake logs a look-ahead); at a clean
//! shutdown the exact state replaces it. It is replaced atomically: written to a temporary file,
//! flushed, renamed over the old one.

use crate::generator::Snapshot;
use crate::time::Units;
use std::fs::{self, File};
use std::io::{self, Write};

/// Relative to the data directory, the working directory of every server process.
pub(super) const PATH: &str = "sno_generator.state";
const TEMPORARY_PATH: &str = "sno_generator.state.tmp";

/// What the file records: enough to restore a generator that never repeats an earlier ID.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct HighWater {
    pub wall_hi: Units,
    pub wall_safe: Units,
    pub drifts: u64,
}

impl HighWater {
    pub fn of(snapshot: &Snapshot) -> HighWater {
        HighWater {
            wall_hi: snapshot.wall_hi,
            wall_safe: snapshot.wall_safe,
            drifts: snapshot.drifts,
        }
    }
}

pub(super) fn write(mark: HighWater) -> io::Result<()> {
    let text = format!(
        "# sno generator state; written by the sno extension, do not edit\n\
         version=1\nwall_hi={}\nwall_safe={}\ndrifts={}\n",
        mark.wall_hi.get(),
        mark.wall_safe.get(),
        mark.drifts
    );
    let mut file = File::create(TEMPORARY_PATH)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    fs::rename(TEMPORARY_PATH, PATH)?;
    File::open(".")?.sync_all() // the rename itself
}

/// The recorded mark; `Ok(None)` if there is no file yet (a new cluster).
pub(super) fn read() -> io::Result<Option<HighWater>> {
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

fn parse(text: &str) -> Option<HighWater> {
    let field = |name: &str| -> Option<u64> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .and_then(|value| value.trim().parse().ok())
    };
    if field("version")? != 1 {
        return None;
    }
    Some(HighWater {
        wall_hi: Units::new(field("wall_hi")?)?,
        wall_safe: Units::new(field("wall_safe")?)?,
        drifts: field("drifts")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_writes_and_nothing_else() {
        let text = "# c\nversion=1\nwall_hi=123456\nwall_safe=99\ndrifts=3\n";
        assert_eq!(
            parse(text),
            Some(HighWater {
                wall_hi: Units::new(123456).unwrap(),
                wall_safe: Units::new(99).unwrap(),
                drifts: 3
            })
        );
        assert_eq!(parse("version=2\nwall_hi=1\nwall_safe=1\ndrifts=0\n"), None);
        assert_eq!(parse("version=1\nwall_hi=1\ndrifts=0\n"), None);
        assert_eq!(parse("version=1\nwall_hi=x\nwall_safe=1\ndrifts=0\n"), None);
        assert_eq!(
            parse("version=1\nwall_hi=549755813888\nwall_safe=1\ndrifts=0\n"),
            None
        );
    }
}
