//! What one compare-and-swap on the word hands a caller: consecutive sequences of one unit.

use super::config::Config;
use super::word::Word;
use crate::id::{Parts, Sno};
use crate::time::Units;

/// Sequences `next..end` of `unit` in one timeline, reserved for one caller: nobody else gets
/// any of them, so every ID built from them is unique.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Claim {
    pub unit: Units,
    pub tick_tock: bool,
    /// The settings generation the sequences were counted under.
    pub epoch: u8,
    pub partition: u16,
    pub next: u32,
    pub end: u32,
}

impl Claim {
    /// The sequences a swap from `before` to `after` took (same unit and timeline).
    pub fn between(before: Word, after: Word, epoch: u8, config: Config) -> Claim {
        let sequence_min = config.sequence_min as u32;
        Claim {
            unit: after.unit,
            tick_tock: after.tick_tock,
            epoch,
            partition: config.partition,
            next: sequence_min + before.count,
            end: sequence_min + after.count,
        }
    }

    /// An empty claim: it holds no sequence.
    pub const fn none() -> Claim {
        Claim {
            unit: Units::MIN,
            tick_tock: false,
            epoch: 0,
            partition: 0,
            next: 0,
            end: 0,
        }
    }

    /// The ID of the first sequence, without using it up.
    pub fn first_id(&self, meta: u8) -> Sno {
        Sno::from_parts(Parts {
            time: self.unit,
            tick_tock: self.tick_tock,
            meta,
            partition: self.partition,
            // Never past sequence_max, which is a u16.
            sequence: self.next as u16,
        })
    }

    /// Uses up the first sequence. The caller checks that one is left ([`Claim::len`]).
    pub fn take(&mut self, meta: u8) -> Sno {
        debug_assert!(self.next < self.end, "a claim used past its end");
        let id = self.first_id(meta);
        self.next += 1;
        id
    }

    pub fn len(&self) -> u32 {
        self.end.saturating_sub(self.next)
    }
}
