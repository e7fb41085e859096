//! The 16-character text form (SPEC §2): sno's base32 over `23456789abcdefghijklmnopqrstuvwx`.
//!
//! The alphabet is in ascending ASCII order, so text order is byte order. Each character carries
//! five bits of the ID read as one 80-bit big-endian integer; bytes 0..5 make characters 0..8 and
//! bytes 5..10 make characters 8..16, so each half is one 40-bit integer.

use crate::id::Sno;
use std::fmt;
use std::str::FromStr;

/// Length of the text form in characters (all ASCII, so also in bytes).
pub const TEXT_LEN: usize = 16;

/// The symbols for the values 0..32, in order.
pub const ALPHABET: &[u8; 32] = b"23456789abcdefghijklmnopqrstuvwx";

/// Marks a byte that is not a symbol in [`DECODE`].
const INVALID: u8 = 0xff;

/// Value of each byte as a symbol, or [`INVALID`]. Uppercase `A`..`X` decode like lowercase.
const DECODE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut value = 0;
    while value < 32 {
        let symbol = ALPHABET[value];
        table[symbol as usize] = value as u8;
        table[symbol.to_ascii_uppercase() as usize] = value as u8;
        value += 1;
    }
    table
};

/// Why a text was not a sno. Its `Display` says what was wrong and where, counting positions
/// from 1.
///
/// ```
/// use sno::{DecodeError, Sno};
///
/// let err = "brpk4q72xwf2m631".parse::<Sno>().unwrap_err();
/// assert_eq!(err, DecodeError::Symbol { index: 15, byte: b'1' });
/// assert_eq!(err.to_string(), "character '1' at position 16 is not one of 2-9, a-x");
///
/// let err = "brpk4q72xwf2m63".parse::<Sno>().unwrap_err();
/// assert_eq!(err, DecodeError::Length { bytes: 15 });
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input is not 16 bytes long.
    Length {
        /// The input's length in bytes.
        bytes: usize,
    },
    /// The byte at `index` (0-based) is not a symbol of the alphabet. Non-ASCII input lands here
    /// with the first byte of its UTF-8 sequence.
    Symbol {
        /// Where the first bad byte is, counting from 0.
        index: usize,
        /// The bad byte itself.
        byte: u8,
    },
}

impl Sno {
    /// The canonical (lowercase) text form, as ASCII bytes; `to_string()` gives it as a
    /// `String`, and `{}` writes it without allocating.
    ///
    /// ```
    /// use sno::Sno;
    ///
    /// assert_eq!(&Sno::NIL.encode(), b"2222222222222222");
    /// assert_eq!(&Sno::MAX.encode(), b"xxxxxxxxxxxxxxxx");
    /// ```
    pub fn encode(&self) -> [u8; TEXT_LEN] {
        // Bytes 0..5 and 5..10, each read as part of an overlapping 8-byte big-endian load.
        let bytes = self.as_bytes();
        let first: [u8; 8] = bytes[..8].try_into().expect("8 of 10 bytes");
        let last: [u8; 8] = bytes[2..].try_into().expect("8 of 10 bytes");
        let high = u64::from_be_bytes(first) >> 24;
        let low = u64::from_be_bytes(last) & 0xff_ffff_ffff;
        codec::encode(high, low)
    }

    /// The ID this text stands for. Exactly 16 symbols; uppercase `A`..`X` are accepted.
    /// `str::parse` does the same for a `&str`.
    ///
    /// ```
    /// use sno::{DecodeError, Sno};
    ///
    /// let id = Sno::decode(b"BRPK4Q72XWF2M63L")?;
    /// assert_eq!(id.to_string(), "brpk4q72xwf2m63l");
    /// assert_eq!(
    ///     Sno::decode(b"yyyyyyyyyyyyyyyy"),
    ///     Err(DecodeError::Symbol { index: 0, byte: b'y' })
    /// );
    /// # Ok::<(), DecodeError>(())
    /// ```
    pub fn decode(text: &[u8]) -> Result<Sno, DecodeError> {
        let Ok(text) = <&[u8; TEXT_LEN]>::try_from(text) else {
            return Err(DecodeError::Length { bytes: text.len() });
        };
        let Some((high, low)) = codec::decode(text) else {
            return Err(first_bad_symbol(text));
        };
        // Two overlapping 8-byte big-endian stores: bytes 0..8 from the first half, then bytes
        // 2..10 from the first half's last three bytes and the second half.
        let mut bytes = [0u8; Sno::SIZE];
        bytes[..8].copy_from_slice(&(high << 24).to_be_bytes());
        bytes[2..].copy_from_slice(&(high << 40 | low).to_be_bytes());
        Ok(Sno::from_bytes(bytes))
    }
}

/// The symbols for two 40-bit halves, and back. On x86_64 both halves go through SSE2 (part of
/// every x86_64 CPU) at once; elsewhere each half is one u64 worked on with shifts and masks.
/// Both do the same steps, described on the portable functions below.
#[cfg(target_arch = "x86_64")]
mod codec {
    use super::TEXT_LEN;
    use core::arch::x86_64::*;

