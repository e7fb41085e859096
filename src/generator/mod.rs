//! The sno generator (SPEC §3): time-ordered IDs that never repeat, whatever the clock does.
//!
//! The state is a handful of atomics with no pointers, so one generator can live in memory it
//! does not own (PostgreSQL shared memory) and serve many processes at once:
//!
//! - `word` holds the current unit, tick-tock bit and sequence count (`src/generator/word.rs`).
//!   Every claim of sequences is one compare-and-swap on it: the hot path takes no lock. It has a
//!   cache line to itself, so that callers serving IDs from a [`Lease`] (which only read the
//!   settings and the regression count) are not slowed by other processes' claims.
//! - `other_last_unit` (the other timeline's highest unit) and `clock_regressions` change only when the clock goes
//!   backwards, under `regression_lock`. Only holders of that lock read `other_last_unit`, and they
//!   update it right after the swap that flips the tick-tock bit, so no caller ever flips on a
//!   stale `other_last_unit`.
//! - `config` holds the partition and sequence bounds with an epoch. A caller that finds the
//!   word counted under another epoch marks the unit spent, so new bounds never mix with the
//!   sequences an earlier setting already issued in the same unit.
//!
//! Each attempt reads the clock after loading the word. A reading taken before the load could be
//! older than the word (another process read the clock later and won the swap first), which is
//! not a regression; with the reading after the load, a clock behind the word really went back.

mod backfill;
mod claim;
mod config;
mod lease;
mod lock;
mod snapshot;
mod word;

pub use backfill::{BackfillCursor, BackfillError, BackfillSlot, BACKFILL_POOL};
pub use config::{Config, PoolTooSmall, MIN_POOL};
pub use lease::{Lease, FRESH_RUN_NS, MAX_RUN};
pub use snapshot::Snapshot;

use crate::clock::Clock;
use crate::id::Sno;
use crate::time::{TimeRangeError, Units};
use claim::Claim;
use config::Versioned;
use lock::SpinLock;
use std::sync::atomic::{AtomicU64, Ordering};
use word::{Word, EPOCHS};

/// Makes sno IDs. See the module documentation for how it stays unique.
///
/// One generator per partition: share it (by reference, in a `static`, or in memory shared
/// between processes) among every caller that stamps that partition. Each thread may take IDs
/// straight from it, or keep a [`Lease`] to take them in runs.
///
/// ```
/// use sno::{Config, Generator, Lease, RealtimeClock, Sno};
/// use std::collections::HashSet;
///
/// static GENERATOR: Generator = Generator::new(Config::new(7));
///
/// let ids: Vec<Sno> = std::thread::scope(|s| {
///     let threads: Vec<_> = (0..4)
///         .map(|_| {
///             s.spawn(|| {
///                 let mut lease = Lease::new();
///                 (0..1000)
///                     .map(|_| lease.generate(&GENERATOR, 0, &RealtimeClock))
///                     .collect::<Result<Vec<_>, _>>()
///             })
///         })
///         .collect();
///     threads.into_iter().flat_map(|t| t.join().unwrap().unwrap()).collect()
/// });
/// assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 4000);
/// ```
#[derive(Debug)]
#[repr(C)]
pub struct Generator {
    claiming: Claiming,
    config: AtomicU64,
    other_last_unit: AtomicU64,
    clock_regressions: AtomicU64,
    regression_lock: SpinLock,
    overflow_stalls: AtomicU64,
    regression_waits: AtomicU64,
    /// The unit the last regression wait waited for (0: none yet).
    regression_wait_until: AtomicU64,
}

/// What every claim changes, on a cache line of its own.
#[derive(Debug)]
#[repr(C, align(64))]
struct Claiming {
    word: AtomicU64,
    /// Sequences claimed in units that are over; `claimed` = this + the current word's count.
    claimed_in_past_units: AtomicU64,
}

/// Why no ID could be made.
///
/// ```
/// use sno::{Clock, Config, GenerateError, Generator};
///
/// /// A clock stuck in 1970, before the format's epoch.
/// struct Unset;
///
/// impl Clock for Unset {
///     fn unix_millis(&self) -> i64 {
///         0
///     }
///     fn wait_millis(&self, _millis: i64) {}
/// }
///
/// let err = Generator::new(Config::new(1)).generate(0, &Unset).unwrap_err();
/// assert!(matches!(err, GenerateError::TimeOutOfRange(e) if e.unix_ms == 0));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GenerateError {
    /// The clock (or the given time) is outside 2010..2079, which the format cannot hold.
    TimeOutOfRange(TimeRangeError),
}

