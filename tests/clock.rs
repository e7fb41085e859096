//! Deadlines of the real-time clock, against the clock itself: a deadline may end early, never
//! late.

use sno::{Clock, Deadline, RealtimeClock};
use std::time::Duration;

/// Reads the clock until it reaches `unix_ms`.
fn spin_until(unix_ms: i64) {
    while RealtimeClock.unix_millis() < unix_ms {
        std::hint::spin_loop();
    }
}

#[test]
fn a_deadline_has_passed_once_the_clock_reaches_it() {
    for i in 0..300 {
        let end = RealtimeClock.unix_millis() + 1 + i % 3;
        let deadline = RealtimeClock.deadline(end);
        spin_until(end);
        assert!(
            !RealtimeClock.is_before(deadline),
            "deadline {i} outlived {end}"
        );
    }
}

#[test]
fn a_deadline_a_few_milliseconds_away_is_ahead_when_armed() {
    if !RealtimeClock::has_timer() {
        eprintln!("no usable time-stamp counter here: every deadline passes at once");
        let deadline = RealtimeClock.deadline(RealtimeClock.unix_millis() + 3);
        assert_eq!(deadline, Deadline::PASSED);
        return;
    }
    // A counter that cannot time 2 ms of a 3 ms deadline in time for this check is broken.
    let ahead = (0..100)
        .filter(|_| {
            let deadline = RealtimeClock.deadline(RealtimeClock.unix_millis() + 3);
            RealtimeClock.is_before(deadline)
        })
        .count();
    assert!(
        ahead >= 90,
        "only {ahead} of 100 deadlines were ahead when armed"
    );
}

#[test]
fn a_deadline_already_reached_has_passed() {
    let now = RealtimeClock.unix_millis();
    assert_eq!(RealtimeClock.deadline(now), Deadline::PASSED);
    assert_eq!(RealtimeClock.deadline(now - 1000), Deadline::PASSED);
    assert!(!RealtimeClock.is_before(Deadline::PASSED));
}

#[test]
fn a_far_deadline_lasts_one_unit_at_most() {
    let deadline = RealtimeClock.deadline(RealtimeClock.unix_millis() + 60_000);
    std::thread::sleep(Duration::from_millis(5));
    assert!(!RealtimeClock.is_before(deadline));
}

#[test]
fn a_deadline_within_a_span_passes_when_the_span_has() {
    if !RealtimeClock::has_timer() {
        return;
    }
    // 1 ms: a deadline without the span would last a whole unit (3.5 ms with the margin).
    let deadline = RealtimeClock.deadline_within(RealtimeClock.unix_millis() + 60_000, 1_000_000);
    assert!(RealtimeClock.is_before(deadline), "ahead when armed");
    std::thread::sleep(Duration::from_millis(2));
    assert!(!RealtimeClock.is_before(deadline), "passed 2 ms later");
}

#[test]
fn a_deadline_is_ahead_from_its_start_until_its_end() {
    let deadline = Deadline::new(10, 20);
    let ahead: Vec<u64> = (0..30).filter(|&t| deadline.is_ahead_at(t)).collect();
    assert_eq!(ahead, (10..20).collect::<Vec<_>>());
    assert!(
        !deadline.is_ahead_at(u64::MAX),
        "a timer far behind its start"
    );
    let at_the_top = Deadline::new(u64::MAX - 1, u64::MAX);
    assert!(at_the_top.is_ahead_at(u64::MAX - 1));
    assert!(!at_the_top.is_ahead_at(u64::MAX));
    assert!(!at_the_top.is_ahead_at(0));
}

#[test]
fn an_empty_or_reversed_deadline_is_never_ahead() {
    for deadline in [Deadline::PASSED, Deadline::new(20, 10), Deadline::new(7, 7)] {
        for t in [0, 6, 7, 10, 15, 20, u64::MAX] {
            assert!(!deadline.is_ahead_at(t), "{deadline:?} at {t}");
        }
    }
}
