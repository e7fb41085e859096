//! The CPU's time-stamp counter, as the cheap timer behind [`RealtimeClock`] deadlines.
//!
//! On the project's VM a `CLOCK_REALTIME` reading costs about 28 ns and a counter read about
//! 11 ns. The kernel's vDSO computes `CLOCK_REALTIME` from this same counter when the counter is
//! its clocksource, so under that condition (checked here, with the CPU's promise that the
//! counter runs at a constant rate in every power state) the counter is as trustworthy as the
//! clock for measuring a few milliseconds. Anywhere else (another clocksource, another
//! architecture, an implausible calibration) there is no timer and every deadline has passed.
//!
//! [`RealtimeClock`]: super::RealtimeClock

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// How long calibration watches the counter against `CLOCK_MONOTONIC_RAW`.
const CALIBRATION_NS: i64 = 2_000_000;

/// How often a process asks again whether the kernel still uses the counter.
const RECHECK_NS: f64 = 1e9;

/// Counter ticks per nanosecond, or `None` where the counter is not used. Calibrated once per
/// process, on first use.
pub(super) fn ticks_per_ns() -> Option<f64> {
    static RATE: OnceLock<Option<f64>> = OnceLock::new();
    *RATE.get_or_init(measure_rate)
}

/// Whether the kernel still uses the counter as its clocksource, asked again about once a
/// second (`now` is a counter reading). The kernel's watchdog may switch away from it for good,
/// when it finds the counter drifting; from then on this process reads the clock for every ID.
pub(super) fn still_trusted(now: u64, ticks_per_ns: f64) -> bool {
    static NEXT_CHECK: AtomicU64 = AtomicU64::new(0);
    static ABANDONED: AtomicBool = AtomicBool::new(false);
    if ABANDONED.load(Ordering::Relaxed) {
        return false;
    }
    if now < NEXT_CHECK.load(Ordering::Relaxed) {
        return true;
    }
    if !kernel_times_with_counter() {
        ABANDONED.store(true, Ordering::Relaxed);
        return false;
    }
    let next = now.saturating_add((RECHECK_NS * ticks_per_ns) as u64);
    NEXT_CHECK.store(next, Ordering::Relaxed);
    true
}

/// The counter, unordered: the CPU may read it a few instructions early or late, which is
/// nothing against deadlines of milliseconds with a margin of tens of microseconds.
#[inline(always)]
pub(super) fn read() -> u64 {
    arch::read()
}

/// The counter, read after every earlier instruction completed and before any later one
/// starts, so that a clock reading taken after it is surely not older than it.
pub(super) fn read_ordered() -> u64 {
    arch::fence();
    let ticks = arch::read();
    arch::fence();
    ticks
}

fn measure_rate() -> Option<f64> {
    if !usable() {
        return None;
    }
    let (ticks_0, ns_0) = paired_reading();
    let (ticks_1, ns_1) = loop {
        let reading = paired_reading();
        if reading.1 - ns_0 >= CALIBRATION_NS {
            break reading;
        }
    };
    let rate = ticks_1.wrapping_sub(ticks_0) as f64 / (ns_1 - ns_0) as f64;
    // A counter between 100 MHz and 20 GHz; anything else is a broken reading, not a CPU.
    (0.1..=20.0).contains(&rate).then_some(rate)
}

/// The counter and `CLOCK_MONOTONIC_RAW` (never stepped nor slewed) read together: of a few
/// tries, the one whose two counter reads around the clock reading are closest.
fn paired_reading() -> (u64, i64) {
    (0..5)
        .map(|_| {
            let before = read_ordered();
            let ns = super::read_nanos(libc::CLOCK_MONOTONIC_RAW);
            let after = read_ordered();
            let spread = after.wrapping_sub(before);
            (spread, before.wrapping_add(spread / 2), ns)
        })
        .min_by_key(|&(spread, _, _)| spread)
        .map(|(_, ticks, ns)| (ticks, ns))
        .expect("five readings")
}

/// Whether the counter is safe to time with: it runs at a constant rate in every power state
/// (CPUID's invariant-TSC bit), and the kernel trusts it as its own clocksource, which means it
/// also found the counters of all CPUs in step.
fn usable() -> bool {
    arch::invariant() && kernel_times_with_counter()
}

/// Whether the kernel's clocksource is the counter (`tsc`); false if that cannot be read.
fn kernel_times_with_counter() -> bool {
    let path = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    std::fs::read_to_string(path).is_ok_and(|name| name.trim() == "tsc")
}

#[cfg(target_arch = "x86_64")]
mod arch {
    use core::arch::x86_64::{__cpuid, _mm_lfence, _rdtsc};

    #[inline(always)]
    pub fn read() -> u64 {
        // SAFETY: RDTSC exists on every x86_64 CPU.
        unsafe { _rdtsc() }
    }

    pub fn fence() {
        // SAFETY: LFENCE exists on every x86_64 CPU.
        unsafe { _mm_lfence() }
    }

    /// CPUID's invariant-TSC bit: the counter runs at a constant rate in every power state.
    /// Leaf 0x8000_0000 reports the highest extended leaf; 0x8000_0007 is asked only if it exists.
    pub fn invariant() -> bool {
        __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
    }
}

/// Elsewhere there is no counter to use: `invariant` is false, so nothing reads it.
#[cfg(not(target_arch = "x86_64"))]
mod arch {
    pub fn read() -> u64 {
        0
    }

    pub fn fence() {}

    pub fn invariant() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_plausible_or_absent() {
        match ticks_per_ns() {
            Some(rate) => assert!((0.1..=20.0).contains(&rate), "{rate} ticks per ns"),
            None => assert!(!usable(), "a usable counter failed to calibrate"),
        }
    }

    #[test]
    fn the_counter_moves_forward() {
        if ticks_per_ns().is_none() {
            return;
        }
        let first = read_ordered();
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(read_ordered() > first);
    }
}
