//! Time in sno IDs (SPEC §1): 39-bit counts of 4 ms units since 2010-01-01T00:00:00Z.

use std::fmt;

/// Unix time of the sno epoch, 2010-01-01T00:00:00Z, in milliseconds.
pub const EPOCH_UNIX_MS: i64 = 1_262_304_000_000;

/// Length of one time unit in milliseconds.
pub const UNIT_MS: i64 = 4;

/// An instant truncated to a 4 ms unit of the sno timeline.
///
/// Only the 39-bit range the format can hold is representable: from 2010-01-01T00:00:00Z
/// ([`Units::MIN`]) to 2079-09-07T15:47:35.548Z ([`Units::MAX`]). Times outside it are an error,
/// never a silently wrapped value.
///
/// ```
/// use sno::Units;
///
/// let unit = Units::from_unix_millis(1_636_681_382_123)?; // 2021-11-12T01:43:02.123Z
/// assert_eq!(unit.to_unix_millis(), 1_636_681_382_120);
/// assert!(Units::from_unix_millis(0).is_err(), "1970 is before the sno epoch");
/// # Ok::<(), sno::TimeRangeError>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Units(u64);

/// A time outside the range the sno format can represent.
///
/// ```
/// use sno::Units;
///
/// let err = Units::from_unix_millis(Units::MAX_UNIX_MS + 1).unwrap_err();
/// assert_eq!(err.unix_ms, 3_461_327_255_549);
/// assert_eq!(
///     err.to_string(),
///     "time 3461327255549 ms since the Unix epoch is outside the sno range \
///      2010-01-01T00:00:00Z .. 2079-09-07T15:47:35.548Z"
/// );
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimeRangeError {
    /// The rejected time, in Unix milliseconds.
    pub unix_ms: i64,
}

impl Units {
    /// The first unit: 2010-01-01T00:00:00.000Z.
    pub const MIN: Units = Units(0);
    /// The last unit: 2079-09-07T15:47:35.548Z.
    pub const MAX: Units = Units((1 << 39) - 1);
    /// The earliest representable time in Unix milliseconds.
    pub const MIN_UNIX_MS: i64 = EPOCH_UNIX_MS;
    /// The latest accepted time in Unix milliseconds: the start of the last unit, the upper
    /// bound the sno specification states (2079-09-07T15:47:35.548Z).
    pub const MAX_UNIX_MS: i64 = Self::MAX.to_unix_millis();

    /// The unit with this index, if it fits in 39 bits.
    ///
    /// ```
    /// use sno::Units;
    ///
    /// assert_eq!(Units::new(250).map(Units::to_unix_millis), Some(1_262_304_001_000));
    /// assert_eq!(Units::new(1 << 39), None);
    /// ```
    pub const fn new(units: u64) -> Option<Units> {
        if units <= Self::MAX.0 {
            Some(Units(units))
        } else {
            None
        }
    }

    /// The unit with this index, or [`Units::MAX`] past it: for bounds computed by adding to a
    /// unit, where "as late as an ID can be" is the right answer for anything later.
    ///
    /// ```
    /// use sno::Units;
    ///
    /// assert_eq!(Units::saturating(250).get(), 250);
    /// assert_eq!(Units::saturating(u64::MAX), Units::MAX);
    /// ```
    pub const fn saturating(units: u64) -> Units {
        if units <= Self::MAX.0 {
            Units(units)
        } else {
            Self::MAX
        }
    }

    /// The unit that contains this Unix millisecond, or an error outside 2010-01-01 ..
    /// 2079-09-07T15:47:35.548Z.
    ///
    /// ```
    /// use sno::Units;
    ///
    /// assert_eq!(Units::from_unix_millis(1_262_304_000_003)?, Units::MIN);
    /// assert_eq!(Units::from_unix_millis(1_262_304_000_004)?.get(), 1);
    /// assert!(Units::from_unix_millis(1_262_303_999_999).is_err());
    /// # Ok::<(), sno::TimeRangeError>(())
    /// ```
    pub const fn from_unix_millis(unix_ms: i64) -> Result<Units, TimeRangeError> {
        if unix_ms < Self::MIN_UNIX_MS || unix_ms > Self::MAX_UNIX_MS {
            return Err(TimeRangeError { unix_ms });
        }
        // Non-negative after the check, so an unsigned division (a shift) will do.
        Ok(Units((unix_ms - EPOCH_UNIX_MS) as u64 / UNIT_MS as u64))
    }

    /// The unit's index since the sno epoch.
    ///
    /// ```
    /// use sno::Units;
    ///
    /// assert_eq!(Units::MAX.get(), (1 << 39) - 1);
    /// ```
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The first Unix millisecond of this unit.
    ///
    /// ```
    /// use sno::Units;
    ///
    /// assert_eq!(Units::MAX.to_unix_millis(), 3_461_327_255_548); // 2079-09-07T15:47:35.548Z
    /// ```
    pub const fn to_unix_millis(self) -> i64 {
        EPOCH_UNIX_MS + self.0 as i64 * UNIT_MS
    }
}

impl fmt::Display for TimeRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "time {} ms since the Unix epoch is outside the sno range \
             2010-01-01T00:00:00Z .. 2079-09-07T15:47:35.548Z",
            self.unix_ms
        )
    }
}

impl std::error::Error for TimeRangeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_the_spec_instants() {
        assert_eq!(Units::MIN.to_unix_millis(), 1_262_304_000_000);
        assert_eq!(Units::MAX.to_unix_millis(), 3_461_327_255_548);
        assert_eq!(Units::MAX_UNIX_MS, 3_461_327_255_548);
    }

    #[test]
    fn floors_to_the_unit() {
        assert_eq!(Units::from_unix_millis(EPOCH_UNIX_MS + 3), Ok(Units(0)));
        assert_eq!(Units::from_unix_millis(EPOCH_UNIX_MS + 4), Ok(Units(1)));
        assert_eq!(Units::from_unix_millis(Units::MAX_UNIX_MS), Ok(Units::MAX));
    }

    #[test]
    fn rejects_times_outside_the_range() {
        for ms in [
            EPOCH_UNIX_MS - 1,
            Units::MAX_UNIX_MS + 1,
            i64::MIN,
            i64::MAX,
            0,
        ] {
            assert_eq!(
                Units::from_unix_millis(ms),
                Err(TimeRangeError { unix_ms: ms })
            );
        }
        assert_eq!(Units::new(1 << 39), None);
    }
}