/// Counters and state for monitoring ([`Generator::stats`]). Exact when no call is in progress.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The partition and sequence bounds in force.
    pub config: Config,
    /// The tick-tock bit of the current timeline.
    pub tick_tock: bool,
    /// The highest unit of the current timeline.
    pub last_unit: Units,
    /// Sequences taken from the pools of the current timeline's units: one per ID made by
    /// [`Generator::generate`], and whole runs for a [`Lease`], including the part of a run
    /// left unused when its unit ended.
    pub claimed: u64,
    /// Calls that waited for a new unit because the pool of the current one was spent.
    pub overflow_stalls: u64,
    /// Clock regressions handled by flipping the tick-tock bit.
    pub clock_regressions: u64,
    /// Calls that waited because the clock went back into the span of the other timeline.
    pub regression_waits: u64,
    /// The unit the last such wait waited for the clock to reach ([`Units::MIN`]: none yet).
    pub regression_wait_until: Units,
}

impl Generator {
    /// A generator that has issued nothing. A `const fn`, so it can be a `static`.
    ///
    /// A generator that starts afresh knows nothing of IDs an earlier one of the same
    /// partition made: to continue after a restart whatever the clock did, save a
    /// [`Snapshot`] and [`Generator::restore`] it.
    ///
    /// ```
    /// use sno::{Config, Generator};
    ///
    /// let generator = Generator::new(Config::new(42));
    /// assert_eq!(generator.config().partition, 42);
    /// assert_eq!(generator.stats().claimed, 0);
    /// ```
    pub const fn new(config: Config) -> Generator {
        Generator {
            claiming: Claiming {
                word: AtomicU64::new(Word::fresh(Units::MIN, false, 0).pack()),
                claimed_in_past_units: AtomicU64::new(0),
            },
            config: AtomicU64::new(Versioned { config, epoch: 0 }.pack()),
            other_last_unit: AtomicU64::new(0),
            clock_regressions: AtomicU64::new(0),
            regression_lock: SpinLock::new(),
            overflow_stalls: AtomicU64::new(0),
            regression_waits: AtomicU64::new(0),
            regression_wait_until: AtomicU64::new(0),
        }
    }

    /// A new ID for the current time of `clock`, stamped with `meta`.
    ///
    /// Never fails for a clock inside the format's range and never repeats an ID: it waits instead
    /// when the current unit's sequences are spent (at most until the next 4 ms unit) or when
    /// the clock went back into a span both timelines have used (until it is past that span).
    ///
    /// ```
    /// use sno::{Config, Generator, RealtimeClock};
    ///
    /// let generator = Generator::new(Config::new(3));
    /// let id = generator.generate(12, &RealtimeClock)?;
    /// assert_eq!((id.meta(), id.partition()), (12, 3));
    /// assert_ne!(generator.generate(12, &RealtimeClock)?, id);
    /// # Ok::<(), sno::GenerateError>(())
    /// ```
    pub fn generate(&self, meta: u8, clock: &impl Clock) -> Result<Sno, GenerateError> {
        Ok(self.claim(1, clock)?.first_id(meta))
    }

