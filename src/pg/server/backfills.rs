//! `sno_generate_at`: IDs for chosen times that never repeat any ID this server returned.
//!
//! Backfill IDs carry `sno.backfill_partition`, which no live generator uses, so they cannot
//! meet a `sno_generate` ID; among themselves they are unique through one cursor per meta (see
//! `BackfillCursor` for the design and why). The cursors live in shared memory under a lock of
//! their own, and the state file records a mark past each cursor before any ID beyond the
//! previous mark is returned; a crash costs at most one flip of a cursor's timeline.
//!
//! How far past: an hour of data time at first, and twice as far each time a cursor passes its
//! mark within a second of the write that set it, up to 1,024 hours: a backfill then writes the
//! file about as often as its rows need, not as its span of time does (ten years at a row a
//! minute in about a hundred writes instead of 87,600). A cursor left alone for a minute starts
//! again at an hour, so that a mark is never far ahead of a backfill that goes slowly.
//!
//! Callers choose the times, so they choose how often the file is written: calls far apart in
//! data time would each force a WAL flush and fsyncs. Those writes are spaced
//! ([`BACKFILL_WRITES_PER_SECOND`], server-wide; a caller over the budget sleeps without the
//! lock). `sno_generate` never waits for them: they are made without the locks it takes
//! (`persistence`), and each one also renews its reservation. How to operate backfills:
//! docs/backfills.md.

use crate::generator::{BackfillCursor, BackfillError, BackfillSlot, Generator};
use crate::id::{Parts, Sno};
use crate::pg::server::lwlock::{Guard, LwLocked};
use crate::pg::server::persistence::Persistence;
use crate::pg::server::replication;
use crate::pg::server::state_file::{self, BackfillMark};
use crate::pg::support::errors::{self, time_out_of_range};
use crate::pg::support::server_clock::monotonic_millis;
use crate::pg::support::settings;
use crate::time::Units;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// How far past a cursor the state file's mark is set at first: one hour of data time.
const BACKFILL_LOOKAHEAD_UNITS: u64 = 900_000;
/// How far at most: 1,024 hours (42 days and 16 hours) of data time.
const MAX_BACKFILL_LOOKAHEAD_UNITS: u64 = BACKFILL_LOOKAHEAD_UNITS << 10;
/// A cursor whose mark is written again this soon after the last one (wall time) passed it
/// faster than marks an hour apart could follow: its next mark reaches twice as far.
const PASSED_FAST_MS: i64 = 1000;
/// A cursor whose mark was last written this long ago starts again at an hour.
const IDLE_MS: i64 = 60_000;

/// At most this many durable writes for backfills per second, server-wide: a backfill in time
/// order needs one per mark's reach (about a hundred for ten years at a row a minute), and no
/// caller, whatever times it asks for, makes the server do more than 20 WAL flushes and 60
/// fsyncs a second for them.
const BACKFILL_WRITES_PER_SECOND: i64 = 20;
const BACKFILL_WRITE_SPACING_MS: i64 = 1000 / BACKFILL_WRITES_PER_SECOND;

/// The backfill cursors, behind their lock, which is held across their writes of the state
/// file: backfills wait for one another, nothing else waits for them (monitoring reads the count
/// without the lock, and waits for the cursors cancellably).
pub(crate) struct Backfills {
    cursors: LwLocked<Cursors>,
    /// Backfill IDs made since start-up.
    issued: AtomicU64,
}

/// The cursors, one per meta, the marks the state file records for them, how many IDs they
/// made since start-up, and when the file was last written for them.
pub(crate) struct Cursors {
    cursors: [BackfillCursor; 256],
    marks: [Option<BackfillMark>; 256],
    /// How far past each cursor its next mark goes, and when (`CLOCK_MONOTONIC` ms) its mark was
    /// last written: see the module documentation.
    lookahead: [u64; 256],
    marked_at_ms: [Option<i64>; 256],
    /// `CLOCK_MONOTONIC` milliseconds of the last write for a backfill.
    last_write_ms: Option<i64>,
    /// Where the WAL record of each meta's newest mark ends: the IDs under that mark are
    /// returned once the synchronous standbys have it (0: nothing to wait for).
    mark_record_ends: [pg_sys::XLogRecPtr; 256],
}

impl Cursors {
    /// Takes the recorded marks, and continues each cursor after its mark.
    pub(crate) fn restore(&mut self, marks: &[BackfillMark]) {
        self.cursors = [BackfillCursor::new(); 256];
        self.marks = [None; 256];
        self.lookahead = [BACKFILL_LOOKAHEAD_UNITS; 256];
        self.marked_at_ms = [None; 256];
        self.mark_record_ends = [0; 256];
        for mark in marks {
            self.cursors[mark.meta as usize] = mark.cursor();
            self.marks[mark.meta as usize] = Some(*mark);
        }
    }

