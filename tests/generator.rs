//! The generator (SPEC §3) with a scripted clock, and under real concurrency.

use proptest::prelude::*;
use sno::generator::{BackfillCursor, BackfillError, BackfillSlot, BACKFILL_POOL};
use sno::{
    generator::MAX_RUN, Clock, Config, Deadline, GenerateError, Generator, Lease, ManualClock,
    RealtimeClock, Sno, Units,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// 2024-05-01T00:00:00Z, on a unit boundary.
const T: i64 = 1_714_521_600_000;

fn unit(unix_ms: i64) -> Units {
    Units::from_unix_millis(unix_ms).unwrap()
}

fn generator(partition: u16, sequence_min: u16, sequence_max: u16) -> Generator {
    Generator::new(
        Config::new(partition)
            .with_sequence_bounds(sequence_min, sequence_max)
            .unwrap(),
    )
}

fn ids(generator: &Generator, clock: &impl Clock, n: usize) -> Vec<Sno> {
    (0..n)
        .map(|_| generator.generate(7, clock).unwrap())
        .collect()
}

fn leased_ids(generator: &Generator, lease: &mut Lease, clock: &impl Clock, n: usize) -> Vec<Sno> {
    (0..n)
        .map(|_| lease.generate(generator, 7, clock).unwrap())
        .collect()
}

/// How a test takes its IDs.
#[derive(Copy, Clone, PartialEq)]
enum Calls {
    /// Each ID claimed from the generator.
    Plain,
    /// From a lease of the caller's own (one per thread).
    Leased,
}

fn take_ids(calls: Calls, generator: &Generator, clock: &impl Clock, n: usize) -> Vec<Sno> {
    match calls {
        Calls::Plain => ids(generator, clock, n),
        Calls::Leased => leased_ids(generator, &mut Lease::new(), clock, n),
    }
}

fn assert_unique(ids: &[Sno]) {
    let set: HashSet<_> = ids.iter().collect();
    assert_eq!(set.len(), ids.len(), "duplicate IDs");
}

#[test]
fn same_unit_takes_the_next_sequence() {
    let clock = ManualClock::new(T + 1);
    let generator = generator(9350, 0, 65535);
    let got = ids(&generator, &clock, 3);
    for (sequence, id) in got.iter().enumerate() {
        assert_eq!(id.time(), unit(T));
        assert!(!id.tick_tock());
        assert_eq!(id.meta(), 7);
        assert_eq!(id.partition(), 9350);
        assert_eq!(id.sequence(), sequence as u16);
    }
    assert_eq!(generator.stats().claimed, 3);
}

#[test]
fn a_new_unit_restarts_at_sequence_min() {
    let clock = ManualClock::new(T);
    let generator = generator(1, 100, 199);
    assert_eq!(ids(&generator, &clock, 2)[1].sequence(), 101);
    clock.advance(4);
    let id = generator.generate(0, &clock).unwrap();
    assert_eq!((id.time(), id.sequence()), (unit(T + 4), 100));
    clock.advance(4000);
    assert_eq!(generator.generate(0, &clock).unwrap().sequence(), 100);
}

#[test]
fn a_spent_pool_stalls_until_the_next_unit() {
    // A lease takes runs of one here: a pool this small cannot spare more.
    for calls in [Calls::Plain, Calls::Leased] {
        let clock = ManualClock::new(T + 2);
        let generator = generator(1, 10, 13);
        let got = take_ids(calls, &generator, &clock, 5);
        let sequences: Vec<_> = got.iter().map(|id| (id.time(), id.sequence())).collect();
        assert_eq!(
            sequences,
            [
                (unit(T), 10),
                (unit(T), 11),
                (unit(T), 12),
                (unit(T), 13),
                (unit(T + 4), 10)
            ]
        );
        assert_eq!(clock.waits(), 1, "one wait, to the start of the next unit");
        assert_eq!(clock.unix_millis(), T + 4);
        let stats = generator.stats();
        assert_eq!((stats.overflow_stalls, stats.claimed), (1, 5));
    }
}

#[test]
fn the_first_regression_flips_the_tick_tock_bit() {
    let clock = ManualClock::new(T + 400);
    let generator = generator(1, 0, 65535);
    let before = ids(&generator, &clock, 3);
    clock.set(T);
    let after = ids(&generator, &clock, 3);
    for (sequence, id) in after.iter().enumerate() {
        assert_eq!((id.time(), id.tick_tock()), (unit(T), true));
        assert_eq!(id.sequence(), sequence as u16, "the new timeline restarts");
    }
    assert!(after.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(clock.waits(), 0);
    let stats = generator.stats();
    assert_eq!((stats.clock_regressions, stats.tick_tock), (1, true));
    assert_unique(&[before, after].concat());
}

#[test]
fn the_tick_tock_bit_stays_flipped_after_the_clock_catches_up() {
    let clock = ManualClock::new(T + 400);
    let generator = generator(1, 0, 65535);
    generator.generate(0, &clock).unwrap();
    clock.set(T);
    generator.generate(0, &clock).unwrap();
    clock.set(T + 800);
    let id = generator.generate(0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.tick_tock(), id.sequence()),
        (unit(T + 800), true, 0)
    );
}

#[test]
fn a_second_regression_into_the_used_span_waits() {
    let clock = ManualClock::new(T + 400);
    let generator = generator(1, 0, 65535);
    let mut all = ids(&generator, &clock, 2); // tick 0 up to T+400
    clock.set(T);
    all.extend(ids(&generator, &clock, 2)); // tick 1 from T
    clock.set(T + 200);
    all.extend(ids(&generator, &clock, 2)); // tick 1 up to T+200
    clock.set(T + 100); // behind T+200, and tick 0 already used everything up to T+400
    let id = generator.generate(0, &clock).unwrap();
    assert_eq!(clock.waits(), 1);
    assert_eq!(
        clock.unix_millis(),
        T + 200,
        "waited until the current timeline's last unit"
    );
    assert_eq!(
        (id.time(), id.tick_tock(), id.sequence()),
        (unit(T + 200), true, 2)
    );
    all.push(id);
    let stats = generator.stats();
    assert_eq!((stats.clock_regressions, stats.regression_waits), (1, 1));
    assert_unique(&all);
}

/// Waits in slices of at most 10 ms, as the PostgreSQL clock does so that a cancel is noticed.
struct SlicedClock<'a>(&'a ManualClock);

