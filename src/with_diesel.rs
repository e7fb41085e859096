//! `Sno` as a Diesel value, for the PostgreSQL backend: the SQL type [`sql_types::Sno`] for
//! `table!`, and `ToSql`/`FromSql` in the binary form (the 10 bytes), which is the form Diesel
//! always uses with PostgreSQL. `AsExpression` and `FromSqlRow` are derived on [`crate::Sno`]
//! itself (in `id.rs`), so that `Sno` and `Option<Sno>` work in filters, inserts and results.

use crate::id::Sno;
use ::diesel::deserialize::{self, FromSql};
use ::diesel::pg::{Pg, PgValue};
use ::diesel::serialize::{self, IsNull, Output, ToSql};
use std::io::Write;

/// SQL types for Diesel's `table!` (feature `diesel`).
///
/// The type's OID is looked up by name (`sno`) once per connection, as Diesel does for every
/// type declared with `postgres_type(name = ...)`, since an extension type's OID differs between
/// databases.
///
/// ```
/// use diesel::prelude::*;
/// use sno::Sno;
///
/// diesel::table! {
///     items (id) {
///         id -> sno::sql_types::Sno,
///         n -> Int4,
///     }
/// }
///
/// let id: Sno = "brpk4q72xwf2m63l".parse()?;
/// let query = items::table.find(id).select(items::n);
/// assert_eq!(
///     diesel::debug_query::<diesel::pg::Pg, _>(&query).to_string(),
///     r#"SELECT "items"."n" FROM "items" WHERE ("items"."id" = $1) -- binds: [Sno(brpk4q72xwf2m63l)]"#
/// );
/// # Ok::<(), sno::DecodeError>(())
/// ```
///
/// A `&str` where an ID is expected does not compile (`AsExpression<sno::sql_types::Sno>` is
/// not implemented for `&str`): parse it first, so that a bad string is a `DecodeError` in the
/// application, never a query.
///
/// ```compile_fail
/// diesel::table! { items (id) { id -> sno::sql_types::Sno, } }
/// use diesel::prelude::*;
/// let _ = items::table.filter(items::id.eq("brpk4q72xwf2m63l"));
/// ```
pub mod sql_types {
    /// The extension's `sno` type, for columns declared in Diesel's `table!`:
    /// `id -> sno::sql_types::Sno`. Rust's value for it is [`crate::Sno`].
    #[derive(
        Debug, Clone, Copy, Default, ::diesel::sql_types::SqlType, ::diesel::query_builder::QueryId,
    )]
    #[diesel(postgres_type(name = "sno"))]
    pub struct Sno;
}

impl ToSql<sql_types::Sno, Pg> for Sno {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(self.as_bytes())?;
        Ok(IsNull::No)
    }
}

impl FromSql<sql_types::Sno, Pg> for Sno {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Sno> {
        Ok(Sno::try_from(value.as_bytes())?)
    }
}
