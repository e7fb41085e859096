//! Saving a generator's state and starting a new one from it, so that a restart is safe even if
//! the clock now reads earlier than before.

use super::config::Versioned;
use super::word::Word;
use super::{Config, Generator, PoolTooSmall};
use crate::clock::Clock;
use crate::time::Units;
use std::sync::atomic::Ordering;

/// A generator's state at one moment (the fields of the reference's `GeneratorSnapshot`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub config: Config,
    /// The next sequence the last unit would have issued; `sequence_max + 1` when it is spent.
    pub sequence: u32,
    /// The clock when the snapshot was taken, if it was inside the format's range.
    pub now: Option<Units>,
    /// The highest unit of the current timeline.
    pub wall_hi: Units,
    /// The highest unit the other timeline reached.
    pub wall_safe: Units,
    /// Clock regressions handled; the low bit is the current tick-tock bit.
    pub drifts: u64,
}

impl Generator {
    /// The state now. Take it when the generator is offline to restore it later; taken while
    /// others generate, it is already stale when it returns (fine for monitoring).
    pub fn snapshot(&self, clock: &impl Clock) -> Snapshot {
        let _consistent = self.regression_lock.lock();
        self.snapshot_locked(clock)
    }

    /// [`Generator::snapshot`], or `None` if a clock regression is being handled right now. For
    /// callers that must not wait: the one handling it may have died holding the lock.
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
            wall_hi: current.unit,
            wall_safe: Units::new(self.wall_safe.load(Ordering::Acquire)).unwrap_or(Units::MAX),
            drifts: self.drifts.load(Ordering::Acquire),
        }
    }

    /// A generator that continues from `snapshot`: it never issues an ID in a unit at or before
    /// `wall_hi` with the same tick-tock bit, nor in one at or before `wall_safe` with the other.
    /// The snapshot's last unit counts as spent, so its `sequence` (and `now`) are not needed:
    /// at most 4 ms of capacity is given up. The regression count (`drifts`) carries on; the
    /// other counters start at zero.
    pub fn restore(snapshot: &Snapshot) -> Result<Generator, PoolTooSmall> {
        let generator = Generator::new(snapshot.config);
        generator.restore_in_place(snapshot)?;
        Ok(generator)
    }

    /// [`Generator::restore`] into this generator, for one that lives in memory it does not own.
    /// Only while no caller is generating.
    pub fn restore_in_place(&self, snapshot: &Snapshot) -> Result<(), PoolTooSmall> {
        let config = Config::new(snapshot.config.partition)
            .with_sequence_bounds(snapshot.config.sequence_min, snapshot.config.sequence_max)?;
        let _serialized = self.regression_lock.lock();
        let epoch = self.versioned_config().epoch;
        let last = Word {
            spent: true,
            ..Word::fresh(snapshot.wall_hi, snapshot.drifts & 1 == 1, epoch)
        };
        self.config
            .store(Versioned { config, epoch }.pack(), Ordering::Release);
        self.claiming.word.store(last.pack(), Ordering::Release);
        self.wall_safe
            .store(snapshot.wall_safe.get(), Ordering::Release);
        self.drifts.store(snapshot.drifts, Ordering::Release);
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
