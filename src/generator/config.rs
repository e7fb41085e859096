//! The generator's settings: the partition it stamps and the sequence bounds it draws from.

use std::fmt;

/// The fewest sequences a generator may draw from per 4 ms unit.
pub const MIN_POOL: u32 = 4;

/// What a generator stamps into its IDs, and which sequences it may use (SPEC §3).
///
/// Build one with [`Config::new`] and, to share a partition between generators,
/// [`Config::with_sequence_bounds`], which checks the bounds; a `Config` written out field by
/// field is not checked, and [`Generator::restore`](super::Generator::restore) refuses one
/// with too small a pool.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// Stamped into every ID: which generator made it.
    pub partition: u16,
    /// The first sequence of each 4 ms unit.
    pub sequence_min: u16,
    /// The last sequence of each 4 ms unit.
    pub sequence_max: u16,
}

/// Sequence bounds that leave fewer than [`MIN_POOL`] sequences per unit.
///
/// ```
/// use sno::Config;
///
/// let err = Config::new(1).with_sequence_bounds(10, 12).unwrap_err();
/// assert_eq!((err.sequence_min, err.sequence_max, err.pool()), (10, 12, 3));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolTooSmall {
    /// The refused lower bound.
    pub sequence_min: u16,
    /// The refused upper bound.
    pub sequence_max: u16,
}

impl Config {
    /// The whole sequence space for `partition`.
    ///
    /// ```
    /// use sno::Config;
    ///
    /// let config = Config::new(9);
    /// assert_eq!((config.sequence_min, config.sequence_max), (0, 65535));
    /// ```
    pub const fn new(partition: u16) -> Config {
        Config {
            partition,
            sequence_min: 0,
            sequence_max: u16::MAX,
        }
    }

    /// The same partition, drawing only from `sequence_min..=sequence_max` (sequence sharding),
    /// or an error if that leaves fewer than [`MIN_POOL`] sequences.
    ///
    /// ```
    /// use sno::Config;
    ///
    /// // Two generators share partition 5, each with half of every unit.
    /// let lower = Config::new(5).with_sequence_bounds(0, 32767)?;
    /// let upper = Config::new(5).with_sequence_bounds(32768, 65535)?;
    /// assert_eq!(lower.pool() + upper.pool(), 65536);
    /// assert!(Config::new(5).with_sequence_bounds(7, 9).is_err());
    /// # Ok::<(), sno::PoolTooSmall>(())
    /// ```
    pub const fn with_sequence_bounds(
        self,
        sequence_min: u16,
        sequence_max: u16,
    ) -> Result<Config, PoolTooSmall> {
        let config = Config {
            sequence_min,
            sequence_max,
            ..self
        };
        if config.pool() < MIN_POOL {
            return Err(PoolTooSmall {
                sequence_min,
                sequence_max,
            });
        }
        Ok(config)
    }

    /// How many IDs one 4 ms unit can hold.
    ///
    /// ```
    /// use sno::Config;
    ///
    /// assert_eq!(Config::new(0).pool(), 65536);
    /// assert_eq!(Config::new(0).with_sequence_bounds(100, 199)?.pool(), 100);
    /// # Ok::<(), sno::PoolTooSmall>(())
    /// ```
    pub const fn pool(&self) -> u32 {
        (self.sequence_max as u32 + 1).saturating_sub(self.sequence_min as u32)
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::new(0)
    }
}

impl fmt::Display for PoolTooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sequence bounds {}..{} leave a pool of {} sequences per 4 ms; at least {} are needed",
            self.sequence_min,
            self.sequence_max,
            self.pool(),
            MIN_POOL
        )
    }
}

impl PoolTooSmall {
    /// How many sequences the refused bounds would have left per unit. See [`PoolTooSmall`]
    /// for an example.
    pub const fn pool(&self) -> u32 {
        let bounds = Config {
            partition: 0,
            sequence_min: self.sequence_min,
            sequence_max: self.sequence_max,
        };
        bounds.pool()
    }
}

impl std::error::Error for PoolTooSmall {}

/// A [`Config`] with the epoch that tells the generation it belongs to, packed into one word so
/// that a reader never sees half of an update.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Versioned {
    pub config: Config,
    pub epoch: u8,
}

impl Versioned {
    pub const fn pack(self) -> u64 {
        (self.config.partition as u64) << 48
            | (self.config.sequence_min as u64) << 32
            | (self.config.sequence_max as u64) << 16
            | self.epoch as u64
    }

    pub const fn unpack(word: u64) -> Versioned {
        Versioned {
            config: Config {
                partition: (word >> 48) as u16,
                sequence_min: (word >> 32) as u16,
                sequence_max: (word >> 16) as u16,
            },
            epoch: word as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_of_four_is_the_smallest_accepted() {
        assert!(Config::new(0).with_sequence_bounds(0, 3).is_ok());
        assert!(Config::new(0).with_sequence_bounds(65532, 65535).is_ok());
        let err = Config::new(0).with_sequence_bounds(10, 12).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sequence bounds 10..12 leave a pool of 3 sequences per 4 ms; at least 4 are needed"
        );
        let err = Config::new(0).with_sequence_bounds(9, 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sequence bounds 9..3 leave a pool of 0 sequences per 4 ms; at least 4 are needed"
        );
    }
}
