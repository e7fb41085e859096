//! Where the generator gets the time from, and how it waits.
//!
//! A plain generator reads the clock once per ID, so the read is its largest cost. Measured on
//! the project's 2-core VM (docs/rust-core.md): `CLOCK_REALTIME` about 28 ns,
//! `CLOCK_REALTIME_COARSE` about 7 ns. The coarse clock reports a 4 ms resolution
//! (`clock_getres`) but was seen to step in 8 ms jumps there, so it would put IDs up to 8 ms
//! behind real time and skip every other 4 ms unit, halving the generator's capacity.
//! [`RealtimeClock`] is therefore the default; [`CoarseClock`] stays available for callers that
//! prefer speed to accuracy.
//!
//! Most readings only answer "is it still the same 4 ms unit?". A [`Deadline`] answers that
//! without a reading: [`RealtimeClock`] arms one with a reading and then checks it against the
//! CPU's time-stamp counter (`src/clock/tsc.rs`), which is cheaper to read than the clock.

#[cfg(feature = "test-util")]
mod manual;
mod tsc;

#[cfg(feature = "test-util")]
pub use manual::ManualClock;
use std::time::Duration;

/// The furthest a deadline is armed ahead, one 4 ms unit: the generator never needs more, and a
/// short span keeps any error of the timer's rate small.
const LONGEST_DEADLINE_NS: i64 = crate::time::UNIT_MS * 1_000_000;

/// The part of the time left to a deadline that the timer does not count on (1/8). The counter is
/// calibrated against the unadjusted clock, while NTP may make `CLOCK_REALTIME` run faster than
/// that: by 0.05% through its frequency, and while slewing away an offset through the kernel's
/// tick length by up to 10% (chrony slews at up to 8.3% by default). Leases arm again when a
/// deadline passes inside its unit, so the margin costs a few readings per unit, not 1/8 of them.
const DEADLINE_MARGIN: f64 = 0.125;

/// A source of wall-clock time that can also wait.
///
/// [`RealtimeClock`] is the one to generate with. Another clock needs only the first two
/// methods; the deadline methods are for clocks with a timer cheaper than a reading, and by
/// default make every caller read the clock.
///
/// ```
/// use sno::{Clock, Config, Generator};
/// use std::cell::Cell;
///
/// /// A clock set by hand, to show what a generator does when the time goes back.
/// struct Manual(Cell<i64>);
///
/// impl Clock for Manual {
///     fn unix_millis(&self) -> i64 {
///         self.0.get()
///     }
///     fn wait_millis(&self, millis: i64) {
///         self.0.set(self.0.get() + millis)
///     }
/// }
///
/// let generator = Generator::new(Config::new(1));
/// let clock = Manual(Cell::new(1_700_000_000_000));
/// let before = generator.generate(0, &clock)?;
/// clock.0.set(1_700_000_000_000 - 1_000); // NTP stepped the clock back a second
/// let after = generator.generate(0, &clock)?;
/// // The generator went on in its other timeline: the tick-tock bit tells the two apart.
/// assert!(!before.tick_tock() && after.tick_tock());
/// assert!(after.unix_millis() < before.unix_millis());
/// assert_eq!(generator.clock_regressions(), 1);
/// # Ok::<(), sno::GenerateError>(())
/// ```
pub trait Clock {
    /// The current Unix time in milliseconds.
    fn unix_millis(&self) -> i64;

    /// Waits for about `millis` (> 0) milliseconds of this clock's time. May return early, as a
    /// spurious wake-up; the generator reads the clock again afterwards.
    fn wait_millis(&self, millis: i64);

    /// Reads the clock and arms a deadline at `end_ms`: for as long as [`Clock::is_before`]
    /// holds for it, less time has passed than the clock had left to `end_ms`, so a reading
    /// would still be earlier than `end_ms` (unless the clock was set forward meanwhile). The
    /// default has no timer cheaper than a reading and returns [`Deadline::PASSED`].
    fn deadline(&self, end_ms: i64) -> Deadline {
        let _ = end_ms;
        Deadline::PASSED
    }

