//! The 10-byte sno ID value and its parts.

use crate::time::{TimeRangeError, Units};
use std::fmt;

/// A sno ID: 10 bytes, big-endian, ordered as plain bytes (SPEC §1).
///
/// ```text
/// byte  0..5: 39-bit time units << 1 | tick-tock bit
/// byte     5: metabyte (the caller's)
/// byte  6..8: partition
/// byte 8..10: sequence
/// ```
///
/// The derived `Ord` is byte order, which is time order, then tick-tock, meta, partition and
/// sequence: exactly the order of the text form. `Display` and `FromStr` are the text form
/// (SPEC §2); `Debug` shows it too.
///
/// ```
/// use sno::Sno;
///
/// let id: Sno = "brpk4q72xwf2m63l".parse()?;
/// assert_eq!(id.to_string(), "brpk4q72xwf2m63l");
/// assert_eq!(format!("{id:?}"), "Sno(brpk4q72xwf2m63l)");
/// assert_eq!(id.unix_millis(), 1_936_047_814_976);
/// assert_eq!((id.meta(), id.partition(), id.sequence()), (255, 39434, 4147));
/// assert!(Sno::NIL < id && id < Sno::MAX);
/// # Ok::<(), sno::DecodeError>(())
/// ```
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
// Diesel's impls are derived here, as its derives need the type itself (see with_diesel.rs).
#[cfg_attr(
    feature = "diesel",
    derive(::diesel::expression::AsExpression, ::diesel::deserialize::FromSqlRow),
    diesel(sql_type = crate::sql_types::Sno)
)]
#[repr(transparent)]
pub struct Sno([u8; Sno::SIZE]);

/// The parts of an ID, each in its own range: [`Sno::from_parts`] and [`Sno::parts`].
///
/// ```
/// use sno::{Parts, Sno, Units};
///
/// let parts = Parts {
///     time: Units::from_unix_millis(1_636_681_382_123)?,
///     meta: 42,
///     partition: 9350,
///     sequence: 77,
///     ..Parts::default()
/// };
/// let id = Sno::from_parts(parts);
/// assert_eq!(id.to_string(), "7gcn3i5m7akae24f");
/// assert_eq!(id.parts(), parts);
/// # Ok::<(), sno::TimeRangeError>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Parts {
    /// The 4 ms unit.
    pub time: Units,
    /// The tick-tock bit: set by a generator after it handled a clock regression.
    pub tick_tock: bool,
    /// The metabyte: the caller's, never interpreted by the format.
    pub meta: u8,
    /// Which generator made the ID (say, which server).
    pub partition: u16,
    /// The ID's place among those of its unit and partition.
    pub sequence: u16,
}

/// A part given to [`Sno::try_from_parts`] as a plain integer was outside its range. Each
/// variant holds the rejected value.
///
/// ```
/// use sno::{PartsError, Sno};
///
/// let err = Sno::try_from_parts(1_636_681_382_123, 0, 256, 0, 0).unwrap_err();
/// assert_eq!(err, PartsError::Meta(256));
/// assert_eq!(err.to_string(), "meta 256 is out of range 0..255");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartsError {
    /// The time is outside 2010-01-01 .. 2079-09-07T15:47:35.548Z.
    Time(TimeRangeError),
    /// The tick-tock bit is neither 0 nor 1.
    TickTock(i64),
    /// The metabyte is outside 0..=255.
    Meta(i64),
    /// The partition is outside 0..=65535.
    Partition(i64),
    /// The sequence is outside 0..=65535.
    Sequence(i64),
}

impl Sno {
    /// Size of the binary form in bytes.
    pub const SIZE: usize = 10;
    /// The all-zero ID, `2222222222222222`.
    pub const NIL: Sno = Sno([0; Sno::SIZE]);
    /// The all-ones ID, `xxxxxxxxxxxxxxxx`: the largest value of the type.
    pub const MAX: Sno = Sno([0xff; Sno::SIZE]);

    /// The ID with this binary form. Every 10 bytes are an ID; for a slice of unknown
    /// length, use `Sno::try_from(&[u8])`.
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let id = Sno::from_bytes([0x4e, 0x6f, 0x21, 0x60, 0xa0, 0xff, 0x9a, 0x0a, 0x10, 0x33]);
    /// assert_eq!(id.to_string(), "brpk4q72xwf2m63l");
    /// assert_eq!(Sno::try_from(&id.as_bytes()[..]), Ok(id));
    /// ```
    pub const fn from_bytes(bytes: [u8; Sno::SIZE]) -> Sno {
        Sno(bytes)
    }

    /// The binary form, borrowed.
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let id: Sno = "2222222522222222".parse()?;
    /// assert_eq!(id.as_bytes(), &[0, 0, 0, 0, 3, 0, 0, 0, 0, 0]);
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn as_bytes(&self) -> &[u8; Sno::SIZE] {
        &self.0
    }

