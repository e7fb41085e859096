//! `Sno` as a parameter and result of sqlx's PostgreSQL driver.
//!
//! Parameters go in the binary form, the 10 bytes; results are read in either form (sqlx asks
//! for binary results of prepared queries, and a plain query returns text). The type is named
//! `sno`, since an extension type's OID differs between databases.

use crate::id::Sno;
use ::sqlx::encode::IsNull;
use ::sqlx::error::BoxDynError;
use ::sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueFormat, PgValueRef, Postgres};

impl ::sqlx::Type<Postgres> for Sno {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("sno")
    }
}

impl ::sqlx::postgres::PgHasArrayType for Sno {
    fn array_type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("_sno")
    }
}

impl ::sqlx::Encode<'_, Postgres> for Sno {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        buf.extend_from_slice(self.as_bytes());
        Ok(IsNull::No)
    }
}

impl ::sqlx::Decode<'_, Postgres> for Sno {
    fn decode(value: PgValueRef<'_>) -> Result<Sno, BoxDynError> {
        Ok(match value.format() {
            PgValueFormat::Binary => Sno::try_from(value.as_bytes()?)?,
            PgValueFormat::Text => value.as_str()?.parse()?,
        })
    }
}
