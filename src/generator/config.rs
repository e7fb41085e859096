//! The generator's settings: the partition it stamps and the sequence bounds it draws from.

use std::fmt;

/// The fewest sequences a generator may draw from per 4 ms unit.
pub const MIN_POOL: u32 = 4;

/// What a generator stamps into its IDs, and which sequences it may use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub partition: u16,
    pub sequence_min: u16,
    pub sequence_max: u16,
}

/// Sequence bounds that leave fewer than [`MIN_POOL`] sequences per unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PoolTooSmall {
    pub sequence_min: u16,
    pub sequence_max: u16,
}

impl Config {
    /// The whole sequence space for `partition`.
    pub const fn new(partition: u16) -> Config {
        Config {
            partition,
            sequence_min: 0,
            sequence_max: u16::MAX,
        }
    }

    /// The same partition, drawing only from `sequence_min..=sequence_max` (sequence sharding).
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
    /// How many sequences the refused bounds would have left per unit.
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
