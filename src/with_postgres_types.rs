//! `Sno` as a parameter and result of the `postgres` and `tokio-postgres` crates.
//!
//! The binary form is the 10 bytes, as the extension's send and receive functions have it. The
//! type is matched by its name, `sno`, because an extension type's OID differs between databases.

use crate::id::Sno;
use ::bytes::BytesMut;
use ::postgres_types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use std::error::Error;

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for Sno {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(self.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "sno"
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Sno {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Sno, BoxError> {
        Ok(Sno::try_from(raw)?)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "sno"
    }
}
