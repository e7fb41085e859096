//! Text and binary I/O of the `sno` type, and its conversions to and from `bytea`.

use super::errors::raise;
use crate::id::Sno;
use pgrx::datum::Internal;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;
use std::ffi::{CStr, CString};

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_in(input: &CStr) -> Sno {
    Sno::decode(input.to_bytes()).unwrap_or_else(|error| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!(
                "invalid input syntax for type sno: \"{}\"",
                input.to_string_lossy()
            ),
            Some(error.to_string()),
        )
    })
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_out(id: Sno) -> CString {
    CString::new(id.encode()).expect("the sno alphabet has no NUL")
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_recv(mut message: Internal) -> Sno {
    // SAFETY: PostgreSQL passes a StringInfo holding this field's bytes.
    let message = unsafe { message.get_mut::<pg_sys::StringInfoData>() }
        .expect("sno_recv needs a message buffer");
    let remaining = (message.len - message.cursor) as usize;
    if remaining != Sno::SIZE {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
            format!("invalid binary sno: {remaining} bytes, a sno is 10"),
            None,
        );
    }
    // SAFETY: `remaining` bytes from the cursor are inside the buffer.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            message.data.add(message.cursor as usize).cast::<u8>(),
            Sno::SIZE,
        )
    };
    message.cursor += Sno::SIZE as i32;
    Sno::try_from(bytes).expect("length checked above")
}

/// The binary form, also the `sno::bytea` cast.
#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_send(id: Sno) -> Vec<u8> {
    id.to_bytes().to_vec()
}

/// The `bytea::sno` cast: exactly 10 bytes.
#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_from_bytea(bytes: &[u8]) -> Sno {
    Sno::try_from(bytes).unwrap_or_else(|error| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("invalid bytea for type sno: {error}"),
            None,
        )
    })
}
