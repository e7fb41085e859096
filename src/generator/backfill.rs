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
///         tick_tock: slot.tick_tock,
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
    last_unit: u64,
    /// Sequences used in `last_unit`; [`BACKFILL_POOL`] once it is spent.
    count: u32,
    /// Which timeline (tick-tock bit) is current.
    tick_tock: bool,
    /// Whether any ID was ever made (an unused cursor may start anywhere).
    used: bool,
    /// The other timeline's highest unit, if it was ever used.
    other_last_unit: Option<u64>,
    /// Calls for a unit before the cursor's that turned it to the other timeline.
    clock_regressions: u64,
}

/// Where a backfill ID goes: the tick-tock bit and sequence of the requested unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BackfillSlot {
    /// The ID's tick-tock bit: the cursor's current timeline.
    pub tick_tock: bool,
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
            last_unit: 0,
            count: 0,
            tick_tock: false,
            used: false,
            other_last_unit: None,
            clock_regressions: 0,
        }
    }

    /// A cursor that continues after a recorded position: `through` counts as spent, so nothing
    /// at or before it is issued again in the timeline `tick_tock`, nor at or before
    /// `other_through` in the other.
    ///
    /// ```
    /// use sno::generator::BackfillCursor;
    /// use sno::Units;
    ///
    /// let recorded = Units::new(1_000).unwrap();
    /// let mut cursor = BackfillCursor::restored(recorded.get(), false, None, 0);
    /// assert_eq!(cursor.last_unit(), recorded.get());
    /// // The recorded unit itself continues in the other timeline.
    /// assert!(cursor.take(recorded)?.tick_tock);
    /// # Ok::<(), sno::generator::BackfillError>(())
    /// ```
    pub const fn restored(
        through: u64,
        tick_tock: bool,
        other_through: Option<u64>,
        clock_regressions: u64,
    ) -> Self {
        BackfillCursor {
            last_unit: through,
            count: BACKFILL_POOL,
            tick_tock,
            used: true,
            other_last_unit: other_through,
            clock_regressions,
        }
    }

    /// Whether the cursor has made an ID (or continues a recorded one).
    pub const fn is_used(&self) -> bool {
        self.used
    }

    /// The current timeline's highest unit (0 for an unused cursor).
    pub const fn last_unit(&self) -> u64 {
        self.last_unit
    }

    /// The current timeline's tick-tock bit.
    pub const fn tick_tock(&self) -> bool {
        self.tick_tock
    }

    /// The other timeline's highest unit, if it was ever used.
    pub const fn other_last_unit(&self) -> Option<u64> {
        self.other_last_unit
    }

    /// How many calls for an earlier unit turned the cursor to the other timeline; its low bit
    /// is the tick-tock bit.
    pub const fn clock_regressions(&self) -> u64 {
        self.clock_regressions
    }

    /// Makes the other timeline reach at least `unit`, so that the cursor never returns to a
    /// unit there at or before it: for an owner whose record of that timeline (written ahead of
    /// use) reaches further than the cursor knows.
    ///
    /// ```
    /// use sno::generator::BackfillCursor;
    /// use sno::Units;
    ///
    /// let mut cursor = BackfillCursor::new();
    /// cursor.take(Units::new(10).unwrap())?;
    /// cursor.take(Units::new(5).unwrap())?; // the other timeline
    /// cursor.bound_other_timeline(20);
    /// assert_eq!(cursor.other_last_unit(), Some(20));
    /// assert!(cursor.take(Units::new(4).unwrap()).is_err()); // both timelines reach unit 4
    /// # Ok::<(), sno::generator::BackfillError>(())
    /// ```
    pub fn bound_other_timeline(&mut self, unit: u64) {
        self.other_last_unit = Some(self.other_last_unit.map_or(unit, |other| other.max(unit)));
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
        if !self.used || unit > self.last_unit {
            self.used = true;
            self.last_unit = unit;
            self.count = 0;
        } else if unit < self.last_unit {
            self.flip_to(unit)?;
        } else if self.count >= BACKFILL_POOL {
            // The other timeline may still hold this unit: a second pool.
            self.flip_to(unit).map_err(|_| BackfillError::PoolSpent)?;
        }
        let sequence = self.count as u16;
        self.count += 1;
        Ok(BackfillSlot {
            tick_tock: self.tick_tock,
            sequence,
        })
    }

    /// Starts `unit` in the other timeline, if that one has not reached it.
    fn flip_to(&mut self, unit: u64) -> Result<(), BackfillError> {
        if let Some(other) = self.other_last_unit {
            if unit <= other {
                return Err(BackfillError::BothTimelinesUsed {
                    current: Units::saturating(self.last_unit),
                    other: Units::saturating(other),
                });
            }
        }
        self.other_last_unit = Some(self.last_unit);
        self.last_unit = unit;
        self.count = 0;
        self.tick_tock = !self.tick_tock;
        self.clock_regressions += 1;
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
