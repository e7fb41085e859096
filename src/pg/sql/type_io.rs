//! Text and binary I/O of the `sno` type, and its conversions to and from `bytea`.

use crate::id::Sno;
use crate::pg::recovery::partition_mistakes;
use crate::pg::support::errors;
use crate::text::TEXT_LEN;
use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::datum::Internal;
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::prelude::*;
use std::ffi::CStr;

/// The 16-character text form, or bytea's hex form of the 10 bytes (`\x` and 20 hex digits).
///
/// The second is what drivers send for a byte string bound as a text parameter of unknown type
/// (Go's pgx for a `[]byte`, such as the reference package's `Sno.Value()`). It cannot be
/// mistaken for the first: `\` is not in the base32 alphabet. Output stays the 16 characters.
///
/// Bad text is a soft error where the caller asks for one (PostgreSQL 16+: `pg_input_is_valid`,
/// `COPY ... ON_ERROR ignore`): reported through the caller's error-saving context, and NULL
/// returned, which the caller then ignores.
#[pg_extern(sql = false)]
fn sno_in(input: &CStr, fcinfo: pg_sys::FunctionCallInfo) -> Option<Sno> {
    let bytes = input.to_bytes();
    let parsed = match bytes.strip_prefix(b"\\x") {
        Some(hex) => from_hex(hex),
        None => Sno::decode(bytes).map_err(|error| error.to_string()),
    };
    match parsed {
        Ok(id) => {
            partition_mistakes::check_replicated(&id);
            Some(id)
        }
        Err(detail) => {
            // SAFETY: PostgreSQL calls an input function with a valid fcinfo.
            errors::invalid_text(unsafe { (*fcinfo).context }, input, detail);
            None
        }
    }
}

/// The ID whose 10 bytes are these 20 hex digits (either case), or what is wrong with them.
fn from_hex(hex: &[u8]) -> Result<Sno, String> {
    if hex.len() != 2 * Sno::SIZE {
        return Err(format!(
            "the bytea hex form of a sno is \\x and 20 hex digits, not {}",
            hex.len()
        ));
    }
    let digit = |position: usize| -> Result<u8, String> {
        let symbol = hex[position];
        (symbol as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| {
                format!(
                    "'{}' at position {} is not a hex digit",
                    symbol.escape_ascii(),
                    position + 3
                )
            })
    };
    let mut bytes = [0u8; Sno::SIZE];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = digit(2 * i)? << 4 | digit(2 * i + 1)?;
    }
    Ok(Sno::from_bytes(bytes))
}

#[pg_extern(sql = false)]
fn sno_out(id: Sno) -> TextOut {
    let mut text = [0u8; TEXT_LEN + 1];
    text[..TEXT_LEN].copy_from_slice(&id.encode());
    TextOut(text)
}

/// The text form with its NUL, returned as a `cstring` by one copy into palloc'd memory (a
/// `CString` would first allocate on the Rust heap; `COPY TO` calls this for every row).
struct TextOut([u8; TEXT_LEN + 1]);

// SAFETY: TextOut is returned as SQL `cstring`, a NUL-terminated string.
unsafe impl SqlTranslatable for TextOut {
    const TYPE_IDENT: &'static str = "sno::pg::io::TextOut";
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Err(ArgumentError::Datum);
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("cstring")));
}

// SAFETY: the datum points to TEXT_LEN + 1 palloc'd bytes ending in NUL.
unsafe impl BoxRet for TextOut {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        unsafe {
            let text = pg_sys::palloc(self.0.len()).cast::<u8>();
            text.copy_from_nonoverlapping(self.0.as_ptr(), self.0.len());
            fcinfo.return_raw_datum(pg_sys::Datum::from(text))
        }
    }
}

#[pg_extern(sql = false)]
fn sno_recv(mut message: Internal) -> Sno {
    // SAFETY: PostgreSQL passes a StringInfo holding this field's bytes.
    let message = unsafe { message.get_mut::<pg_sys::StringInfoData>() }
        .expect("sno_recv needs a message buffer");
    let remaining = (message.len - message.cursor) as usize;
    if remaining != Sno::SIZE {
        errors::invalid_binary_length(remaining);
    }
    // SAFETY: `remaining` bytes from the cursor are inside the buffer.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            message.data.add(message.cursor as usize).cast::<u8>(),
            Sno::SIZE,
        )
    };
    message.cursor += Sno::SIZE as i32;
    let id = Sno::try_from(bytes).expect("length checked above");
    partition_mistakes::check_replicated(&id);
    id
}

/// The binary form, also the `sno::bytea` cast.
#[pg_extern(sql = false)]
fn sno_send(id: Sno) -> Vec<u8> {
    id.to_bytes().to_vec()
}

/// The `bytea::sno` cast: exactly 10 bytes.
#[pg_extern(sql = false)]
fn sno_from_bytea(bytes: &[u8]) -> Sno {
    Sno::try_from(bytes).unwrap_or_else(|error| errors::invalid_bytea(error))
}
