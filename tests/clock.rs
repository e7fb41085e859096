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
