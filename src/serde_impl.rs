//! serde support: an ID is its 16-character text form in every format.
//!
//! The all-zero ID is the string `"2222222222222222"`, not `null` as in the Go package: it is a
//! valid ID, and mapping it to `null` would make `Sno` and `Option<Sno>` indistinguishable in
//! JSON. Use `Option<Sno>` for an absent ID.

use crate::id::Sno;
use crate::text::TEXT_LEN;
use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use std::fmt;

impl serde::Serialize for Sno {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.encode();
        // The alphabet is ASCII, so this is always valid UTF-8.
        serializer.serialize_str(std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?)
    }
}

impl<'de> serde::Deserialize<'de> for Sno {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Sno, D::Error> {
        deserializer.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl Visitor<'_> for TextVisitor {
    type Value = Sno;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {TEXT_LEN}-character sno")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Sno, E> {
        Sno::decode(text.as_bytes()).map_err(E::custom)
    }

    fn visit_bytes<E: de::Error>(self, text: &[u8]) -> Result<Sno, E> {
        Sno::decode(text).map_err(E::custom)
    }
}
