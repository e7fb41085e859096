//! The ID format against SPEC §4, both directions, plus properties over arbitrary IDs.

use proptest::prelude::*;
use sno::{DecodeError, Parts, PartsError, Sno, Units};

/// (case, unix ms, tick-tock, meta, partition, sequence, hex, text), as SPEC §4 lists them.
type Vector = (
    &'static str,
    i64,
    bool,
    u8,
    u16,
    u16,
    &'static str,
    &'static str,
);

#[rustfmt::skip]
const VECTORS: &[Vector] = &[
    ("all zero", 1262304000000, false, 0, 0, 0, "00000000000000000000", "2222222222222222"),
    ("epoch +3 ms (floors)", 1262304000003, false, 0, 0, 0, "00000000000000000000", "2222222222222222"),
    ("epoch +4 ms", 1262304000004, false, 0, 0, 0, "00000000020000000000", "2222222422222222"),
    ("epoch +4 ms, tick 1", 1262304000004, true, 0, 0, 0, "00000000030000000000", "2222222522222222"),
    ("epoch +1 s", 1262304001000, false, 0, 0, 0, "00000001f40000000000", "222222hm22222222"),
    ("meta 255 only", 1262304000000, false, 255, 0, 0, "0000000000ff00000000", "22222222xu222222"),
    ("partition 0xffff only", 1262304000000, false, 0, 65535, 0, "000000000000ffff0000", "2222222225xxw222"),
    ("sequence 0xffff only", 1262304000000, false, 0, 0, 65535, "0000000000000000ffff", "2222222222223xxx"),
    ("max time", 3461327255548, false, 0, 0, 0, "fffffffffe0000000000", "xxxxxxxw22222222"),
    ("all 0xff", 3461327255548, true, 255, 65535, 65535, "ffffffffffffffffffff", "xxxxxxxxxxxxxxxx"),
    ("upstream test vector", 1936047814976, false, 255, 39434, 4147, "4e6f2160a0ff9a0a1033", "brpk4q72xwf2m63l"),
    ("2021-11-12T01:43:02.123Z", 1636681382123, false, 42, 9350, 77, "2b9550c0742a2486004d", "7gcn3i5m7akae24f"),
    ("same, tick 1", 1636681382123, true, 42, 9350, 77, "2b9550c0752a2486004d", "7gcn3i5n7akae24f"),
    ("2024-02-29T12:34:56.789Z", 1709210096789, false, 128, 32768, 32768, "3406d6ee4a8080008000", "8i5fftkci4223222"),
];