impl Clock for SlicedClock<'_> {
    fn unix_millis(&self) -> i64 {
        self.0.unix_millis()
    }

    fn wait_millis(&self, millis: i64) {
        self.0.wait_millis(millis.min(10));
    }
}

#[test]
fn a_long_wait_in_short_slices_counts_once() {
    let manual = ManualClock::new(T + 400);
    let clock = SlicedClock(&manual);
    let generator = generator(1, 0, 3);
    generator.generate(0, &clock).unwrap(); // tick 0 up to T+400
    manual.set(T);
    generator.generate(0, &clock).unwrap(); // tick 1 from T
    manual.set(T + 200);
    generator.generate(0, &clock).unwrap(); // tick 1 up to T+200
    manual.set(T + 100);
    let id = generator.generate(0, &clock).unwrap();
    assert_eq!((id.time(), id.tick_tock()), (unit(T + 200), true));
    assert_eq!(manual.waits(), 10, "100 ms in 10 ms slices");
    assert_eq!(generator.stats().regression_waits, 1);

    ids(&generator, &clock, 3); // the rest of the T+200 pool
    generator.generate(0, &clock).unwrap();
    assert_eq!(generator.stats().overflow_stalls, 1);
}

#[test]
fn a_regression_past_both_timelines_flips_back() {
    let clock = ManualClock::new(T + 400);
    let generator = generator(1, 0, 65535);
    generator.generate(0, &clock).unwrap(); // tick 0 at T+400
    clock.set(T);
    generator.generate(0, &clock).unwrap(); // tick 1 at T
    clock.set(T + 800);
    generator.generate(0, &clock).unwrap(); // tick 1 at T+800
    clock.set(T + 600); // after tick 0's last unit (T+400): tick 0 is free here
    let id = generator.generate(0, &clock).unwrap();
    assert_eq!((id.time(), id.tick_tock()), (unit(T + 600), false));
    assert_eq!(generator.stats().clock_regressions, 2);
    assert_eq!(clock.waits(), 0);
}

#[test]
fn sequence_bounds_are_validated() {
    for (min, max) in [(0, 2), (10, 12), (12, 10), (65535, 65535), (65533, 65535)] {
        let err = Config::new(0).with_sequence_bounds(min, max).unwrap_err();
        assert_eq!((err.sequence_min, err.sequence_max), (min, max));
    }
    assert_eq!(
        Config::new(0)
            .with_sequence_bounds(65532, 65535)
            .unwrap()
            .pool(),
        4
    );
}