    /// Where each used cursor is exactly, for the file written at a clean shutdown.
    pub(crate) fn exact_marks(&self) -> Vec<BackfillMark> {
        (0..=u8::MAX)
            .filter_map(|meta| mark_of(meta, &self.cursors[meta as usize], 0))
            .collect()
    }

    /// Whether the state file already covers every ID `cursor` made.
    fn recorded_covers(&self, meta: u8, cursor: &BackfillCursor) -> bool {
        self.marks[meta as usize].is_some_and(|mark| {
            mark.clock_regressions == cursor.clock_regressions()
                && mark.tick_tock == cursor.tick_tock()
                && mark.through >= cursor.last_unit()
        })
    }

    /// How far past `meta`'s cursor the mark about to be written goes, now that it is written
    /// (see the module documentation).
    fn next_lookahead(&mut self, meta: u8) -> u64 {
        let now = monotonic_millis();
        let index = meta as usize;
        let since_last = self.marked_at_ms[index].map(|at| now - at);
        let lookahead = match since_last {
            Some(since) if since < PASSED_FAST_MS => {
                (self.lookahead[index] * 2).min(MAX_BACKFILL_LOOKAHEAD_UNITS)
            }
            Some(since) if since < IDLE_MS => self.lookahead[index],
            _ => BACKFILL_LOOKAHEAD_UNITS,
        };
        self.lookahead[index] = lookahead;
        self.marked_at_ms[index] = Some(now);
        lookahead
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
}

/// The mark recording `cursor`, `ahead` units past its current unit.
fn mark_of(meta: u8, cursor: &BackfillCursor, ahead: u64) -> Option<BackfillMark> {
    cursor.is_used().then(|| BackfillMark {
        meta,
        through: Units::saturating(cursor.last_unit() + ahead).get(),
        tick_tock: cursor.tick_tock(),
        other_through: cursor.other_last_unit(),
        clock_regressions: cursor.clock_regressions(),
    })
}

impl Backfills {
    pub(crate) const fn new() -> Backfills {
        Backfills {
            cursors: LwLocked::new(Cursors {
                cursors: [BackfillCursor::new(); 256],
                marks: [None; 256],
                lookahead: [BACKFILL_LOOKAHEAD_UNITS; 256],
                marked_at_ms: [None; 256],
                last_write_ms: None,
                mark_record_ends: [0; 256],
            }),
            issued: AtomicU64::new(0),
        }
    }

    pub(crate) fn attach(&self, lock: *mut pgrx::pg_sys::LWLock) {
        self.cursors.attach(lock);
    }

    /// The cursors, for a moment (or for a restore).
    pub(crate) fn cursors(&self) -> Guard<'_, Cursors> {
        self.cursors.lock()
    }

    /// [`Backfills::cursors`] without the lock: only where no other process can run.
    ///
    /// # Safety
    /// As for [`LwLocked::unlocked`].
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn cursors_unlocked(&self) -> &mut Cursors {
        unsafe { self.cursors.unlocked() }
    }

    /// The next backfill ID of `meta` for the Unix millisecond `unix_ms`.
    pub(crate) fn generate_at(
        &self,
        persistence: &Persistence,
        generator: &Generator,
        meta: u8,
        unix_ms: i64,
    ) -> Sno {
        let time = Units::from_unix_millis(unix_ms).unwrap_or_else(|_| time_out_of_range());
        let partition = backfill_partition(generator);
        loop {
            if let Some((slot, mark_record_end)) =
                self.take_slot(persistence, generator, meta, time)
            {
                replication::wait_for_synchronous_standbys(mark_record_end);
                return Sno::from_parts(Parts {
                    time,
                    tick_tock: slot.tick_tock,
                    meta,
                    partition,
                    sequence: slot.sequence,
                });
            }
        }
    }