    /// The binary form: the 10 bytes, big-endian (SPEC §1).
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// assert_eq!(Sno::MAX.to_bytes(), [0xff; 10]);
    /// assert_eq!(Sno::from_bytes(Sno::MAX.to_bytes()), Sno::MAX);
    /// ```
    pub const fn to_bytes(self) -> [u8; Sno::SIZE] {
        self.0
    }

    /// The ID made of these parts. See [`Parts`] for an example.
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
    /// error that names the first part out of range. `unix_ms` is floored to its 4 ms unit.
    ///
    /// ```
    /// use sno::{PartsError, Sno};
    ///
    /// let id = Sno::try_from_parts(1_709_210_096_789, 0, 128, 32768, 32768)?;
    /// assert_eq!(id.to_string(), "8i5fftkci4223222");
    /// assert_eq!(id.unix_millis(), 1_709_210_096_788);
    /// assert_eq!(
    ///     Sno::try_from_parts(1_709_210_096_789, 2, 0, 0, 0),
    ///     Err(PartsError::TickTock(2))
    /// );
    /// # Ok::<(), PartsError>(())
    /// ```
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

    /// All parts at once. See [`Parts`] for an example.
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
    ///
    /// ```
    /// use sno::{Sno, Units};
    ///
    /// let id: Sno = "222222hm22222222".parse()?;
    /// assert_eq!(id.time().get(), 250); // one second after the epoch
    /// assert_eq!(Sno::MAX.time(), Units::MAX);
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn time(&self) -> Units {
        match Units::new(self.time_block() >> 1) {
            Some(units) => units,
            None => unreachable!(), // 40 bits shifted right by one always fit in 39
        }
    }

    /// The start of the ID's 4 ms unit in Unix milliseconds.
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let id: Sno = "7gcn3i5m7akae24f".parse()?;
    /// assert_eq!(id.unix_millis(), 1_636_681_382_120); // 2021-11-12T01:43:02.120Z
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn unix_millis(&self) -> i64 {
        self.time().to_unix_millis()
    }

    /// The tick-tock bit: set on IDs made after the generator handled a clock regression (it
    /// flips at each one).
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let tick: Sno = "7gcn3i5n7akae24f".parse()?;
    /// let tock: Sno = "7gcn3i5m7akae24f".parse()?;
    /// assert!(tick.tick_tock() && !tock.tick_tock());
    /// assert_eq!(tick.time(), tock.time());
    /// assert!(tick > tock, "the second timeline sorts after the first within a unit");
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn tick_tock(&self) -> bool {
        self.0[4] & 1 == 1
    }

    /// The metabyte: whatever the caller stamped in (which table, which kind of object).
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let id: Sno = "22222222xu222222".parse()?;
    /// assert_eq!(id.meta(), 255);
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn meta(&self) -> u8 {
        self.0[5]
    }

    /// The partition: which generator made the ID.
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let id: Sno = "2222222225xxw222".parse()?;
    /// assert_eq!(id.partition(), 65535);
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn partition(&self) -> u16 {
        u16::from_be_bytes([self.0[6], self.0[7]])
    }

    /// The sequence: the ID's place among those its generator made in the same unit.
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// let id: Sno = "2222222222223xxx".parse()?;
    /// assert_eq!(id.sequence(), 65535);
    /// # Ok::<(), sno::DecodeError>(())
    /// ```
    pub const fn sequence(&self) -> u16 {
        u16::from_be_bytes([self.0[8], self.0[9]])
    }

    /// The smallest ID of the unit that contains this time: with [`Sno::max_at`], the bounds
    /// of a time range.
    ///
    /// ```
    /// use sno::{Sno, Units};
    ///
    /// let may = Units::from_unix_millis(1_714_521_600_000)?; // 2024-05-01
    /// let june = Units::from_unix_millis(1_717_200_000_000)?; // 2024-06-01
    /// let id = Sno::try_from_parts(1_715_000_000_000, 1, 7, 3, 9).unwrap();
    /// assert!(Sno::min_at(may) <= id && id < Sno::min_at(june));
    /// assert_eq!(Sno::min_at(may).parts().sequence, 0);
    /// # Ok::<(), sno::TimeRangeError>(())
    /// ```
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
    ///
    /// ```
    /// use sno::{Sno, Units};
    ///
    /// let unit = Units::from_unix_millis(1_636_681_382_123)?;
    /// let id: Sno = "7gcn3i5n7akae24f".parse().unwrap(); // an ID of that unit
    /// assert!(Sno::min_at(unit) < id && id < Sno::max_at(unit));
    /// assert_eq!(Sno::max_at(Units::MAX), Sno::MAX);
    /// # Ok::<(), sno::TimeRangeError>(())
    /// ```
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

/// A binary ID of a length other than 10 bytes; holds the length given.
///
/// ```
/// use sno::Sno;
///
/// let err = Sno::try_from(&[0u8; 11][..]).unwrap_err();
/// assert_eq!(err.0, 11);
/// assert_eq!(err.to_string(), "a binary sno is 10 bytes, not 11");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