#[test]
fn a_restored_snapshot_never_repeats_an_id_when_the_clock_is_behind() {
    let clock = ManualClock::new(T + 10_000);
    let original = generator(5, 0, 65535);
    let mut before = ids(&original, &clock, 1000);
    clock.set(T); // a regression before the snapshot: both timelines are in use
    before.extend(ids(&original, &clock, 1000));
    clock.set(T + 5_000);
    before.extend(ids(&original, &clock, 1000));
    let snapshot = original.snapshot(&clock);
    assert_eq!(
        (
            snapshot.last_unit,
            snapshot.other_last_unit,
            snapshot.clock_regressions
        ),
        (unit(T + 5_000), unit(T + 10_000), 1)
    );
    assert_eq!(snapshot.sequence, 1000);

    for restart_at in [T + 5_000, T + 4_000, T + 7_000, T + 12_000] {
        let clock = ManualClock::new(restart_at);
        let restored = Generator::restore(&snapshot).unwrap();
        let mut all = before.clone();
        all.extend(ids(&restored, &clock, 1000));
        assert_unique(&all);
        assert_eq!(restored.stats().claimed, 1000);
    }
}

#[test]
fn a_restore_into_the_last_unit_skips_that_unit() {
    let clock = ManualClock::new(T);
    let original = generator(5, 0, 65535);
    let before = ids(&original, &clock, 10);
    let restored = Generator::restore(&original.snapshot(&clock)).unwrap();
    let id = restored.generate(0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.tick_tock(), id.sequence()),
        (unit(T + 4), false, 0)
    );
    assert!(before.iter().all(|old| *old < id));
}

#[test]
fn new_settings_apply_from_the_next_unit() {
    let clock = ManualClock::new(T);
    let generator = generator(1, 0, 65535);
    let old = ids(&generator, &clock, 3);
    generator.reconfigure(Config::new(2).with_sequence_bounds(0, 3).unwrap());
    let new = generator.generate(0, &clock).unwrap();
    assert_eq!(
        (new.time(), new.partition(), new.sequence()),
        (unit(T + 4), 2, 0)
    );
    assert_eq!(
        generator.stats().overflow_stalls,
        0,
        "a settings change is not an overflow"
    );
    assert!(old.iter().all(|id| *id < new));
    assert_eq!(generator.stats().claimed, 4);
}

#[test]
fn a_lease_claims_runs_that_double_while_it_uses_them_up() {
    let clock = ManualClock::new(T);
    let generator = generator(3, 0, 65535);
    let mut lease = Lease::new();
    let mut claimed = Vec::new();
    for sequence in 0..100u16 {
        let id = lease.generate(&generator, 7, &clock).unwrap();
        assert_eq!(
            (
                id.time(),
                id.tick_tock(),
                id.meta(),
                id.partition(),
                id.sequence()
            ),
            (unit(T), false, 7, 3, sequence)
        );
        claimed.push(generator.stats().claimed);
    }
    claimed.dedup();
    // Runs of 1, 2, 4, 8, 16, then MAX_RUN (32) at most.
    assert_eq!(MAX_RUN, 32);
    assert_eq!(claimed, [1, 3, 7, 15, 31, 63, 95, 127]);
}

#[test]
fn leases_share_a_unit_without_repeating_and_each_rises() {
    let clock = ManualClock::new(T);
    let generator = generator(1, 0, 65535);
    let (mut a, mut b) = (Lease::new(), Lease::new());
    let mut from_a = Vec::new();
    let mut from_b = Vec::new();
    for _ in 0..100 {
        from_a.push(a.generate(&generator, 0, &clock).unwrap());
        from_b.push(b.generate(&generator, 0, &clock).unwrap());
        from_b.push(generator.generate(0, &clock).unwrap());
    }
    assert!(from_a.windows(2).all(|w| w[0] < w[1]));
    assert_unique(&[from_a, from_b].concat());
}

#[test]
fn a_new_unit_drops_the_rest_of_a_run_and_restarts_small() {
    let clock = ManualClock::new(T);
    let generator = generator(1, 500, 65535);
    let mut lease = Lease::new();
    leased_ids(&generator, &mut lease, &clock, 4); // runs of 1, 2, 4: 3 sequences left
    assert_eq!(generator.stats().claimed, 7);
    clock.advance(4);
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!((id.time(), id.sequence()), (unit(T + 4), 500));
    assert_eq!(generator.stats().claimed, 8, "a run of one in the new unit");
}

