//! IDs for caller-chosen times (backfills) that never repeat one another.
//!
//! # Why a cursor, and why it moves forward
//!
//! A backfill ID's time and meta are the caller's; only the tick-tock bit and the sequence (17
//! bits) are left to make it unique. The live generator cannot share them: it may have used any
//! sequence of any past unit, in either timeline, and it keeps no memory of past units. So
//! backfill IDs are stamped with a partition of their own (the extension's
//! `sno.backfill_partition`), and inside it each meta has a cursor that works like the live
//! generator, with the caller's time as its clock:
//!
//! - A call for the cursor's unit or a later one takes the next sequence there (a full pool of
//!   65,536 per unit and meta, and a second one in the other timeline while it has not reached
//!   the unit).
//! - A call for an earlier unit is a "clock regression": the cursor flips to the other tick-tock
//!   timeline, if that one has not reached the unit yet, and goes on from there.
//! - Where both timelines have reached the unit (a third pass over the same span), or the unit's
//!   pool is spent, the call fails instead of waiting: a backfill's clock never moves by itself.
//!
//! The alternatives were weighed: an allocator that remembers every unit it handed out is exact
//! in any order but needs memory and a durable write per distinct unit (a backfill of a year of
//! rows a minute apart touches half a million units); counting backfills down from the top of
//! the live partition's pool collides with any unit the live generator filled; numbering rows
//! within one query is unique only inside that query. A cursor needs a few words per meta, and
//! its durable state is a high-water mark like the live generator's, written ahead of use. What
//! it asks of the caller is an order: a backfill sorted by time (`ORDER BY` the time column)
//! makes one pass, and each meta (table) has its own cursor, so backfills of different tables do
//! not disturb each other.

use crate::time::Units;

/// Sequences per unit: a backfill partition is the cursor's alone, so all of them.
pub const BACKFILL_POOL: u32 = 1 << 16;

/// One meta's backfill position. Plain data: the owner serialises calls (the extension keeps
/// the cursors in shared memory under a lock, since every new reservation is a disk write).
///
/// ```
/// use sno::generator::BackfillCursor;
/// use sno::{Parts, Sno, Units};
///
/// const BACKFILL_PARTITION: u16 = 1001; // no live generator stamps this one
/// let mut cursor = BackfillCursor::new();
/// let mut backfill = |unix_ms: i64| -> Result<Sno, Box<dyn std::error::Error>> {
///     let time = Units::from_unix_millis(unix_ms)?;
///     let slot = cursor.take(time)?;
///     Ok(Sno::from_parts(Parts {
///         time,
///         tick_tock: slot.tick,
///         meta: 2,
///         partition: BACKFILL_PARTITION,
///         sequence: slot.sequence,
///     }))
/// };
/// // Rows in time order: one pass, all in the first timeline.
/// let a = backfill(1_400_000_000_000)?;
/// let b = backfill(1_400_000_000_000)?;
/// let c = backfill(1_500_000_000_000)?;
/// assert!(a < b && b < c);
/// // Going back starts the other timeline; a third pass over those times is refused.
/// let again = backfill(1_400_000_000_000)?;
/// assert!(again.tick_tock() && again != a && again != b);
/// assert!(backfill(1_300_000_000_000).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct BackfillCursor {
    /// The current timeline's highest unit; with `count`, where its next ID goes.
    pub unit: u64,
    /// Sequences used in `unit`; [`BACKFILL_POOL`] once it is spent.
    pub count: u32,
    /// Which timeline (tick-tock bit) is current.
    pub tick: bool,
    /// Whether any ID was ever made (an unused cursor may start anywhere).
    pub used: bool,
    /// The other timeline's highest unit, if it was ever used.
    pub other_unit: Option<u64>,
    /// Times the cursor flipped timeline.
    pub flips: u64,
}

/// Where a backfill ID goes: the tick-tock bit and sequence of the requested unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BackfillSlot {
    /// The ID's tick-tock bit: the cursor's current timeline.
    pub tick: bool,
    /// The ID's sequence.
    pub sequence: u16,
}