    pub fn encode(high: u64, low: u64) -> [u8; TEXT_LEN] {
        let mut text = [0u8; TEXT_LEN];
        // SAFETY: SSE2 is always there on x86_64; the store is unaligned and 16 bytes long.
        unsafe {
            let v = _mm_set_epi64x(low as i64, high as i64);
            let v = _mm_or_si128(
                _mm_srli_epi64(v, 20),
                _mm_slli_epi64(_mm_and_si128(v, _mm_set1_epi64x(0xf_ffff)), 32),
            );
            let v = _mm_or_si128(
                _mm_srli_epi32(v, 10),
                _mm_slli_epi32(_mm_and_si128(v, _mm_set1_epi32(0x3ff)), 16),
            );
            let v = _mm_or_si128(
                _mm_srli_epi16(v, 5),
                _mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x1f)), 8),
            );
            let letters = _mm_cmpgt_epi8(v, _mm_set1_epi8(7));
            let gap = _mm_and_si128(letters, _mm_set1_epi8((b'a' - b'2' - 8) as i8));
            let ascii = _mm_add_epi8(_mm_add_epi8(v, _mm_set1_epi8(b'2' as i8)), gap);
            _mm_storeu_si128(text.as_mut_ptr().cast(), ascii);
        }
        text
    }

    pub fn decode(text: &[u8; TEXT_LEN]) -> Option<(u64, u64)> {
        // SAFETY: SSE2 is always there on x86_64; the load is unaligned and 16 bytes long.
        unsafe {
            let c = _mm_loadu_si128(text.as_ptr().cast());
            let folded = _mm_or_si128(c, _mm_set1_epi8(0x20));
            // Signed compares: non-ASCII bytes are negative and so in neither range.
            let digits = _mm_and_si128(
                _mm_cmpgt_epi8(c, _mm_set1_epi8(b'1' as i8)),
                _mm_cmplt_epi8(c, _mm_set1_epi8(b':' as i8)),
            );
            let letters = _mm_and_si128(
                _mm_cmpgt_epi8(folded, _mm_set1_epi8(b'`' as i8)),
                _mm_cmplt_epi8(folded, _mm_set1_epi8(b'y' as i8)),
            );
            if _mm_movemask_epi8(_mm_or_si128(digits, letters)) != 0xffff {
                return None;
            }
            let gap = _mm_and_si128(letters, _mm_set1_epi8((b'a' - b'2' - 8) as i8));
            let v = _mm_sub_epi8(_mm_sub_epi8(folded, _mm_set1_epi8(b'2' as i8)), gap);
            let v = _mm_or_si128(
                _mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x1f)), 5),
                _mm_srli_epi16(v, 8),
            );
            // Each 32-bit lane: its low 16-bit half times 1024 plus its high half.
            let v = _mm_madd_epi16(v, _mm_set1_epi32(0x0001_0400));
            let v = _mm_or_si128(
                _mm_slli_epi64(_mm_and_si128(v, _mm_set1_epi64x(0xf_ffff)), 20),
                _mm_srli_epi64(v, 32),
            );
            let high = _mm_cvtsi128_si64(v) as u64;
            let low = _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
            Some((high, low))
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod codec {
    pub use super::portable::{decode, encode};
}

/// The codec on plain u64s, for every target (and, on x86_64, the reference the SSE2 version
/// is tested against).
mod portable {
    use super::{decode_40_bits, encode_40_bits, TEXT_LEN};

    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    pub fn encode(high: u64, low: u64) -> [u8; TEXT_LEN] {
        let mut text = [0u8; TEXT_LEN];
        text[..8].copy_from_slice(&encode_40_bits(high));
        text[8..].copy_from_slice(&encode_40_bits(low));
        text
    }

    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    pub fn decode(text: &[u8; TEXT_LEN]) -> Option<(u64, u64)> {
        Some((decode_40_bits(&text[..8])?, decode_40_bits(&text[8..])?))
    }
}

/// Each byte of a u64 set to `byte`.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
const fn splat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// The 8 symbols for 40 bits, most significant first.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
///
/// The bits are spread into one 5-bit value per byte with shifts and masks (halves into 32-bit
/// lanes, quarters into 16-bit lanes, fifths into bytes), and all eight values are mapped to
/// ASCII at once: `'2' + v`, plus the gap from `'9' + 1` to `'a'` where `v >= 8`.
fn encode_40_bits(bits: u64) -> [u8; 8] {
    // Each step puts the more significant part in the lower lane, so the first symbol ends up in
    // the lowest byte and the result is stored little-endian with no byte swap.
    let mut v = (bits >> 20) | (bits & 0xf_ffff) << 32;
    v = (v >> 10 & 0x0000_03ff_0000_03ff) | (v & 0x0000_03ff_0000_03ff) << 16;
    v = (v >> 5 & 0x001f_001f_001f_001f) | (v & 0x001f_001f_001f_001f) << 8;
    // v + 0x78 sets a byte's top bit exactly when v >= 8 (v <= 31, so no carry between bytes).
    let letters = ((v + splat(0x78)) & splat(0x80)) >> 7;
    let ascii = v + splat(b'2') + letters * (b'a' - b'2' - 8) as u64;
    ascii.to_le_bytes()
}