#[test]
fn a_lease_handed_another_generator_claims_there() {
    let clock = ManualClock::new(T);
    let (first, second) = (generator(1, 0, 65535), generator(1, 0, 65535));
    let mut lease = Lease::new();
    leased_ids(&first, &mut lease, &clock, 2); // a run of 2 from the first, 1 left
    let from_second = lease.generate(&second, 0, &clock).unwrap();
    assert_eq!(
        from_second.sequence(),
        0,
        "claimed from the second generator"
    );
    assert_eq!(second.stats().claimed, 1);
    assert_ne!(second.generate(0, &clock).unwrap(), from_second);
}

#[test]
fn a_lease_takes_new_settings_with_everyone_else() {
    let clock = ManualClock::new(T);
    let generator = generator(1, 0, 65535);
    let mut lease = Lease::new();
    leased_ids(&generator, &mut lease, &clock, 4); // a run of 4 with 3 left
    generator.reconfigure(Config::new(2).with_sequence_bounds(10, 65535).unwrap());
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.partition(), id.sequence()),
        (unit(T + 4), 2, 10),
        "the old run is dropped, and the unit it was in is spent for the new settings"
    );
}

#[test]
fn a_lease_never_serves_a_run_from_before_a_regression() {
    let clock = ManualClock::new(T + 400);
    let generator = generator(1, 0, 65535);
    let mut lease = Lease::new();
    let mut all = leased_ids(&generator, &mut lease, &clock, 2); // a run of 2 with 1 left
    clock.set(T);
    all.push(generator.generate(0, &clock).unwrap()); // another caller flips the tick-tock bit
    clock.set(T + 400); // back in the unit of the lease's run
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.tick_tock(), id.sequence()),
        (unit(T + 400), true, 0)
    );
    all.push(id);
    assert_unique(&all);
}

/// A scripted clock whose deadlines are timed the way the CPU's counter times them: by time
/// passing (forward moves and waits), blind to the clock being set back. It counts readings.
struct SteppedClock {
    clock: ManualClock,
    /// Milliseconds that have passed since the start, whatever the clock was set to.
    timer_ms: AtomicU64,
    readings: AtomicU64,
    /// How much of the time left to a deadline the timer counts on, in percent (a real timer
    /// keeps a margin).
    trusted_percent: i64,
    /// The span `deadline_within` caps deadlines to, in whole milliseconds; `None`: no cap.
    fresh_ms: Option<i64>,
}

impl SteppedClock {
    fn new(unix_ms: i64) -> SteppedClock {
        SteppedClock {
            clock: ManualClock::new(unix_ms),
            timer_ms: AtomicU64::new(0),
            readings: AtomicU64::new(0),
            trusted_percent: 100,
            fresh_ms: None,
        }
    }

    /// Time passes (`millis` >= 0), or the clock is set back (`millis` < 0) and the timer
    /// does not notice.
    fn step(&self, millis: i64) {
        self.clock.advance(millis);
        if millis > 0 {
            self.timer_ms.fetch_add(millis as u64, Ordering::SeqCst);
        }
    }

    fn readings(&self) -> u64 {
        self.readings.load(Ordering::SeqCst)
    }
}

impl Clock for SteppedClock {
    fn unix_millis(&self) -> i64 {
        self.readings.fetch_add(1, Ordering::SeqCst);
        self.clock.unix_millis()
    }

    fn wait_millis(&self, millis: i64) {
        self.step(millis);
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        let left = (end_ms - self.unix_millis()).clamp(0, 4) * self.trusted_percent / 100;
        let now = self.timer_ms.load(Ordering::SeqCst);
        Deadline::new(now, now + left as u64)
    }

    fn deadline_within(&self, end_ms: i64, _within_ns: i64) -> Deadline {
        let left = (end_ms - self.unix_millis()).clamp(0, 4) * self.trusted_percent / 100;
        let left = left.min(self.fresh_ms.unwrap_or(i64::MAX));
        let now = self.timer_ms.load(Ordering::SeqCst);
        Deadline::new(now, now + left as u64)
    }

    fn is_before(&self, deadline: Deadline) -> bool {
        deadline.is_ahead_at(self.timer_ms.load(Ordering::SeqCst))
    }
}

/// A clock with no timer for deadlines (the trait's defaults), counting readings.
struct TimerlessClock {
    clock: ManualClock,
    readings: AtomicU64,
}

impl Clock for TimerlessClock {
    fn unix_millis(&self) -> i64 {
        self.readings.fetch_add(1, Ordering::SeqCst);
        self.clock.unix_millis()
    }

