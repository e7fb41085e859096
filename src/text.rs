//! The 16-character text form: sno's base32 over `23456789abcdefghijklmnopqrstuvwx`.
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

/// Why a text was not a sno.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input is not 16 bytes long.
    Length { bytes: usize },
    /// The byte at `index` (0-based) is not a symbol of the alphabet. Non-ASCII input lands here
    /// with the first byte of its UTF-8 sequence.
    Symbol { index: usize, byte: u8 },
}

impl Sno {
    /// The canonical (lowercase) text form.
    pub fn encode(&self) -> [u8; TEXT_LEN] {
        let bytes = self.as_bytes();
        let high = u64::from_be_bytes([0, 0, 0, bytes[0], bytes[1], bytes[2], bytes[3], bytes[4]]);
        let low = u64::from_be_bytes([0, 0, 0, bytes[5], bytes[6], bytes[7], bytes[8], bytes[9]]);
        let mut text = [0u8; TEXT_LEN];
        encode_40_bits(high, &mut text[..8]);
        encode_40_bits(low, &mut text[8..]);
        text
    }

    /// The ID this text stands for. Exactly 16 symbols; uppercase `A`..`X` are accepted.
    pub fn decode(text: &[u8]) -> Result<Sno, DecodeError> {
        let Ok(text) = <&[u8; TEXT_LEN]>::try_from(text) else {
            return Err(DecodeError::Length { bytes: text.len() });
        };
        let (high, high_invalid) = decode_40_bits(&text[..8]);
        let (low, low_invalid) = decode_40_bits(&text[8..]);
        if high_invalid | low_invalid {
            return Err(first_bad_symbol(text));
        }
        let h = high.to_be_bytes();
        let l = low.to_be_bytes();
        Ok(Sno::from_bytes([
            h[3], h[4], h[5], h[6], h[7], l[3], l[4], l[5], l[6], l[7],
        ]))
    }
}

fn encode_40_bits(bits: u64, out: &mut [u8]) {
    for (i, symbol) in out.iter_mut().enumerate() {
        *symbol = ALPHABET[(bits >> (35 - 5 * i)) as usize & 31];
    }
}

/// The 40 bits that 8 symbols stand for, and whether any of them was not a symbol.
fn decode_40_bits(symbols: &[u8]) -> (u64, bool) {
    let mut bits = 0u64;
    let mut seen = 0u8;
    for &symbol in symbols {
        let value = DECODE[symbol as usize];
        seen |= value;
        bits = bits << 5 | (value & 31) as u64;
    }
    (bits, seen > 31)
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
