//! The PostgreSQL extension: a thin mapping of the core onto SQL.
//!
//! All SQL objects are declared in `sql/sno.sql`, which reads like any hand-written extension
//! script; the Rust functions here are the C entry points it names (`<function>_wrapper`).

mod compare;
mod datum;
mod errors;
mod functions;
mod io;
// Only `cargo pgrx test` (which turns on `pg_test`) runs these: they need a server.
#[cfg(feature = "pg_test")]
mod tests;

pgrx::pg_module_magic!();

pgrx::extension_sql_file!(
    "../../sql/sno.sql",
    name = "sno_sql",
    creates = [Type(crate::id::Sno)]
);