    fn wait_millis(&self, millis: i64) {
        self.clock.wait_millis(millis)
    }
}

#[test]
fn a_lease_reads_the_clock_only_to_claim_while_its_timer_says_the_unit_lasts() {
    let clock = SteppedClock::new(T);
    let generator = generator(1, 0, 65535);
    let mut lease = Lease::new();
    let ids = leased_ids(&generator, &mut lease, &clock, 63); // runs of 1, 2, 4, 8, 16, 32
    assert!(ids.iter().all(|id| id.time() == unit(T)));
    assert_eq!(generator.stats().claimed, 63);
    // Per run: one reading to see the last run is spent, one to claim, one to arm the deadline
    // (not for the first run of one).
    assert_eq!(clock.readings(), 6 * 3 - 1);
}

#[test]
fn a_lease_without_a_timer_reads_the_clock_for_every_id() {
    let clock = TimerlessClock {
        clock: ManualClock::new(T),
        readings: AtomicU64::new(0),
    };
    let generator = generator(1, 0, 65535);
    let ids = leased_ids(&generator, &mut Lease::new(), &clock, 63);
    assert_eq!(ids.last().unwrap().sequence(), 62);
    assert_eq!(
        clock.readings.load(Ordering::SeqCst),
        63 + 6,
        "each ID, and each of the 6 claims"
    );
}

#[test]
fn a_lease_moves_to_the_next_unit_when_its_deadline_passes() {
    let clock = SteppedClock::new(T + 1);
    let generator = generator(1, 0, 65535);
    let mut lease = Lease::new();
    leased_ids(&generator, &mut lease, &clock, 2); // sequence 0, then a run of 2: 1 is left
    clock.step(2);
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.sequence()),
        (unit(T), 2),
        "T + 3: the run goes on"
    );
    leased_ids(&generator, &mut lease, &clock, 2); // a run of 4: 2 are left
    clock.step(1);
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.sequence()),
        (unit(T + 4), 0),
        "T + 4: a new unit"
    );
}

#[test]
fn a_run_whose_deadline_the_margin_ended_early_is_given_up_for_as_many_as_it_used() {
    let clock = SteppedClock {
        trusted_percent: 50,
        ..SteppedClock::new(T)
    };
    let generator = generator(1, 0, 65535);
    let mut lease = Lease::new();
    leased_ids(&generator, &mut lease, &clock, 4); // runs of 1, 2, 4: 3 left, ahead for 2 ms
    clock.step(2);
    let before = clock.readings();
    let ids = leased_ids(&generator, &mut lease, &clock, 3);
    assert_eq!(
        ids.iter()
            .map(|id| (id.time(), id.sequence()))
            .collect::<Vec<_>>(),
        [(unit(T), 7), (unit(T), 8), (unit(T), 9)],
        "4..6 are given up; a run of 1 (as many as were used of the last), then 2"
    );
    assert_eq!(
        clock.readings() - before,
        5,
        "per claim one reading finds the deadline passed and one claims; one arms the run of 2"
    );
}

#[test]
fn a_run_left_unused_past_its_freshness_resumes_at_the_units_end() {
    let clock = SteppedClock {
        fresh_ms: Some(1),
        ..SteppedClock::new(T)
    };
    let generator = generator(1, 0, 65535);
    let (mut a, mut b) = (Lease::new(), Lease::new());
    leased_ids(&generator, &mut a, &clock, 4); // 0 | 1, 2 | 3 of 3..6
    let others = leased_ids(&generator, &mut b, &clock, 3); // 7 | 8, 9
    assert_eq!(others.last().unwrap().sequence(), 9);
    // A was descheduled for longer than its run stays fresh, in the same unit.
    clock.step(1);
    let id = a.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.sequence()),
        (unit(T), 10),
        "after what others made meanwhile, not 4"
    );
}

#[test]
fn a_lease_serves_its_run_through_a_step_back_its_timer_cannot_see() {
    let clock = SteppedClock::new(T + 400);
    let generator = generator(1, 0, 65535);
    let mut lease = Lease::new();
    let mut all = leased_ids(&generator, &mut lease, &clock, 4); // runs of 1, 2, 4: 3 left
    clock.step(-400);
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.tick_tock(), id.sequence()),
        (unit(T + 400), false, 4),
        "as if made before the clock went back"
    );
    all.push(id);
    let flipped = generator.generate(0, &clock).unwrap(); // another caller sees the regression
    assert_eq!((flipped.time(), flipped.tick_tock()), (unit(T), true));
    all.push(flipped);
    let id = lease.generate(&generator, 0, &clock).unwrap();
    assert_eq!(
        (id.time(), id.tick_tock(), id.sequence()),
        (unit(T), true, 1),
        "the run from before the regression is dropped at once"
    );
    all.push(id);
    assert_unique(&all);
}