    /// [`Clock::deadline`], but at most `within_ns` nanoseconds ahead. The default, for clocks
    /// whose timer cannot time so short a span, is [`Clock::deadline`] itself.
    fn deadline_within(&self, end_ms: i64, within_ns: i64) -> Deadline {
        let _ = within_ns;
        self.deadline(end_ms)
    }

    /// Whether `deadline`, armed by this clock, is still ahead. False whenever unsure.
    fn is_before(&self, deadline: Deadline) -> bool {
        let _ = deadline;
        false
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn unix_millis(&self) -> i64 {
        (**self).unix_millis()
    }

    fn wait_millis(&self, millis: i64) {
        (**self).wait_millis(millis)
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        (**self).deadline(end_ms)
    }

    fn deadline_within(&self, end_ms: i64, within_ns: i64) -> Deadline {
        (**self).deadline_within(end_ms, within_ns)
    }

    #[inline(always)]
    fn is_before(&self, deadline: Deadline) -> bool {
        (**self).is_before(deadline)
    }
}

/// A point ahead in time, as a span `start..end` of a clock's own timer (ticks of the CPU's
/// counter for [`RealtimeClock`]; any unsigned reading that rises with time for another clock):
/// ahead while the timer reads inside the span. A timer that reads before `start` went
/// backwards and is not trusted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Deadline {
    start: u64,
    end: u64,
}

impl Deadline {
    /// A deadline that has passed for every clock.
    pub const PASSED: Deadline = Deadline { start: 0, end: 0 };

    /// A deadline ahead while a timer reads in `start..end` (never, if `end <= start`).
    ///
    /// ```
    /// use sno::Deadline;
    ///
    /// assert!(Deadline::new(100, 200).is_armed());
    /// assert_eq!(Deadline::new(200, 100), Deadline::new(200, 200));
    /// ```
    pub const fn new(start: u64, end: u64) -> Deadline {
        let end = if end < start { start } else { end };
        Deadline { start, end }
    }

    /// Whether a timer reading `now` is still before this deadline: `start <= now < end`, in
    /// one comparison (a reading before `start` wraps around to a large distance).
    ///
    /// ```
    /// use sno::Deadline;
    ///
    /// let deadline = Deadline::new(100, 200);
    /// assert!(deadline.is_ahead_at(100) && deadline.is_ahead_at(199));
    /// assert!(!deadline.is_ahead_at(200), "reached");
    /// assert!(!deadline.is_ahead_at(99), "the timer went backwards");
    /// ```
    #[inline(always)]
    pub fn is_ahead_at(self, now: u64) -> bool {
        now.wrapping_sub(self.start) < self.end.wrapping_sub(self.start)
    }

    /// Whether this deadline can still be ahead of any reading.
    ///
    /// ```
    /// use sno::Deadline;
    ///
    /// assert!(!Deadline::PASSED.is_armed());
    /// assert!(!Deadline::new(7, 7).is_armed());
    /// ```
    #[inline(always)]
    pub fn is_armed(self) -> bool {
        self.start < self.end
    }
}

fn read_clock(id: libc::clockid_t) -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the clock ids used here exist on every Linux.
    unsafe { libc::clock_gettime(id, &mut now) };
    now
}

