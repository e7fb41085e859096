//! The 10-byte sno ID value and its parts.

use crate::time::{TimeRangeError, Units};
use std::fmt;

/// A sno ID: 10 bytes, big-endian, ordered as plain bytes.
///
/// ```text
/// byte  0..5: 39-bit time units << 1 | tick-tock bit
/// byte     5: metabyte (the caller's)
/// byte  6..8: partition
/// byte 8..10: sequence
/// ```
///
/// The derived `Ord` is byte order, which is time order, then tick-tock, meta, partition and
/// sequence: exactly the order of the text form.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Sno([u8; Sno::SIZE]);

/// The parts of an ID, each in its own range.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Parts {
    pub time: Units,
    pub tick_tock: bool,
    pub meta: u8,
    pub partition: u16,
    pub sequence: u16,
}

/// A part given as a plain integer was outside its range.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PartsError {
    Time(TimeRangeError),
    TickTock(i64),
    Meta(i64),
    Partition(i64),
    Sequence(i64),
}

impl Sno {
    /// Size of the binary form in bytes.
    pub const SIZE: usize = 10;
    /// The all-zero ID, `2222222222222222`.
    pub const NIL: Sno = Sno([0; Sno::SIZE]);
    /// The all-ones ID, `xxxxxxxxxxxxxxxx`: the largest value of the type.
    pub const MAX: Sno = Sno([0xff; Sno::SIZE]);

    pub const fn from_bytes(bytes: [u8; Sno::SIZE]) -> Sno {
        Sno(bytes)
    }

    pub const fn as_bytes(&self) -> &[u8; Sno::SIZE] {
        &self.0
    }

    pub const fn to_bytes(self) -> [u8; Sno::SIZE] {
        self.0
    }

    /// The ID made of these parts.
    pub const fn from_parts(parts: Parts) -> Sno {
        // The first 8 bytes as one big-endian word: assembled byte by byte, the compiler
        // stitched them through the stack in pieces that could not be forwarded to the loads
        // that read them back, which cost more than the rest of generating an ID.
        let time_block = parts.time.get() << 1 | parts.tick_tock as u64;
        let head = time_block << 24 | (parts.meta as u64) << 16 | parts.partition as u64;
        let h = head.to_be_bytes();
        let s = parts.sequence.to_be_bytes();
        Sno([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], s[0], s[1]])
    }

    /// The ID made of these parts given as plain integers (as SQL hands them over), with an
    /// error that names the first part out of range.
    pub fn try_from_parts(
        unix_ms: i64,
        tick_tock: i64,
        meta: i64,
        partition: i64,
        sequence: i64,
    ) -> Result<Sno, PartsError> {
        Ok(Sno::from_parts(Parts {
            time: Units::from_unix_millis(unix_ms).map_err(PartsError::Time)?,
            tick_tock: match tick_tock {
                0 => false,
                1 => true,
                _ => return Err(PartsError::TickTock(tick_tock)),
            },
            meta: u8::try_from(meta).map_err(|_| PartsError::Meta(meta))?,
            partition: u16::try_from(partition).map_err(|_| PartsError::Partition(partition))?,
            sequence: u16::try_from(sequence).map_err(|_| PartsError::Sequence(sequence))?,
        }))
    }

    pub const fn parts(&self) -> Parts {
        Parts {
            time: self.time(),
            tick_tock: self.tick_tock(),
            meta: self.meta(),
            partition: self.partition(),
            sequence: self.sequence(),
        }
    }

    /// The 40-bit timestamp block: units << 1 | tick-tock.
    const fn time_block(&self) -> u64 {
        let b = &self.0;
        u64::from_be_bytes([0, 0, 0, b[0], b[1], b[2], b[3], b[4]])
    }

    /// The 4 ms unit the ID was made in.
    pub const fn time(&self) -> Units {
        match Units::new(self.time_block() >> 1) {
            Some(units) => units,
            None => unreachable!(), // 40 bits shifted right by one always fit in 39
        }
    }

    /// The start of the ID's 4 ms unit in Unix milliseconds.
    pub const fn unix_millis(&self) -> i64 {
        self.time().to_unix_millis()
    }

    /// The tick-tock bit: set on IDs made after the generator handled a clock regression.
    pub const fn tick_tock(&self) -> bool {
        self.0[4] & 1 == 1
    }

    pub const fn meta(&self) -> u8 {
        self.0[5]
    }

    pub const fn partition(&self) -> u16 {
        u16::from_be_bytes([self.0[6], self.0[7]])
    }

    pub const fn sequence(&self) -> u16 {
        u16::from_be_bytes([self.0[8], self.0[9]])
    }

    /// The smallest ID of the unit that contains this time.
    pub const fn min_at(time: Units) -> Sno {
        Sno::from_parts(Parts {
            time,
            tick_tock: false,
            meta: 0,
            partition: 0,
            sequence: 0,
        })
    }

    /// The largest ID of the unit that contains this time.
    pub const fn max_at(time: Units) -> Sno {
        Sno::from_parts(Parts {
            time,
            tick_tock: true,
            meta: u8::MAX,
            partition: u16::MAX,
            sequence: u16::MAX,
        })
    }
}

impl From<[u8; Sno::SIZE]> for Sno {
    fn from(bytes: [u8; Sno::SIZE]) -> Sno {
        Sno(bytes)
    }
}

impl From<Sno> for [u8; Sno::SIZE] {
    fn from(id: Sno) -> [u8; Sno::SIZE] {
        id.0
    }
}

impl TryFrom<&[u8]> for Sno {
    type Error = LengthError;

    fn try_from(bytes: &[u8]) -> Result<Sno, LengthError> {
        <[u8; Sno::SIZE]>::try_from(bytes)
            .map(Sno)
            .map_err(|_| LengthError(bytes.len()))
    }
}

impl AsRef<[u8]> for Sno {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// A binary ID of a length other than 10 bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LengthError(pub usize);

impl fmt::Display for LengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a binary sno is 10 bytes, not {}", self.0)
    }
}

impl std::error::Error for LengthError {}

impl fmt::Display for PartsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartsError::Time(e) => e.fmt(f),
            PartsError::TickTock(v) => write!(f, "tick_tock {v} is out of range 0..1"),
            PartsError::Meta(v) => write!(f, "meta {v} is out of range 0..255"),
            PartsError::Partition(v) => write!(f, "partition {v} is out of range 0..65535"),
            PartsError::Sequence(v) => write!(f, "sequence {v} is out of range 0..65535"),
        }
    }
}

impl std::error::Error for PartsError {}

impl fmt::Debug for Sno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sno({self})")
    }
}
