//! The generator's moving state, packed into one 64-bit word so that one compare-and-swap
//! decides which (unit, tick-tock, sequence) a caller gets.
//!
//! ```text
//! bits 63..25  unit    39  the current timeline's highest 4 ms unit (`last_unit`)
//! bit  24      tick     1  the current timeline's tick-tock bit
//! bit  23      spent    1  the unit may issue no more IDs (its settings were replaced)
//! bits 22..17  epoch    6  which settings `count` was counted under
//! bits 16..0   count   17  sequences claimed in this unit so far (up to 65,536)
//! ```
//!
//! The reference Go generator keeps the unit and the sequence in separate variables, so a caller
//! can pair an old unit with a sequence from the new one: a duplicate. Here they change together.

use crate::time::Units;

/// Number of distinct config epochs the word can tell apart.
pub(super) const EPOCHS: u8 = 1 << 6;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Word {
    pub unit: Units,
    pub tick_tock: bool,
    pub spent: bool,
    pub epoch: u8,
    pub count: u32,
}

impl Word {
    /// A unit that has issued nothing yet.
    pub const fn fresh(unit: Units, tick_tock: bool, epoch: u8) -> Word {
        Word {
            unit,
            tick_tock,
            spent: false,
            epoch,
            count: 0,
        }
    }

    /// The same unit with `claimed` more sequences issued.
    pub const fn with_more(self, claimed: u32) -> Word {
        Word {
            count: self.count + claimed,
            ..self
        }
    }

    /// Whether `other` belongs to another unit or timeline (so this word's count is final).
    pub fn is_replaced_by(&self, other: &Word) -> bool {
        self.unit != other.unit || self.tick_tock != other.tick_tock
    }

    pub const fn pack(self) -> u64 {
        self.unit.get() << 25
            | (self.tick_tock as u64) << 24
            | (self.spent as u64) << 23
            | ((self.epoch % EPOCHS) as u64) << 17
            | self.count as u64
    }

    pub const fn unpack(word: u64) -> Word {
        Word {
            unit: match Units::new(word >> 25) {
                Some(unit) => unit,
                None => unreachable!(), // 39 bits always fit
            },
            tick_tock: word >> 24 & 1 == 1,
            spent: word >> 23 & 1 == 1,
            epoch: (word >> 17) as u8 % EPOCHS,
            count: (word & 0x1_ffff) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_every_field_without_overlap() {
        let words = [
            Word::fresh(Units::MIN, false, 0),
            Word {
                unit: Units::MAX,
                tick_tock: true,
                spent: true,
                epoch: EPOCHS - 1,
                count: 65_536,
            },
            Word {
                unit: Units::new(0x55_5555_5555).unwrap(),
                tick_tock: false,
                spent: true,
                epoch: 21,
                count: 0x1_0000,
            },
        ];
        for word in words {
            assert_eq!(Word::unpack(word.pack()), word);
        }
        assert_eq!(
            Word::unpack(u64::MAX).pack(),
            u64::MAX,
            "all 64 bits are used"
        );
    }
}
