//! The generator's high-water marks on disk, so that no restart, clean or after a crash, can
//! repeat an ID even if the clock now reads earlier than before.
//!
//! For the live generator the file holds a unit through which IDs may have been issued
//! (`wall_hi`), the other timeline's last unit (`wall_safe`) and the regression count (`drifts`,
//! whose low bit is the tick-tock bit). While the server runs, `wall_hi` is a reservation ahead
//! of the clock, written before any ID beyond it is returned (as pgEdge's snowflake logs a
//! look-ahead); at a clean shutdown the exact state replaces it. Each backfill cursor (one per
//! meta) has a line of the same kind. The file is replaced atomically: written to a temporary
//! file, flushed, renamed over the old one.

use crate::generator::{BackfillCursor, Snapshot};
use crate::time::Units;
use std::fs::{self, File};
use std::io::{self, Write};

/// Relative to the data directory, the working directory of every server process.
pub(super) const PATH: &str = "sno_generator.state";
const TEMPORARY_PATH: &str = "sno_generator.state.tmp";

/// What the file records for the live generator: enough to restore one that never repeats an
/// earlier ID.
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

/// What the file records for one meta's backfill cursor: its current timeline reaches at most
/// `unit`, the other one at most `other_unit`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct BackfillMark {
    pub meta: u8,
    pub unit: u64,
    pub tick: bool,
    pub other_unit: Option<u64>,
    pub flips: u64,
}

impl BackfillMark {
    pub fn cursor(&self) -> BackfillCursor {
        BackfillCursor::restored(self.unit, self.tick, self.other_unit, self.flips)
    }
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct State {
    pub live: HighWater,
    pub backfills: Vec<BackfillMark>,
}

pub(super) fn write(state: &State) -> io::Result<()> {
    let mut text = format!(
        "# sno generator state; written by the sno extension, do not edit\n\
         version=2\nwall_hi={}\nwall_safe={}\ndrifts={}\n",
        state.live.wall_hi.get(),
        state.live.wall_safe.get(),
        state.live.drifts
    );
    for mark in &state.backfills {
        let other = mark
            .other_unit
            .map_or("-".to_string(), |unit| unit.to_string());
        text += &format!(
            "backfill.{}={},{},{},{}\n",
            mark.meta, mark.unit, mark.tick as u8, other, mark.flips
        );
    }
    let mut file = File::create(TEMPORARY_PATH)?;
    file.write_all(text.as_bytes())?;
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

fn parse(text: &str) -> Option<State> {
    let field = |name: &str| -> Option<&str> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .map(str::trim)
    };
    let number = |name: &str| -> Option<u64> { field(name)?.parse().ok() };
    let version = number("version")?;
    if !(1..=2).contains(&version) {
        return None;
    }
    let live = HighWater {
        wall_hi: Units::new(number("wall_hi")?)?,
        wall_safe: Units::new(number("wall_safe")?)?,
        drifts: number("drifts")?,
    };
    let mut backfills = Vec::new();
    for line in text.lines().filter(|line| line.starts_with("backfill.")) {
        backfills.push(parse_backfill(line)?);
    }
    Some(State { live, backfills })
}

fn parse_backfill(line: &str) -> Option<BackfillMark> {
    let (meta, values) = line.strip_prefix("backfill.")?.split_once('=')?;
    let mut values = values.trim().split(',');
    let mut next = || values.next();
    let unit = Units::new(next()?.parse().ok()?)?.get();
    let tick = match next()? {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    let other_unit = match next()? {
        "-" => None,
        other => Some(Units::new(other.parse().ok()?)?.get()),
    };
    let flips = next()?.parse().ok()?;
    if next().is_some() {
        return None;
    }
    Some(BackfillMark {
        meta: meta.parse().ok()?,
        unit,
        tick,
        other_unit,
        flips,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(wall_hi: u64, wall_safe: u64, drifts: u64) -> HighWater {
        HighWater {
            wall_hi: Units::new(wall_hi).unwrap(),
            wall_safe: Units::new(wall_safe).unwrap(),
            drifts,
        }
    }

    #[test]
    fn parses_what_it_writes_and_nothing_else() {
        let text = "# c\nversion=1\nwall_hi=123456\nwall_safe=99\ndrifts=3\n";
        assert_eq!(
            parse(text),
            Some(State {
                live: live(123456, 99, 3),
                backfills: vec![]
            })
        );
        assert_eq!(parse("version=3\nwall_hi=1\nwall_safe=1\ndrifts=0\n"), None);
        assert_eq!(parse("version=1\nwall_hi=1\ndrifts=0\n"), None);
        assert_eq!(parse("version=1\nwall_hi=x\nwall_safe=1\ndrifts=0\n"), None);
        assert_eq!(
            parse("version=1\nwall_hi=549755813888\nwall_safe=1\ndrifts=0\n"),
            None
        );
        // A file cut short loses its last lines, and so its required fields.
        assert_eq!(parse("# sno generator state; written by the sno ext"), None);
    }

    #[test]
    fn parses_backfill_cursors() {
        let text = "version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\n\
                    backfill.7=500,1,400,3\nbackfill.255=42,0,-,0\n";
        assert_eq!(
            parse(text).unwrap().backfills,
            vec![
                BackfillMark {
                    meta: 7,
                    unit: 500,
                    tick: true,
                    other_unit: Some(400),
                    flips: 3
                },
                BackfillMark {
                    meta: 255,
                    unit: 42,
                    tick: false,
                    other_unit: None,
                    flips: 0
                }
            ]
        );
        for bad in [
            "backfill.7=500,2,400,3",
            "backfill.256=500,1,400,3",
            "backfill.7=500,1,400",
            "backfill.7=500,1,400,3,1",
            "backfill.7=x,1,400,3",
        ] {
            let text = format!("version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\n{bad}\n");
            assert_eq!(parse(&text), None, "{bad}");
        }
    }
}
