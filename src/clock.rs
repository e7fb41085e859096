//! Where the generator gets the time from, and how it waits.
//!
//! The generator reads the clock once per ID, so the read is its largest cost. Measured on the
//! project's 2-core VM (see the README): `CLOCK_REALTIME` about 43 ns, `CLOCK_REALTIME_COARSE`
//! about 12 ns. The coarse clock reports a 4 ms resolution (`clock_getres`) but was seen to step
//! in 8 ms jumps there, so it would put IDs up to 8 ms behind real time and skip every other
//! 4 ms unit, halving the generator's capacity. [`RealtimeClock`] is therefore the default;
//! [`CoarseClock`] stays available for callers that prefer speed to accuracy.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// A source of wall-clock time that can also wait.
pub trait Clock {
    /// The current Unix time in milliseconds.
    fn unix_millis(&self) -> i64;

    /// Waits for about `millis` (> 0) milliseconds of this clock's time. May return early, as a
    /// spurious wake-up; the generator reads the clock again afterwards.
    fn wait_millis(&self, millis: i64);
}

impl<C: Clock + ?Sized> Clock for &C {
    fn unix_millis(&self) -> i64 {
        (**self).unix_millis()
    }

    fn wait_millis(&self, millis: i64) {
        (**self).wait_millis(millis)
    }
}

fn read_clock(id: libc::clockid_t) -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; both clock ids exist on every Linux.
    unsafe { libc::clock_gettime(id, &mut now) };
    now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}

fn sleep_millis(millis: i64) {
    std::thread::sleep(Duration::from_millis(millis.max(0) as u64));
}

/// `CLOCK_REALTIME`: exact to the millisecond.
#[derive(Copy, Clone, Debug, Default)]
pub struct RealtimeClock;

impl Clock for RealtimeClock {
    fn unix_millis(&self) -> i64 {
        read_clock(libc::CLOCK_REALTIME)
    }

    fn wait_millis(&self, millis: i64) {
        sleep_millis(millis)
    }
}

/// `CLOCK_REALTIME_COARSE`: the time of the last kernel tick; cheaper, and behind by up to a tick.
#[derive(Copy, Clone, Debug, Default)]
pub struct CoarseClock;

impl CoarseClock {
    /// The resolution the kernel reports for this clock (`clock_getres`).
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
        read_clock(libc::CLOCK_REALTIME_COARSE)
    }

    fn wait_millis(&self, millis: i64) {
        sleep_millis(millis)
    }
}

/// A clock that only moves when told to, for tests and deterministic benchmarks.
///
/// Waiting does not block: it moves this clock forward by the time waited, as if the caller had
/// slept, and counts the wait.
#[derive(Debug, Default)]
pub struct ManualClock {
    unix_ms: AtomicI64,
    waits: AtomicU64,
}

impl ManualClock {
    pub fn new(unix_ms: i64) -> ManualClock {
        ManualClock {
            unix_ms: AtomicI64::new(unix_ms),
            waits: AtomicU64::new(0),
        }
    }

    pub fn set(&self, unix_ms: i64) {
        self.unix_ms.store(unix_ms, Ordering::SeqCst);
    }

    pub fn advance(&self, millis: i64) {
        self.unix_ms.fetch_add(millis, Ordering::SeqCst);
    }

    /// How many times a caller waited on this clock.
    pub fn waits(&self) -> u64 {
        self.waits.load(Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn unix_millis(&self) -> i64 {
        self.unix_ms.load(Ordering::SeqCst)
    }

    fn wait_millis(&self, millis: i64) {
        self.waits.fetch_add(1, Ordering::SeqCst);
        self.advance(millis);
    }
}
