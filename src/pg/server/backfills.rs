//! `sno_generate_at`: IDs for chosen times that never repeat any ID this server returned.
//!
//! Backfill IDs carry `sno.backfill_partition`, which no live generator uses, so they cannot
//! meet a `sno_generate` ID; among themselves they are unique through one cursor per meta (see
//! `BackfillCursor` for the design and why). The cursors live in shared memory under the lock,
//! and the state file records a mark an hour of data time past each cursor before any ID beyond
//! the previous mark is returned: a backfill of a year of data writes the file a few thousand
//! times at most, and a crash costs at most one flip of a cursor's timeline.
//!
//! Callers choose the times, so they choose how often the file is written: calls an hour of
//! data time apart would each force a WAL flush and fsyncs. Those writes are spaced
//! ([`BACKFILL_WRITES_PER_SECOND`], server-wide; a caller over the budget sleeps without the
//! lock), and each one also renews the live generator's reservation, so that `sno_generate`,
//! which takes the lock only when its reservation has run out, finds it renewed by the backfill
//! instead of waiting behind backfill writes: it waits for one at most, and only where it would
//! have written the file itself.

use crate::generator::{BackfillCursor, BackfillError, BackfillSlot};
use crate::id::{Parts, Sno};
use crate::pg::server::shared_memory::{Locked, Shared};
use crate::pg::server::state_file::BackfillMark;
use crate::pg::support::errors::{self, time_out_of_range};
use crate::pg::support::server_clock::monotonic_millis;
use crate::pg::support::settings;
use crate::time::Units;
use pgrx::prelude::*;

/// How far past a cursor the state file's mark is set: one hour of data time.
const BACKFILL_LOOKAHEAD_UNITS: u64 = 900_000;

/// At most this many durable writes for backfills per second, server-wide: a backfill in time
/// order needs one per hour of data time (a year of data in about 7 minutes at least), and no
/// caller, whatever times it asks for, makes the server do more than 20 WAL flushes and 60
/// fsyncs a second for them.
pub(crate) const BACKFILL_WRITES_PER_SECOND: i64 = 20;
const BACKFILL_WRITE_SPACING_MS: i64 = 1000 / BACKFILL_WRITES_PER_SECOND;

/// The cursors, one per meta, how many IDs they made since start-up, and when the file was last
/// written for them.
pub(crate) struct Backfills {
    pub cursors: [BackfillCursor; 256],
    pub issued: u64,
    /// `CLOCK_MONOTONIC` milliseconds of the last write for a backfill.
    last_write_ms: Option<i64>,
}

impl Backfills {
    pub const fn new() -> Backfills {
        Backfills {
            cursors: [BackfillCursor::new(); 256],
            issued: 0,
            last_write_ms: None,
        }
    }

    /// How long to wait before the next write for a backfill may start; `None`: now, and the
    /// write is counted.
    fn wait_for_write_slot(&mut self) -> Option<i64> {
        let now = monotonic_millis();
        if let Some(last) = self.last_write_ms {
            let wait = last + BACKFILL_WRITE_SPACING_MS - now;
            if wait > 0 {
                return Some(wait);
            }
        }
        self.last_write_ms = Some(now);
        None
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
        loop {
            if let Some(slot) = self.take_backfill_slot(meta, time) {
                return Sno::from_parts(Parts {
                    time,
                    tick_tock: slot.tick,
                    meta,
                    partition,
                    sequence: slot.sequence,
                });
            }
        }
    }

    /// Takes the cursor's next slot for `time` and records it, or, where that needs a write
    /// and the budget of writes is spent, sleeps until it is not and returns `None` to be called
    /// again (the cursor unchanged).
    fn take_backfill_slot(&self, meta: u8, time: Units) -> Option<BackfillSlot> {
        let mut locked = self.lock();
        let cursor = &mut locked.backfills.cursors[meta as usize];
        let before = *cursor;
        let slot = match cursor.take(time) {
            Ok(slot) => slot,
            Err(error) => raise_backfill_error(meta, time, &error),
        };
        let after = *cursor;
        if !self.recorded_covers(&locked, meta, &after) {
            if let Some(wait_ms) = locked.backfills.wait_for_write_slot() {
                locked.backfills.cursors[meta as usize] = before;
                drop(locked);
                sleep_millis(wait_ms);
                return None;
            }
            if let Err(error) = self.record_cursor(&mut locked, meta, &after) {
                locked.backfills.cursors[meta as usize] = before;
                errors::state_file_not_written(&error);
            }
        }
        locked.backfills.issued += 1;
        Some(slot)
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

    /// Records `after` an hour of data time ahead, with a renewed live reservation. After a flip,
    /// the mark recorded for the timeline before it becomes the other timeline's bound, as it may
    /// have returned IDs up to there (every flip is recorded before its first ID, so marks differ
    /// by one flip at most).
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
        let previous = locked.recorded.backfills[meta as usize].replace(mark);
        let written = self.persist_live(locked);
        if written.is_err() {
            locked.recorded.backfills[meta as usize] = previous;
        }
        written
    }

    /// Forgets `meta`'s backfill cursor, in shared memory and in the state file, so that its next
    /// backfill may start anywhere: `sno_retire_backfill_cursor`. Whether one was in use.
    pub fn retire_backfill_cursor(&self, meta: u8) -> bool {
        let mut locked = self.lock();
        let cursor = locked.backfills.cursors[meta as usize];
        let mark = locked.recorded.backfills[meta as usize];
        if !cursor.used && mark.is_none() {
            return false;
        }
        locked.backfills.cursors[meta as usize] = BackfillCursor::new();
        locked.recorded.backfills[meta as usize] = None;
        if let Err(error) = self.persist_live(&mut locked) {
            locked.backfills.cursors[meta as usize] = cursor;
            locked.recorded.backfills[meta as usize] = mark;
            errors::state_file_not_written(&error);
        }
        drop(locked);
        log!(
            "sno: the backfill cursor of meta {meta} was retired (it reached unit {} in timeline {}, \
             the other timeline unit {}, after {} flips); backfills of meta {meta} start afresh and \
             can repeat its earlier IDs",
            cursor.unit,
            cursor.tick as u8,
            cursor.other_unit.map_or("-".into(), |unit| unit.to_string()),
            cursor.flips
        );
        true
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

/// Sleeps without the lock, then lets a cancel or shutdown through.
fn sleep_millis(millis: i64) {
    // SAFETY: a plain sleep, then PostgreSQL's interrupt check.
    unsafe { pg_sys::pg_usleep(millis.clamp(1, 1000) * 1000) };
    pgrx::check_for_interrupts!();
}

fn raise_backfill_error(meta: u8, time: Units, error: &BackfillError) -> ! {
    match error {
        BackfillError::BothTimelinesUsed { current, other } => {
            errors::backfill_timelines_used(meta, time, *current, *other)
        }
        BackfillError::PoolSpent => errors::backfill_unit_spent(meta, time),
    }
}