    /// Takes up to `wanted` consecutive sequences (at least one) of the unit the clock is in,
    /// waiting as [`Generator::generate`] does. Fewer when the unit's pool has fewer left.
    /// Inlined: a call and a claim passed back through memory added a third to `generate`.
    #[inline(always)]
    fn claim(&self, wanted: u32, clock: &impl Clock) -> Result<Claim, GenerateError> {
        // Each call counts once as stalled or waiting, however many short waits it takes.
        let mut stalled = false;
        let mut waited = false;
        loop {
            let Versioned { config, epoch } = self.versioned_config();
            let current = Word::unpack(self.claiming.word.load(Ordering::Acquire));
            if current.epoch != epoch {
                self.mark_spent(current, epoch);
                continue;
            }
            // Read after the load: a reading taken earlier could predate the word and look like a
            // regression, or, swapped in after another caller's tick-tock flip, drag the new
            // timeline back up to where the clock was before it went back.
            let now = read_units(clock)?;
            if now < current.unit {
                if self.on_regression(clock)? == Regression::Waited && !waited {
                    waited = true;
                    self.regression_waits.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            let (base, next) = if now > current.unit {
                let fresh = Word::fresh(now, current.tick_tock, epoch);
                (fresh, fresh.with_more(wanted.min(config.pool())))
            } else if !current.spent && current.count < config.pool() {
                let left = config.pool() - current.count;
                (current, current.with_more(wanted.min(left)))
            } else {
                if !stalled && !current.spent {
                    stalled = true;
                    self.overflow_stalls.fetch_add(1, Ordering::Relaxed);
                }
                wait_until(clock, Units::new(current.unit.get() + 1))?;
                continue;
            };
            if self.replace(current, next) {
                return Ok(Claim::between(base, next, epoch, config));
            }
        }
    }

    /// The partition and sequence bounds in force. See [`Generator::reconfigure`].
    pub fn config(&self) -> Config {
        self.versioned_config().config
    }

    /// Replaces the partition and sequence bounds. Callers already under way may still finish
    /// with the old settings; later ones use the new settings from the next 4 ms unit on.
    ///
    /// ```
    /// use sno::{Config, Generator};
    ///
    /// let generator = Generator::new(Config::new(1));
    /// // Share partition 1 with another generator that takes 32768..=65535.
    /// let lower_half = Config::new(1).with_sequence_bounds(0, 32767)?;
    /// generator.reconfigure(lower_half);
    /// assert_eq!(generator.config(), lower_half);
    /// # Ok::<(), sno::PoolTooSmall>(())
    /// ```
    pub fn reconfigure(&self, config: Config) {
        let _serialized = self.regression_lock.lock();
        let epoch = (self.versioned_config().epoch + 1) % EPOCHS;
        self.config
            .store(Versioned { config, epoch }.pack(), Ordering::Release);
    }

    /// Counters and state for monitoring.
    ///
    /// ```
    /// use sno::{Clock, Config, Generator};
    /// use std::cell::Cell;
    ///
    /// /// A clock that moves only when waited on.
    /// struct Still(Cell<i64>);
    ///
    /// impl Clock for Still {
    ///     fn unix_millis(&self) -> i64 {
    ///         self.0.get()
    ///     }
    ///     fn wait_millis(&self, millis: i64) {
    ///         self.0.set(self.0.get() + millis)
    ///     }
    /// }
    ///
    /// // Four sequences per 4 ms unit: the fifth ID waits for the next unit.
    /// let generator = Generator::new(Config::new(1).with_sequence_bounds(0, 3)?);
    /// let clock = Still(Cell::new(1_700_000_000_000));
    /// for _ in 0..5 {
    ///     generator.generate(0, &clock)?;
    /// }
    /// let stats = generator.stats();
    /// assert_eq!((stats.claimed, stats.overflow_stalls), (5, 1));
    /// assert_eq!(stats.last_unit.to_unix_millis(), 1_700_000_000_004);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let current = Word::unpack(self.claiming.word.load(Ordering::Acquire));
        Stats {
            config: self.config(),
            tick_tock: current.tick_tock,
            last_unit: current.unit,
            claimed: self.claiming.claimed_in_past_units.load(Ordering::Acquire)
                + current.count as u64,
            overflow_stalls: self.overflow_stalls.load(Ordering::Relaxed),
            clock_regressions: self.clock_regressions.load(Ordering::Relaxed),
            regression_waits: self.regression_waits.load(Ordering::Relaxed),
            regression_wait_until: Units::saturating(
                self.regression_wait_until.load(Ordering::Relaxed),
            ),
        }
    }

    /// Clock regressions handled so far (as in a [`Snapshot`]): one load, for hot paths
    /// that only need to notice a change. [`Clock`] has an example of a regression.
    ///
    /// ```
    /// use sno::{Config, Generator, RealtimeClock};
    ///
    /// let generator = Generator::new(Config::new(1));
    /// generator.generate(0, &RealtimeClock)?;
    /// assert_eq!(generator.clock_regressions(), generator.stats().clock_regressions);
    /// # Ok::<(), sno::GenerateError>(())
    /// ```
    pub fn clock_regressions(&self) -> u64 {
        self.clock_regressions.load(Ordering::Acquire)
    }

    /// Calls that stalled on a spent pool so far: one load, like [`Generator::clock_regressions`].
    /// The same count as [`Stats::overflow_stalls`]; see [`Generator::stats`] for an example.
    ///
    /// ```
    /// use sno::{Config, Generator};
    ///
    /// assert_eq!(Generator::new(Config::new(1)).overflow_stalls(), 0);
    /// ```
    pub fn overflow_stalls(&self) -> u64 {
        self.overflow_stalls.load(Ordering::Relaxed)
    }

    /// Whether the settings and the timeline are still the ones of `epoch` and `clock_regressions`: two
    /// loads of read-mostly memory, for leases checking that their run may still be used.
    fn unchanged_since(&self, epoch: u8, clock_regressions: u64) -> bool {
        self.versioned_config().epoch == epoch && self.clock_regressions() == clock_regressions
    }

    fn versioned_config(&self) -> Versioned {
        Versioned::unpack(self.config.load(Ordering::Acquire))
    }

    /// Swaps `current` for `next`; false if another caller changed the word first.
    fn replace(&self, current: Word, next: Word) -> bool {
        let swapped = self
            .claiming
            .word
            .compare_exchange(
                current.pack(),
                next.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok();
        if swapped && current.is_replaced_by(&next) {
            self.claiming
                .claimed_in_past_units
                .fetch_add(current.count as u64, Ordering::AcqRel);
        }
        swapped
    }

    /// Stops `current`'s unit from issuing more IDs, because it was counted under other settings.
    #[cold]
    fn mark_spent(&self, current: Word, epoch: u8) {
        let spent = Word {
            spent: true,
            epoch,
            ..current
        };
        self.replace(current, spent);
    }

    /// The clock reads earlier than the current timeline's last unit. Either start a new timeline
    /// with the other tick-tock bit, or, if that timeline already used this span, wait until the
    /// clock is back at the current one's last unit. Returns when the caller should retry.
    #[cold]
    fn on_regression(&self, clock: &impl Clock) -> Result<Regression, GenerateError> {
        let guard = self.regression_lock.lock();
        loop {
            let current = Word::unpack(self.claiming.word.load(Ordering::Acquire));
            let now = read_units(clock)?;
            if now >= current.unit {
                return Ok(Regression::Handled); // by someone else, or the clock caught up
            }
            let other_last_unit = Units::saturating(self.other_last_unit.load(Ordering::Acquire));
            if now > other_last_unit {
                let flipped = Word::fresh(now, !current.tick_tock, current.epoch);
                if self.replace(current, flipped) {
                    self.other_last_unit
                        .store(current.unit.get(), Ordering::Release);
                    self.clock_regressions.fetch_add(1, Ordering::Relaxed);
                    return Ok(Regression::Handled);
                }
            } else {
                drop(guard);
                self.regression_wait_until
                    .store(current.unit.get(), Ordering::Relaxed);
                wait_until(clock, Some(current.unit))?;
                return Ok(Regression::Waited);
            }
        }
    }
}

/// What handling a clock regression did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Regression {
    /// A new timeline was started, or there was nothing left to do.
    Handled,
    /// The clock was in a span both timelines used; the caller waited (perhaps only part way).
    Waited,
}

impl Default for Generator {
    fn default() -> Generator {
        Generator::new(Config::default())
    }
}

fn read_units(clock: &impl Clock) -> Result<Units, GenerateError> {
    Units::from_unix_millis(clock.unix_millis()).map_err(GenerateError::TimeOutOfRange)
}

/// Waits until `clock` may have reached `unit` (the caller checks). `None` is past the format's
/// last unit: there is nothing to wait for, so report the clock as out of range.
fn wait_until(clock: &impl Clock, unit: Option<Units>) -> Result<(), GenerateError> {
    let Some(unit) = unit else {
        return Err(GenerateError::TimeOutOfRange(TimeRangeError {
            unix_ms: Units::MAX_UNIX_MS + 1,
        }));
    };
    let remaining = unit.to_unix_millis() - clock.unix_millis();
    if remaining > 0 {
        clock.wait_millis(remaining);
    }
    Ok(())
}

impl std::fmt::Display for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenerateError::TimeOutOfRange(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GenerateError {}