/// Milliseconds on the clock `id` (also used by the extension for `CLOCK_MONOTONIC`).
pub(crate) fn read_millis(id: libc::clockid_t) -> i64 {
    let now = read_clock(id);
    now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

fn read_nanos(id: libc::clockid_t) -> i64 {
    let now = read_clock(id);
    now.tv_sec * 1_000_000_000 + now.tv_nsec
}

fn sleep_millis(millis: i64) {
    std::thread::sleep(Duration::from_millis(millis.max(0) as u64));
}

/// `CLOCK_REALTIME`: exact to the millisecond. Its deadlines are timed with the CPU's
/// time-stamp counter where that is safe (`src/clock/tsc.rs` says when), and have always passed
/// elsewhere.
///
/// ```
/// use sno::{Clock, RealtimeClock};
/// use std::time::{SystemTime, UNIX_EPOCH};
///
/// let system = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
/// assert!((RealtimeClock.unix_millis() - system).abs() < 1_000);
/// ```
#[derive(Copy, Clone, Debug, Default)]
pub struct RealtimeClock;

impl RealtimeClock {
    /// Whether this clock's deadlines are timed by the CPU's counter; without it, each
    /// deadline has passed as soon as it is armed, and callers read the clock every time.
    ///
    /// ```
    /// use sno::{Clock, RealtimeClock};
    ///
    /// let deadline = RealtimeClock.deadline(RealtimeClock.unix_millis() + 4);
    /// if !RealtimeClock::has_timer() {
    ///     assert!(!RealtimeClock.is_before(deadline));
    /// }
    /// ```
    pub fn has_timer() -> bool {
        Self::timer_ticks_per_ns().is_some()
    }

    /// The calibrated rate of the counter that times deadlines, if there is one. The first call
    /// in a process calibrates (about 2 ms): a process that forks workers can make it once,
    /// before they fork.
    ///
    /// ```
    /// use sno::RealtimeClock;
    ///
    /// match RealtimeClock::timer_ticks_per_ns() {
    ///     Some(rate) => println!("deadlines timed by a {rate:.3} GHz counter"),
    ///     None => println!("no usable counter: every ID reads the clock"),
    /// }
    /// ```
    pub fn timer_ticks_per_ns() -> Option<f64> {
        tsc::ticks_per_ns()
    }
}

impl Clock for RealtimeClock {
    fn unix_millis(&self) -> i64 {
        read_millis(libc::CLOCK_REALTIME)
    }

    fn wait_millis(&self, millis: i64) {
        sleep_millis(millis)
    }

    fn deadline(&self, end_ms: i64) -> Deadline {
        self.deadline_within(end_ms, LONGEST_DEADLINE_NS)
    }

    fn deadline_within(&self, end_ms: i64, within_ns: i64) -> Deadline {
        let Some(ticks_per_ns) = tsc::ticks_per_ns() else {
            return Deadline::PASSED;
        };
        // The counter first: the clock, read after it, is then no earlier than the counter.
        let start = tsc::read_ordered();
        if !tsc::still_trusted(start, ticks_per_ns) {
            return Deadline::PASSED;
        }
        let now_ns = read_nanos(libc::CLOCK_REALTIME);
        let left_ns = end_ms
            .saturating_mul(1_000_000)
            .saturating_sub(now_ns)
            .min(within_ns.min(LONGEST_DEADLINE_NS));
        if left_ns <= 0 {
            return Deadline::PASSED;
        }
        let ticks = left_ns as f64 * ticks_per_ns * (1.0 - DEADLINE_MARGIN);
        Deadline::new(start, start.saturating_add(ticks as u64))
    }

    #[inline(always)]
    fn is_before(&self, deadline: Deadline) -> bool {
        deadline.is_armed() && deadline.is_ahead_at(tsc::read())
    }
}

/// `CLOCK_REALTIME_COARSE`: the time of the last kernel tick; cheaper, and behind by up to a tick.
///
/// ```
/// use sno::{CoarseClock, Config, Generator};
///
/// // Faster reads, in exchange for IDs up to a tick late and fewer units used.
/// let id = Generator::new(Config::new(1)).generate(0, &CoarseClock)?;
/// assert_eq!(id.partition(), 1);
/// # Ok::<(), sno::GenerateError>(())
/// ```
#[derive(Copy, Clone, Debug, Default)]
pub struct CoarseClock;

impl CoarseClock {
    /// The resolution the kernel reports for this clock (`clock_getres`). The clock may still
    /// step in larger jumps (see the module documentation).
    ///
    /// ```
    /// use sno::CoarseClock;
    ///
    /// let tick = CoarseClock::resolution();
    /// assert!(tick.as_nanos() > 0);
    /// ```
    pub fn resolution() -> Duration {
        let mut res = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `res` is a valid, writable timespec.
        unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut res) };
        Duration::new(res.tv_sec as u64, res.tv_nsec as u32)
    }
}

impl Clock for CoarseClock {
    fn unix_millis(&self) -> i64 {
        read_millis(libc::CLOCK_REALTIME_COARSE)
    }

    fn wait_millis(&self, millis: i64) {
        sleep_millis(millis)
    }
}