#[test]
fn a_backfill_cursor_gives_an_instant_two_full_pools_then_refuses() {
    let mut cursor = BackfillCursor::new();
    let at = unit(T);
    let slots: Vec<_> = (0..2 * BACKFILL_POOL)
        .map(|_| cursor.take(at).unwrap())
        .collect();
    assert_eq!(
        (slots[0], slots[65_535], slots[65_536], slots[131_071]),
        (
            BackfillSlot {
                tick_tock: false,
                sequence: 0
            },
            BackfillSlot {
                tick_tock: false,
                sequence: 65_535
            },
            BackfillSlot {
                tick_tock: true,
                sequence: 0
            },
            BackfillSlot {
                tick_tock: true,
                sequence: 65_535
            },
        )
    );
    assert_eq!(slots.iter().collect::<HashSet<_>>().len(), 131_072);
    assert_eq!(cursor.take(at), Err(BackfillError::PoolSpent));
    assert_eq!(
        cursor.take(unit(T + 4)).unwrap(),
        BackfillSlot {
            tick_tock: true,
            sequence: 0
        }
    );
}

#[test]
fn a_backfill_cursor_flips_once_per_span_and_then_refuses() {
    let mut cursor = BackfillCursor::new();
    for ms in [T, T + 4, T + 400] {
        assert!(!cursor.take(unit(ms)).unwrap().tick_tock);
    }
    // A second pass over the same times: the other timeline.
    assert_eq!(
        cursor.take(unit(T)).unwrap(),
        BackfillSlot {
            tick_tock: true,
            sequence: 0
        }
    );
    assert_eq!(
        cursor.take(unit(T + 4)).unwrap(),
        BackfillSlot {
            tick_tock: true,
            sequence: 0
        }
    );
    // A third pass below both: refused, and the cursor is unchanged.
    let before = cursor;
    assert_eq!(
        cursor.take(unit(T)),
        Err(BackfillError::BothTimelinesUsed {
            current: unit(T + 4),
            other: unit(T + 400)
        })
    );
    assert_eq!(cursor, before);
    // Past the first timeline's end, going back flips again.
    assert!(cursor.take(unit(T + 800)).unwrap().tick_tock);
    assert!(!cursor.take(unit(T + 404)).unwrap().tick_tock);
}

#[test]
fn a_restored_backfill_cursor_never_repeats_what_it_recorded() {
    let mut cursor = BackfillCursor::restored(unit(T).get(), false, None, 0);
    assert_eq!(
        cursor.take(unit(T)).unwrap(),
        BackfillSlot {
            tick_tock: true,
            sequence: 0
        },
        "the recorded unit counts as spent in its timeline"
    );
    let mut cursor = BackfillCursor::restored(unit(T).get(), true, Some(unit(T + 8).get()), 5);
    assert_eq!(cursor.take(unit(T)), Err(BackfillError::PoolSpent));
    assert!(matches!(
        cursor.take(unit(T - 4)),
        Err(BackfillError::BothTimelinesUsed { .. })
    ));
    assert_eq!(
        cursor.take(unit(T + 4)).unwrap(),
        BackfillSlot {
            tick_tock: true,
            sequence: 0
        },
        "the current timeline goes on past its recorded unit"
    );
}

proptest! {
    /// Backfill calls in any order never give the same (unit, tick, sequence) twice.
    #[test]
    fn backfill_slots_never_repeat(times in prop::collection::vec(0u64..40, 1..400)) {
        let mut cursor = BackfillCursor::new();
        let mut seen = HashSet::new();
        for t in times {
            let at = Units::new(1_000 + t).unwrap();
            if let Ok(slot) = cursor.take(at) {
                prop_assert!(seen.insert((at, slot.tick_tock, slot.sequence)), "repeated {at:?} {slot:?}");
            }
        }
    }
}