/// Why a cursor cannot make an ID for a unit.
///
/// ```
/// use sno::generator::{BackfillCursor, BackfillError};
/// use sno::Units;
///
/// let mut cursor = BackfillCursor::new();
/// let [t1, t2, t3] = [3, 2, 1].map(|u| Units::new(u).unwrap());
/// cursor.take(t1)?; // the first timeline reaches t1
/// cursor.take(t2)?; // back: the second timeline, which reaches t2
/// let err = cursor.take(t3).unwrap_err(); // back again, where both have been
/// assert_eq!(err, BackfillError::BothTimelinesUsed { current: t2, other: t1 });
/// # Ok::<(), BackfillError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackfillError {
    /// Both timelines have reached this unit: an ID for it could repeat an earlier one.
    BothTimelinesUsed {
        /// The current timeline's highest unit.
        current: Units,
        /// The other timeline's highest unit.
        other: Units,
    },
    /// All [`BACKFILL_POOL`] sequences of this unit are used, in both timelines or in the
    /// current one while the other has reached the unit.
    PoolSpent,
}

impl BackfillCursor {
    /// A cursor that has made no ID: its first call may be for any unit. See
    /// [`BackfillCursor`] for an example.
    pub const fn new() -> BackfillCursor {
        BackfillCursor {
            unit: 0,
            count: 0,
            tick: false,
            used: false,
            other_unit: None,
            flips: 0,
        }
    }

    /// A cursor that continues after a recorded position: `unit` counts as spent, so nothing at
    /// or before it is issued again in that timeline.
    ///
    /// ```
    /// use sno::generator::BackfillCursor;
    /// use sno::Units;
    ///
    /// let recorded = Units::new(1_000).unwrap();
    /// let mut cursor = BackfillCursor::restored(recorded.get(), false, None, 0);
    /// // The recorded unit itself continues in the other timeline.
    /// assert!(cursor.take(recorded)?.tick);
    /// # Ok::<(), sno::generator::BackfillError>(())
    /// ```
    pub const fn restored(unit: u64, tick: bool, other_unit: Option<u64>, flips: u64) -> Self {
        BackfillCursor {
            unit,
            count: BACKFILL_POOL,
            tick,
            used: true,
            other_unit,
            flips,
        }
    }

    /// Takes the next slot of `unit`, moving the cursor (see the module documentation).
    ///
    /// ```
    /// use sno::generator::BackfillCursor;
    /// use sno::Units;
    ///
    /// let mut cursor = BackfillCursor::new();
    /// let unit = Units::new(500).unwrap();
    /// assert_eq!(cursor.take(unit)?.sequence, 0);
    /// assert_eq!(cursor.take(unit)?.sequence, 1);
    /// # Ok::<(), sno::generator::BackfillError>(())
    /// ```
    pub fn take(&mut self, unit: Units) -> Result<BackfillSlot, BackfillError> {
        let unit = unit.get();
        if !self.used || unit > self.unit {
            self.used = true;
            self.unit = unit;
            self.count = 0;
        } else if unit < self.unit {
            self.flip_to(unit)?;
        } else if self.count >= BACKFILL_POOL {
            // The other timeline may still hold this unit: a second pool.
            self.flip_to(unit).map_err(|_| BackfillError::PoolSpent)?;
        }
        let sequence = self.count as u16;
        self.count += 1;
        Ok(BackfillSlot {
            tick: self.tick,
            sequence,
        })
    }

    /// Starts `unit` in the other timeline, if that one has not reached it.
    fn flip_to(&mut self, unit: u64) -> Result<(), BackfillError> {
        if let Some(other) = self.other_unit {
            if unit <= other {
                return Err(BackfillError::BothTimelinesUsed {
                    current: Units::new(self.unit).unwrap_or(Units::MAX),
                    other: Units::new(other).unwrap_or(Units::MAX),
                });
            }
        }
        self.other_unit = Some(self.unit);
        self.unit = unit;
        self.count = 0;
        self.tick = !self.tick;
        self.flips += 1;
        Ok(())
    }
}

impl Default for BackfillCursor {
    fn default() -> BackfillCursor {
        BackfillCursor::new()
    }
}

impl std::fmt::Display for BackfillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackfillError::BothTimelinesUsed { .. } => {
                f.write_str("both backfill timelines already reach this time")
            }
            BackfillError::PoolSpent => {
                f.write_str("all 65,536 backfill sequences of this 4 ms unit are used")
            }
        }
    }
}

impl std::error::Error for BackfillError {}