    /// Takes the cursor's next slot for `time` and records it, or, where that needs a write
    /// and the budget of writes is spent, sleeps until it is not and returns `None` to be called
    /// again (the cursor unchanged). With the slot, where the record of the mark covering it
    /// ends, for the caller to wait for once the lock is released.
    fn take_slot(
        &self,
        persistence: &Persistence,
        generator: &Generator,
        meta: u8,
        time: Units,
    ) -> Option<(BackfillSlot, pg_sys::XLogRecPtr)> {
        let mut cursors = self.cursors.lock();
        let before = cursors.cursors[meta as usize];
        let mut after = before;
        let slot = after
            .take(time)
            .unwrap_or_else(|error| raise_backfill_error(meta, time, &error));
        if !cursors.recorded_covers(meta, &after) {
            if let Some(wait_ms) = cursors.wait_for_write_slot() {
                drop(cursors);
                sleep_millis(wait_ms);
                return None;
            }
            let ahead = cursors.next_lookahead(meta);
            let mark = next_mark(meta, &after, cursors.marks[meta as usize], ahead);
            if let Some(other) = mark.other_through {
                after.bound_other_timeline(other);
            }
            let written = persistence
                .write(generator, |marks| marks[meta as usize] = Some(mark))
                .unwrap_or_else(|error| {
                    errors::state_file_not_written(&error, state_file::is_sync_failure(&error))
                });
            cursors.marks[meta as usize] = Some(mark);
            cursors.mark_record_ends[meta as usize] = written.record_end();
            persistence.publish_if_confirmed(written);
        }
        cursors.cursors[meta as usize] = after;
        self.issued.fetch_add(1, Ordering::Relaxed);
        Some((slot, cursors.mark_record_ends[meta as usize]))
    }

    /// Forgets `meta`'s backfill cursor, in shared memory and in the state file, so that its next
    /// backfill may start anywhere: `sno_retire_backfill_cursor`. Whether one was in use.
    pub(crate) fn retire(
        &self,
        persistence: &Persistence,
        generator: &Generator,
        meta: u8,
    ) -> bool {
        let mut cursors = self.cursors.lock();
        let cursor = cursors.cursors[meta as usize];
        if !cursor.is_used() && cursors.marks[meta as usize].is_none() {
            return false;
        }
        match persistence.write(generator, |marks| marks[meta as usize] = None) {
            Ok(written) => persistence.publish_if_confirmed(written),
            Err(error) => {
                // Later writes must record the cursor again: it stays in use.
                if let Some(mark) = cursors.marks[meta as usize].take() {
                    persistence.put_back_mark(mark);
                }
                errors::state_file_not_written(&error, state_file::is_sync_failure(&error));
            }
        }
        cursors.cursors[meta as usize] = BackfillCursor::new();
        cursors.marks[meta as usize] = None;
        cursors.lookahead[meta as usize] = BACKFILL_LOOKAHEAD_UNITS;
        cursors.marked_at_ms[meta as usize] = None;
        drop(cursors);
        log!(
            "sno: the backfill cursor of meta {meta} was retired (it reached unit {} in timeline {}, \
             the other timeline unit {}, after {} clock regressions); backfills of meta {meta} start \
             afresh and can repeat its earlier IDs",
            cursor.last_unit(),
            cursor.tick_tock() as u8,
            cursor
                .other_last_unit()
                .map_or("-".into(), |unit| unit.to_string()),
            cursor.clock_regressions()
        );
        true
    }

    /// The backfill cursors in use, for `sno_backfill_cursors()`: waits for a backfill's write
    /// of the state file, but cancellably.
    pub(crate) fn in_use(&self) -> Vec<(u8, BackfillCursor)> {
        let cursors = self.cursors.lock_interruptibly();
        (0..=u8::MAX)
            .map(|meta| (meta, cursors.cursors[meta as usize]))
            .filter(|(_, cursor)| cursor.is_used())
            .collect()
    }

    /// Backfill IDs made since the server started.
    pub(crate) fn issued(&self) -> u64 {
        self.issued.load(Ordering::Relaxed)
    }
}

/// The mark to record for `cursor`: `ahead` units of data time ahead, joined with the one
/// recorded (`BackfillMark::covering`): after a flip, the mark recorded for the timeline before
/// it becomes the other timeline's bound, as it may have returned IDs up to there (every flip is
/// recorded before its first ID, so marks differ by one flip at most).
fn next_mark(
    meta: u8,
    cursor: &BackfillCursor,
    recorded: Option<BackfillMark>,
    ahead: u64,
) -> BackfillMark {
    let ahead = mark_of(meta, cursor, ahead).expect("a used cursor");
    recorded.map_or(ahead, |recorded| ahead.covering(&recorded))
}

/// The partition for backfill IDs, or an error saying why there is none.
fn backfill_partition(generator: &Generator) -> u16 {
    let Some(partition) = settings::backfill_partition() else {
        errors::backfill_partition_unset()
    };
    if partition == generator.config().partition {
        errors::backfill_partition_is_live(partition);
    }
    partition
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
