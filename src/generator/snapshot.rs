//! Saving a generator's state and starting a new one from it, so that a restart is safe even if
//! the clock now reads earlier than before.

use super::config::Versioned;
use super::word::Word;
use super::{Config, Generator, PoolTooSmall};
use crate::clock::Clock;
use crate::time::Units;
use std::sync::atomic::Ordering;

/// A generator's state at one moment (SPEC §3): what to save when a generator stops, to
/// [`Generator::restore`] it from. The fields are those of the Go package's `GeneratorSnapshot`
/// and SPEC §3, named for what they hold: `last_unit` is its `WallHi` (`wall_hi`),
/// `other_last_unit` its `WallSafe` and `clock_regressions` its `Drifts`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The partition and sequence bounds.
    pub config: Config,
    /// The next sequence the last unit would have issued; `sequence_max + 1` when it is spent.
    pub sequence: u32,
    /// The clock when the snapshot was taken, if it was inside the format's range.
    pub now: Option<Units>,
    /// The highest unit of the current timeline.
    pub last_unit: Units,
    /// The highest unit the other timeline reached.
    pub other_last_unit: Units,
    /// Clock regressions handled; the low bit is the current tick-tock bit.
    pub clock_regressions: u64,
}

impl Generator {
    /// The state now. Take it when the generator is offline to restore it later; taken while
    /// others generate, it is already stale when it returns (fine for monitoring).
    ///
    /// ```
    /// use sno::{Config, Generator, RealtimeClock};
    ///
    /// let generator = Generator::new(Config::new(1));
    /// let id = generator.generate(0, &RealtimeClock)?;
    /// let saved = generator.snapshot(&RealtimeClock);
    /// assert_eq!(saved.last_unit, id.time());
    /// assert_eq!((saved.config, saved.clock_regressions), (Config::new(1), 0));
    /// # Ok::<(), sno::GenerateError>(())
    /// ```
    pub fn snapshot(&self, clock: &impl Clock) -> Snapshot {
        let _consistent = self.regression_lock.lock();
        self.snapshot_locked(clock)
    }

    /// [`Generator::snapshot`], or `None` if a clock regression is being handled right now. For
    /// callers that must not wait: the one handling it may have died holding the lock.
    ///
    /// ```
    /// use sno::{Config, Generator, RealtimeClock};
    ///
    /// let generator = Generator::new(Config::new(1));
    /// assert!(generator.try_snapshot(&RealtimeClock).is_some());
    /// ```
    pub fn try_snapshot(&self, clock: &impl Clock) -> Option<Snapshot> {
        let _consistent = self.regression_lock.try_lock()?;
        Some(self.snapshot_locked(clock))
    }

    fn snapshot_locked(&self, clock: &impl Clock) -> Snapshot {
        let Versioned { config, epoch } = self.versioned_config();
        let current = Word::unpack(self.claiming.word.load(Ordering::Acquire));
        let spent = current.spent || current.epoch != epoch || current.count >= config.pool();
        Snapshot {
            config,
            sequence: if spent {
                config.sequence_max as u32 + 1
            } else {
                config.sequence_min as u32 + current.count
            },
            now: Units::from_unix_millis(clock.unix_millis()).ok(),
            last_unit: current.unit,
            other_last_unit: Units::saturating(self.other_last_unit.load(Ordering::Acquire)),
            clock_regressions: self.clock_regressions.load(Ordering::Acquire),
        }
    }

    /// A generator that continues from `snapshot`: it never issues an ID in a unit at or before
    /// `last_unit` with the same tick-tock bit, nor in one at or before `other_last_unit` with the other.
    /// The snapshot's last unit counts as spent, so its `sequence` (and `now`) are not needed:
    /// at most 4 ms of capacity is given up. The regression count (`clock_regressions`) carries on; the
    /// other counters start at zero.
    ///
    /// ```
    /// use sno::{Clock, Config, Generator};
    /// use std::cell::Cell;
    ///
    /// /// A clock set by hand, to restart "after" it went back.
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
    /// let clock = Manual(Cell::new(1_700_000_000_000));
    /// let before = Generator::new(Config::new(1));
    /// let last = before.generate(0, &clock)?;
    /// let saved = before.snapshot(&clock); // at shutdown, written somewhere durable
    ///
    /// clock.0.set(1_700_000_000_000 - 5_000); // restarted with the clock 5 s behind
    /// let after = Generator::restore(&saved)?;
    /// let next = after.generate(0, &clock)?;
    /// assert!(next.tick_tock() && !last.tick_tock(), "the other timeline: no repeat");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn restore(snapshot: &Snapshot) -> Result<Generator, PoolTooSmall> {
        let generator = Generator::new(snapshot.config);
        generator.restore_in_place(snapshot)?;
        Ok(generator)
    }

    /// [`Generator::restore`] into this generator, for one that lives in memory it does not own.
    /// Only while no caller is generating.
    ///
    /// ```
    /// use sno::{Config, Generator, RealtimeClock};
    ///
    /// static GENERATOR: Generator = Generator::new(Config::new(1));
    ///
    /// let saved = Generator::new(Config::new(2)).snapshot(&RealtimeClock);
    /// GENERATOR.restore_in_place(&saved)?;
    /// assert_eq!(GENERATOR.config(), Config::new(2));
    /// # Ok::<(), sno::PoolTooSmall>(())
    /// ```
    pub fn restore_in_place(&self, snapshot: &Snapshot) -> Result<(), PoolTooSmall> {
        let config = Config::new(snapshot.config.partition)
            .with_sequence_bounds(snapshot.config.sequence_min, snapshot.config.sequence_max)?;
        let _serialized = self.regression_lock.lock();
        let epoch = self.versioned_config().epoch;
        let last = Word {
            spent: true,
            ..Word::fresh(
                snapshot.last_unit,
                snapshot.clock_regressions & 1 == 1,
                epoch,
            )
        };
        self.config
            .store(Versioned { config, epoch }.pack(), Ordering::Release);
        self.claiming.word.store(last.pack(), Ordering::Release);
        self.other_last_unit
            .store(snapshot.other_last_unit.get(), Ordering::Release);
        self.clock_regressions
            .store(snapshot.clock_regressions, Ordering::Release);
        for counter in [
            &self.claiming.claimed_in_past_units,
            &self.overflow_stalls,
            &self.regression_waits,
            &self.regression_wait_until,
        ] {
            counter.store(0, Ordering::Release);
        }
        Ok(())
    }
}