/// Top bit of each byte of `x` (all bytes < 0x80) set where the byte is in `lo..=hi`.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
const fn bytes_in_range(x: u64, lo: u8, hi: u8) -> u64 {
    // Adding 0x80 - lo sets the top bit iff byte >= lo; adding 0x7f - hi iff byte > hi.
    // Bytes stay below 0x100, so no carry crosses into the next byte.
    let at_least_lo = x + splat(0x80 - lo);
    let above_hi = x + splat(0x7f - hi);
    at_least_lo & !above_hi & splat(0x80)
}

/// The 40 bits 8 symbols stand for, or `None` if one is not a symbol.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
///
/// All eight symbols are checked and mapped at once: digits `2..9` are `c - '2'`, letters
/// (case folded by setting bit 5, which digits already have) are `c - 'a' + 8`. Then adjacent
/// 5-bit values are merged pairwise: bytes into 10-bit, 16-bit lanes into 20-bit, halves into 40.
fn decode_40_bits(symbols: &[u8]) -> Option<u64> {
    // Little-endian: the first symbol in the lowest byte (the mirror of `encode_40_bits`).
    let c = u64::from_le_bytes(symbols.try_into().expect("8 symbols"));
    if c & splat(0x80) != 0 {
        return None; // not ASCII
    }
    let folded = c | splat(0x20);
    let digits = bytes_in_range(c, b'2', b'9');
    let letters = bytes_in_range(folded, b'a', b'x');
    if digits | letters != splat(0x80) {
        return None;
    }
    let mut v = folded - splat(b'2') - (letters >> 7) * (b'a' - b'2' - 8) as u64;
    v = (v & 0x001f_001f_001f_001f) << 5 | (v >> 8 & 0x001f_001f_001f_001f);
    v = (v & 0x0000_03ff_0000_03ff) << 10 | (v >> 16 & 0x0000_03ff_0000_03ff);
    Some((v & 0xf_ffff) << 20 | v >> 32)
}

#[cold]
fn first_bad_symbol(text: &[u8; TEXT_LEN]) -> DecodeError {
    let index = text
        .iter()
        .position(|&b| DECODE[b as usize] == INVALID)
        .expect("called only when a symbol is invalid");
    DecodeError::Symbol {
        index,
        byte: text[index],
    }
}

impl fmt::Display for Sno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.encode();
        // The alphabet is ASCII, so this never fails.
        f.pad(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Sno {
    type Err = DecodeError;

    fn from_str(text: &str) -> Result<Sno, DecodeError> {
        Sno::decode(text.as_bytes())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::Length { bytes } => {
                write!(f, "a sno is 16 characters long, not {bytes}")
            }
            DecodeError::Symbol { index, byte } if byte.is_ascii_graphic() || byte == b' ' => {
                write!(
                    f,
                    "character '{}' at position {} is not one of 2-9, a-x",
                    byte as char,
                    index + 1
                )
            }
            DecodeError::Symbol { index, byte } => {
                write!(
                    f,
                    "byte 0x{byte:02x} at position {} is not one of 2-9, a-x",
                    index + 1
                )
            }
        }
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_symbol_decodes_to_its_value_and_nothing_else_does() {
        for byte in 0..=255u8 {
            let expected = ALPHABET
                .iter()
                .position(|&s| s == byte.to_ascii_lowercase());
            let got = (DECODE[byte as usize] != INVALID).then_some(DECODE[byte as usize] as usize);
            assert_eq!(got, expected, "byte {byte:#04x}");
        }
    }

    #[test]
    fn the_fast_codec_matches_the_portable_one() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let (high, low) = (next() & 0xff_ffff_ffff, next() & 0xff_ffff_ffff);
            let text = codec::encode(high, low);
            assert_eq!(text, portable::encode(high, low));
            assert_eq!(codec::decode(&text), Some((high, low)));
            // Damage one byte: both must agree on accepting it and on the value.
            let mut bad = text;
            bad[(next() % 16) as usize] = next() as u8;
            assert_eq!(codec::decode(&bad), portable::decode(&bad), "{bad:?}");
        }
        for byte in 0..=255u8 {
            let text = [byte; TEXT_LEN];
            assert_eq!(
                codec::decode(&text),
                portable::decode(&text),
                "byte {byte:#04x}"
            );
        }
    }

    #[test]
    fn reports_the_first_bad_symbol() {
        let err = Sno::decode(b"22222222222222y1").unwrap_err();
        assert_eq!(
            err,
            DecodeError::Symbol {
                index: 14,
                byte: b'y'
            }
        );
        assert_eq!(
            err.to_string(),
            "character 'y' at position 15 is not one of 2-9, a-x"
        );
    }
}