#[test]
fn a_clock_outside_the_format_range_is_an_error() {
    let generator = generator(0, 0, 65535);
    for ms in [0, 1_262_303_999_999, 3_461_327_255_549] {
        let clock = ManualClock::new(ms);
        match generator.generate(0, &clock) {
            Err(GenerateError::TimeOutOfRange(err)) => assert_eq!(err.unix_ms, ms),
            other => panic!("{ms}: {other:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any script of clock moves, with any pool: no ID repeats, and within one timeline the IDs rise.
    #[test]
    fn no_clock_script_makes_a_duplicate(
        moves in proptest::collection::vec((-2_000i64..2_000, 1usize..12), 1..60),
        min in 0u16..100, extra in 3u16..10,
    ) {
        let clock = ManualClock::new(T + 100_000);
        let generator = generator(0, min, min + extra);
        let mut all = Vec::new();
        for (step, count) in moves {
            clock.advance(step);
            all.extend(ids(&generator, &clock, count));
        }
        let set: HashSet<_> = all.iter().collect();
        prop_assert_eq!(set.len(), all.len());
        prop_assert_eq!(generator.stats().claimed, all.len() as u64);
    }

    /// The same with two leases and plain calls taking turns, over pools large enough for runs.
    #[test]
    fn no_clock_script_makes_a_duplicate_with_leases(
        moves in proptest::collection::vec((-2_000i64..2_000, 1usize..40, 0usize..3), 1..60),
        min in 0u16..100, extra in 3u16..1000,
    ) {
        let clock = ManualClock::new(T + 100_000);
        let generator = generator(0, min, min + extra);
        let mut leases = [Lease::new(), Lease::new()];
        let mut all = Vec::new();
        for (step, count, caller) in moves {
            clock.advance(step);
            all.extend(match caller {
                0 => ids(&generator, &clock, count),
                n => leased_ids(&generator, &mut leases[n - 1], &clock, count),
            });
        }
        let set: HashSet<_> = all.iter().collect();
        prop_assert_eq!(set.len(), all.len());
        prop_assert!(generator.stats().claimed >= all.len() as u64);
    }

    /// The same with deadlines timed as the CPU's counter times them, blind to steps back, with
    /// time mostly passing in small steps so that runs cross unit ends. No ID is ever from a unit
    /// the clock has left (a deadline outliving its unit would be), and each lease's IDs rise
    /// while no regression is handled.
    #[test]
    fn no_clock_script_makes_a_duplicate_with_leases_and_a_blind_timer(
        moves in proptest::collection::vec(
            (prop_oneof![4 => 0i64..8, 1 => -400i64..0], 1usize..40, 0usize..3), 1..80),
        min in 0u16..100, extra in 3u16..1000,
    ) {
        let clock = SteppedClock::new(T + 100_000);
        let generator = generator(0, min, min + extra);
        let mut leases = [Lease::new(), Lease::new()];
        let mut from = [Vec::new(), Vec::new(), Vec::new()];
        for (step, count, caller) in moves {
            clock.step(step);
            let regressions = generator.stats().clock_regressions;
            let mut ids = Vec::new();
            for _ in 0..count {
                let id = match caller {
                    0 => generator.generate(7, &clock),
                    n => leases[n - 1].generate(&generator, 7, &clock),
                }.unwrap();
                prop_assert!(id.time() >= unit(clock.clock.unix_millis()), "a stale ID");
                ids.push(id);
            }
            if caller > 0 && generator.stats().clock_regressions == regressions {
                prop_assert!(ids.windows(2).all(|w| w[0] < w[1]));
            }
            from[caller].extend(ids);
        }
        let all = from.concat();
        let set: HashSet<_> = all.iter().collect();
        prop_assert_eq!(set.len(), all.len());
        prop_assert!(generator.stats().claimed >= all.len() as u64);
    }
}

/// Real time running `speed` times faster, optionally thrown back by a shared offset, so that
/// unit boundaries arrive asynchronously to the generator as they do in production. With a
/// timer, its deadlines are timed by real time passing, blind to the offset, as the CPU's
/// counter is blind to the clock being set back.
struct FastClock {
    origin: Instant,
    speed: i64,
    offset_ms: AtomicI64,
    timer: bool,
}

impl FastClock {
    fn new(speed: i64) -> FastClock {
        FastClock {
            origin: Instant::now(),
            speed,
            offset_ms: AtomicI64::new(0),
            timer: false,
        }
    }

    fn with_timer(speed: i64) -> FastClock {
        FastClock {
            timer: true,
            ..FastClock::new(speed)
        }
    }

    /// Microseconds of this clock's time since the start, not counting the offset.
    fn elapsed_us(&self) -> i64 {
        self.origin.elapsed().as_micros() as i64 * self.speed
    }
}

impl Clock for FastClock {
    fn unix_millis(&self) -> i64 {
        T + self.elapsed_us() / 1000 + self.offset_ms.load(Ordering::SeqCst)
    }

    fn wait_millis(&self, millis: i64) {
        std::thread::sleep(Duration::from_micros(
            (millis * 1000 / self.speed).max(1) as u64
        ));
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        if !self.timer {
            return Deadline::PASSED;
        }
        let elapsed_us = self.elapsed_us();
        let now_us = (T + self.offset_ms.load(Ordering::SeqCst)) * 1000 + elapsed_us;
        let left_us = (end_ms * 1000 - now_us).clamp(0, 4000);
        Deadline::new(elapsed_us as u64, (elapsed_us + left_us) as u64)
    }

    fn is_before(&self, deadline: Deadline) -> bool {
        self.timer && deadline.is_ahead_at(self.elapsed_us() as u64)
    }
}

/// `threads` × `per_thread` IDs at once: none repeats; each thread's rise when `rising`.
fn generate_concurrently<C: Clock + Sync>(
    generator: &Generator,
    clock: &C,
    calls: Calls,
    threads: usize,
    per_thread: usize,
    rising: bool,
) -> Vec<Sno> {
    let per_thread_ids: Vec<Vec<Sno>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| scope.spawn(move || take_ids(calls, generator, clock, per_thread)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    if rising {
        for ids in &per_thread_ids {
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a thread's IDs went down"
            );
        }
    }
    let mut all = per_thread_ids.concat();
    all.sort_unstable();
    let total = all.len();
    all.dedup();
    assert_eq!(all.len(), total, "duplicate IDs across threads");
    let claimed = generator.stats().claimed;
    match calls {
        Calls::Plain => assert_eq!(claimed, total as u64),
        Calls::Leased => assert!(claimed >= total as u64, "{claimed} < {total}"),
    }
    all
}

#[test]
fn threads_with_the_real_clock_never_collide() {
    for calls in [Calls::Plain, Calls::Leased] {
        let generator = generator(1, 0, 65535);
        generate_concurrently(&generator, &RealtimeClock, calls, 4, 250_000, true);
    }
}

#[test]
fn threads_with_a_pool_of_four_stall_and_never_collide() {
    for calls in [Calls::Plain, Calls::Leased] {
        let generator = generator(1, 100, 103);
        let clock = FastClock::new(1000);
        let all = generate_concurrently(&generator, &clock, calls, 4, 250_000, true);
        assert!(generator.stats().overflow_stalls > 0);
        let units: HashSet<_> = all.iter().map(|id| id.time()).collect();
        assert!(units.len() >= all.len() / 4, "at most 4 IDs per unit");
    }
}

#[test]
fn leased_threads_with_a_small_pool_stall_and_never_collide() {
    // A pool of 64 allows runs of 4, so runs end part-used at unit boundaries all the time,
    // found by the timer.
    let generator = generator(1, 0, 63);
    let clock = FastClock::with_timer(100);
    generate_concurrently(&generator, &clock, Calls::Leased, 4, 100_000, true);
    assert!(generator.stats().overflow_stalls > 0);
}

#[test]
fn threads_never_collide_while_the_clock_jumps_back() {
    for (calls, clock) in [
        (Calls::Plain, FastClock::new(100)),
        (Calls::Leased, FastClock::new(100)),
        (Calls::Leased, FastClock::with_timer(100)),
    ] {
        threads_while_the_clock_jumps_back(calls, clock);
    }
}

fn threads_while_the_clock_jumps_back(calls: Calls, clock: FastClock) {
    // Leases get a pool large enough for runs of 16.
    let sequence_max = if calls == Calls::Leased { 255 } else { 15 };
    let generator = generator(1, 0, sequence_max);
    let done = AtomicBool::new(false);
    let jumps = Arc::new(AtomicI64::new(0));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut step = 0i64;
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(2));
                step += 1;
                // Alternately throw the clock back 0..300 ms and let it run again.
                let back = (step * 7919) % 300;
                clock.offset_ms.fetch_sub(back, Ordering::SeqCst);
                jumps.fetch_add(1, Ordering::SeqCst);
            }
        });
        generate_concurrently(&generator, &clock, calls, 4, 50_000, false);
        done.store(true, Ordering::SeqCst);
    });
    let stats = generator.stats();
    assert!(jumps.load(Ordering::SeqCst) > 10);
    assert!(stats.clock_regressions > 0, "{stats:?}");
}
