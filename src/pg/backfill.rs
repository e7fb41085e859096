//! `sno_generate_at`: IDs for chosen times that never repeat any ID this server returned.
//!
//! Backfill IDs carry `sno.backfill_partition`, which no live generator uses, so they cannot
//! meet a `sno_generate` ID; among themselves they are unique through one cursor per meta (see
//! `BackfillCursor` for the design and why). The cursors live in shared memory under the lock,
//! and the state file records a mark an hour of data time past each cursor before any ID beyond
//! the previous mark is returned: a backfill of a year of data writes the file a few thousand
//! times at most, and a crash costs at most one flip of a cursor's timeline.

use super::errors::{self, time_out_of_range};
use super::settings;
use super::shared::{Locked, Shared};
use super::state_file::BackfillMark;
use crate::generator::{BackfillCursor, BackfillError};
use crate::id::{Parts, Sno};
use crate::time::Units;

/// How far past a cursor the state file's mark is set: one hour of data time.
const BACKFILL_LOOKAHEAD_UNITS: u64 = 900_000;

/// The cursors, one per meta, and how many IDs they made since start-up.
pub(super) struct Backfills {
    pub cursors: [BackfillCursor; 256],
    pub issued: u64,
}

impl Backfills {
    pub const fn new() -> Backfills {
        Backfills {
            cursors: [BackfillCursor::new(); 256],
            issued: 0,
        }
    }

    /// Where each used cursor is exactly, for the file written at a clean shutdown.
    pub fn exact_marks(&self) -> Vec<BackfillMark> {
        (0..=u8::MAX)
            .filter_map(|meta| mark_of(meta, &self.cursors[meta as usize], 0))
            .collect()
    }
}

/// The mark recording `cursor`, `ahead` units past its current unit.
fn mark_of(meta: u8, cursor: &BackfillCursor, ahead: u64) -> Option<BackfillMark> {
    cursor.used.then(|| BackfillMark {
        meta,
        unit: (cursor.unit + ahead).min(Units::MAX.get()),
        tick: cursor.tick,
        other_unit: cursor.other_unit,
        flips: cursor.flips,
    })
}

impl Shared {
    /// The next backfill ID of `meta` for the Unix millisecond `unix_ms`.
    pub fn generate_at(&self, meta: u8, unix_ms: i64) -> Sno {
        let time = Units::from_unix_millis(unix_ms).unwrap_or_else(|_| time_out_of_range());
        let partition = self.backfill_partition();
        let mut locked = self.lock();
        let cursor = &mut locked.backfills.cursors[meta as usize];
        let before = *cursor;
        let slot = match cursor.take(time) {
            Ok(slot) => slot,
            Err(error) => raise_backfill_error(meta, time, &error),
        };
        let after = *cursor;
        if !self.recorded_covers(&locked, meta, &after) {
            if let Err(error) = self.record_cursor(&mut locked, meta, &after) {
                locked.backfills.cursors[meta as usize] = before;
                errors::state_file_not_written(&error);
            }
        }
        locked.backfills.issued += 1;
        Sno::from_parts(Parts {
            time,
            tick_tock: slot.tick,
            meta,
            partition,
            sequence: slot.sequence,
        })
    }

    /// The partition for backfill IDs, or an error saying why there is none.
    fn backfill_partition(&self) -> u16 {
        let Some(partition) = settings::backfill_partition() else {
            errors::backfill_partition_unset()
        };
        if partition == self.generator.config().partition {
            errors::backfill_partition_is_live(partition);
        }
        partition
    }

    /// Whether the state file already covers every ID `cursor` has made.
    fn recorded_covers(&self, locked: &Locked, meta: u8, cursor: &BackfillCursor) -> bool {
        locked.backfills_recorded(meta).is_some_and(|mark| {
            mark.flips == cursor.flips && mark.tick == cursor.tick && mark.unit >= cursor.unit
        })
    }

    /// Records `after` an hour of data time ahead. After a flip, the mark recorded for the
    /// timeline before it becomes the other timeline's bound, as it may have returned IDs up to
    /// there (every flip is recorded before its first ID, so marks differ by one flip at most).
    fn record_cursor(
        &self,
        locked: &mut Locked,
        meta: u8,
        after: &BackfillCursor,
    ) -> std::io::Result<()> {
        let mut mark = mark_of(meta, after, BACKFILL_LOOKAHEAD_UNITS).expect("a used cursor");
        if let Some(previous) = locked.backfills_recorded(meta) {
            if previous.flips != after.flips {
                let bound = after.other_unit.unwrap_or(0).max(previous.unit);
                mark.other_unit = Some(bound);
                locked.backfills.cursors[meta as usize].other_unit = Some(bound);
            }
        }
        self.persist_backfill(locked, mark)
    }

    /// The backfill cursors in use, for `sno_backfill_cursors()`.
    pub fn backfill_cursors(&self) -> Vec<(u8, BackfillCursor)> {
        let locked = self.lock();
        (0..=u8::MAX)
            .map(|meta| (meta, locked.backfills.cursors[meta as usize]))
            .filter(|(_, cursor)| cursor.used)
            .collect()
    }

    /// Backfill IDs made since the server started.
    pub fn backfills_issued(&self) -> u64 {
        self.lock().backfills.issued
    }
}

impl Locked {
    fn backfills_recorded(&self, meta: u8) -> Option<BackfillMark> {
        self.recorded.backfills[meta as usize]
    }
}

fn raise_backfill_error(meta: u8, time: Units, error: &BackfillError) -> ! {
    match error {
        BackfillError::BothTimelinesUsed { current, other } => {
            errors::backfill_timelines_used(meta, time, *current, *other)
        }
        BackfillError::PoolSpent => errors::backfill_unit_spent(meta, time),
    }
}