fn hex(id: &Sno) -> String {
    id.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn floor_to_unit(unix_ms: i64) -> i64 {
    unix_ms - (unix_ms - 1_262_304_000_000) % 4
}

#[test]
fn vectors_encode_from_parts() {
    for &(case, unix_ms, tick_tock, meta, partition, sequence, hex_form, text) in VECTORS {
        let id = Sno::from_parts(Parts {
            time: Units::from_unix_millis(unix_ms).unwrap(),
            tick_tock,
            meta,
            partition,
            sequence,
        });
        assert_eq!(hex(&id), hex_form, "{case}");
        assert_eq!(id.to_string(), text, "{case}");
        assert_eq!(&id.encode(), text.as_bytes(), "{case}");
    }
}

#[test]
fn vectors_decode_to_parts() {
    for &(case, unix_ms, tick_tock, meta, partition, sequence, hex_form, text) in VECTORS {
        let id: Sno = text.parse().unwrap();
        assert_eq!(hex(&id), hex_form, "{case}");
        assert_eq!(id.unix_millis(), floor_to_unit(unix_ms), "{case}");
        assert_eq!(id.tick_tock(), tick_tock, "{case}");
        assert_eq!(id.meta(), meta, "{case}");
        assert_eq!(id.partition(), partition, "{case}");
        assert_eq!(id.sequence(), sequence, "{case}");
    }
}

#[test]
fn vectors_decode_from_uppercase() {
    for &(case, .., text) in VECTORS {
        let upper = text.to_ascii_uppercase();
        assert_eq!(upper.parse::<Sno>().unwrap().to_string(), text, "{case}");
    }
}

#[test]
fn named_constants_are_the_extremes() {
    assert_eq!(Sno::NIL.to_string(), "2222222222222222");
    assert_eq!(Sno::MAX.to_string(), "xxxxxxxxxxxxxxxx");
}

#[test]
fn invalid_texts_are_rejected_with_what_and_where() {
    let cases: &[(&[u8], DecodeError)] = &[
        (
            b"brpk4q72xwf2m631",
            DecodeError::Symbol {
                index: 15,
                byte: b'1',
            },
        ),
        (
            b"yyyyyyyyyyyyyyyy",
            DecodeError::Symbol {
                index: 0,
                byte: b'y',
            },
        ),
        (
            b"0000000000000000",
            DecodeError::Symbol {
                index: 0,
                byte: b'0',
            },
        ),
        (b"brpk4q72xwf2m63", DecodeError::Length { bytes: 15 }),
        (b"brpk4q72xwf2m63ll", DecodeError::Length { bytes: 17 }),
        (b"", DecodeError::Length { bytes: 0 }),
        (
            b"brpk4q72xwf2m6\xc3\xa9",
            DecodeError::Symbol {
                index: 14,
                byte: 0xc3,
            },
        ),
        (
            b"\xffrpk4q72xwf2m63l",
            DecodeError::Symbol {
                index: 0,
                byte: 0xff,
            },
        ),
        (
            b"brpk4q72-wf2m63l",
            DecodeError::Symbol {
                index: 8,
                byte: b'-',
            },
        ),
        (
            b"brpk4q72xwf2m63Y",
            DecodeError::Symbol {
                index: 15,
                byte: b'Y',
            },
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Sno::decode(text),
            Err(*expected),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn decode_errors_read_well() {
    let message = |text: &[u8]| Sno::decode(text).unwrap_err().to_string();
    assert_eq!(
        message(b"brpk4q72xwf2m63"),
        "a sno is 16 characters long, not 15"
    );
    assert_eq!(
        message(b"brpk4q72xwf2m631"),
        "character '1' at position 16 is not one of 2-9, a-x"
    );
    assert_eq!(
        message("brpk4q72xwf2m6é".as_bytes()),
        "byte 0xc3 at position 15 is not one of 2-9, a-x"
    );
}

#[test]
fn binary_form_is_exactly_ten_bytes() {
    let bytes = [0x4e, 0x6f, 0x21, 0x60, 0xa0, 0xff, 0x9a, 0x0a, 0x10, 0x33];
    assert_eq!(
        Sno::try_from(&bytes[..]).unwrap().to_string(),
        "brpk4q72xwf2m63l"
    );
    assert_eq!(Sno::try_from(&bytes[..9]).unwrap_err().0, 9);
    assert_eq!(Sno::try_from(&[0u8; 11][..]).unwrap_err().0, 11);
}

#[test]
fn parts_out_of_range_name_the_part() {
    let ok = 1_636_681_382_123;
    assert_eq!(
        Sno::try_from_parts(ok, 0, 42, 9350, 77)
            .unwrap()
            .to_string(),
        "7gcn3i5m7akae24f"
    );
    // A TimeRangeError cannot be built outside the crate (it may gain fields): check its time.
    for ms in [1_262_303_999_999, 3_461_327_255_549] {
        match Sno::try_from_parts(ms, 0, 0, 0, 0) {
            Err(PartsError::Time(err)) => assert_eq!(err.unix_ms, ms),
            other => panic!("{ms}: {other:?}"),
        }
    }
    let cases = [
        ((ok, 2, 0, 0, 0), PartsError::TickTock(2)),
        ((ok, -1, 0, 0, 0), PartsError::TickTock(-1)),
        ((ok, 0, 256, 0, 0), PartsError::Meta(256)),
        ((ok, 0, -1, 0, 0), PartsError::Meta(-1)),
        ((ok, 0, 0, 65536, 0), PartsError::Partition(65536)),
        ((ok, 0, 0, 0, 65536), PartsError::Sequence(65536)),
        ((ok, 0, 0, 0, -1), PartsError::Sequence(-1)),
    ];
    for ((ms, tick, meta, partition, sequence), expected) in cases {
        assert_eq!(
            Sno::try_from_parts(ms, tick, meta, partition, sequence),
            Err(expected)
        );
    }
    assert_eq!(
        PartsError::Meta(256).to_string(),
        "meta 256 is out of range 0..255"
    );
}

#[test]
fn min_and_max_bound_the_unit() {
    let unit = Units::from_unix_millis(1_709_210_096_789).unwrap();
    let inside: Sno = "8i5fftkci4223222".parse().unwrap();
    assert!(Sno::min_at(unit) <= inside && inside <= Sno::max_at(unit));
    let next = Units::new(unit.get() + 1).unwrap();
    assert!(Sno::max_at(unit) < Sno::min_at(next));
    assert_eq!(Sno::min_at(Units::MIN), Sno::NIL);
    assert_eq!(Sno::max_at(Units::MAX), Sno::MAX);
}

/// serde (the `serde` feature) with no data format crate, so that the tests need none: a
/// `fmt::Formatter` is a serde serializer that writes strings and numbers as they are and
/// refuses bytes, `null` and compound values, and serde's `value` deserializers each hand over
/// one value of one kind, as a format would.
#[cfg(feature = "serde")]
mod serde_form {
    use serde::de::value::{BytesDeserializer, Error, StrDeserializer, UnitDeserializer};
    use serde::de::{Deserialize, IntoDeserializer};
    use serde::Serialize;
    use sno::Sno;
    use std::fmt;

    /// What `Serialize` makes of a value, as text, or an error if it is not a string or a
    /// number.
    fn serialized(value: impl Serialize) -> Result<String, fmt::Error> {
        struct Serialized<T>(T);

        impl<T: Serialize> fmt::Display for Serialized<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.serialize(f)
            }
        }

        let mut text = String::new();
        fmt::write(&mut text, format_args!("{}", Serialized(value)))?;
        Ok(text)
    }

    fn from_text(text: &str) -> Result<Sno, Error> {
        Sno::deserialize(StrDeserializer::new(text))
    }

    #[test]
    fn an_id_serializes_as_its_text_and_the_zero_id_is_not_null() {
        let id: Sno = "brpk4q72xwf2m63l".parse().unwrap();
        assert_eq!(serialized(id).as_deref(), Ok("brpk4q72xwf2m63l"));
        assert_eq!(serialized(Sno::NIL).as_deref(), Ok("2222222222222222"));
    }

    #[test]
    fn an_id_deserializes_from_its_text_as_a_string_or_bytes() {
        let id: Sno = "brpk4q72xwf2m63l".parse().unwrap();
        assert_eq!(from_text("brpk4q72xwf2m63l"), Ok(id));
        assert_eq!(from_text("BRPK4Q72XWF2M63L"), Ok(id));
        let bytes = BytesDeserializer::<Error>::new(b"brpk4q72xwf2m63l");
        assert_eq!(Sno::deserialize(bytes), Ok(id));
        assert_eq!(from_text("2222222222222222"), Ok(Sno::NIL));
        // An absent ID is Option's business: `null` is None, never the zero ID.
        let null = UnitDeserializer::<Error>::new();
        assert_eq!(Option::<Sno>::deserialize(null), Ok(None));
    }

    #[test]
    fn a_bad_text_or_another_kind_of_value_is_an_error_that_says_why() {
        assert_eq!(
            from_text("brpk4q72xwf2m631").unwrap_err().to_string(),
            "character '1' at position 16 is not one of 2-9, a-x"
        );
        assert_eq!(
            from_text("brpk4q72xwf2m63").unwrap_err().to_string(),
            "a sno is 16 characters long, not 15"
        );
        let number: serde::de::value::U64Deserializer<Error> = 42u64.into_deserializer();
        assert_eq!(
            Sno::deserialize(number).unwrap_err().to_string(),
            "invalid type: integer `42`, expected a 16-character sno"
        );
    }
}

fn any_sno() -> impl Strategy<Value = Sno> {
    any::<[u8; 10]>().prop_map(Sno::from_bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn text_round_trips(id in any_sno()) {
        let text = id.to_string();
        prop_assert_eq!(text.len(), 16);
        prop_assert!(text.bytes().all(|b| sno::text::ALPHABET.contains(&b)));
        prop_assert_eq!(text.parse::<Sno>(), Ok(id));
    }

    #[test]
    fn binary_round_trips(id in any_sno()) {
        prop_assert_eq!(Sno::try_from(&id.to_bytes()[..]), Ok(id));
    }

    #[test]
    fn text_order_is_byte_order(a in any_sno(), b in any_sno()) {
        prop_assert_eq!(a.to_string().cmp(&b.to_string()), a.as_bytes().cmp(b.as_bytes()));
        prop_assert_eq!(a.cmp(&b), a.as_bytes().cmp(b.as_bytes()));
    }

    #[test]
    fn parts_round_trip(
        units in 0u64..(1 << 39), tick_tock: bool, meta: u8, partition: u16, sequence: u16,
    ) {
        let parts = Parts { time: Units::new(units).unwrap(), tick_tock, meta, partition, sequence };
        let id = Sno::from_parts(parts);
        prop_assert_eq!(id.parts(), parts);
        prop_assert_eq!(Sno::from_parts(id.parts()), id);
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        match Sno::decode(&bytes) {
            Ok(id) => prop_assert_eq!(id.to_string().to_ascii_lowercase(), String::from_utf8(bytes).unwrap().to_ascii_lowercase()),
            Err(DecodeError::Length { bytes: n }) => prop_assert!(n != 16 && n == bytes.len()),
            Err(DecodeError::Symbol { index, byte }) => prop_assert_eq!(bytes[index], byte),
            Err(other) => prop_assert!(false, "a kind of error this test does not know: {other:?}"),
        }
    }

    #[test]
    fn decoding_sixteen_arbitrary_symbols_or_not(bytes in proptest::collection::vec(
        prop_oneof![Just(b'2'), Just(b'x'), Just(b'X'), Just(b'a'), Just(b'1'), Just(b'y'), any::<u8>()], 16)) {
        let valid = bytes.iter().all(|b| sno::text::ALPHABET.contains(&b.to_ascii_lowercase()));
        prop_assert_eq!(Sno::decode(&bytes).is_ok(), valid);
    }
}
