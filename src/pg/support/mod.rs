//! What every other layer uses: errors and their messages, the `sno.*` settings, the server's
//! clock, conversions between sno values and PostgreSQL's. Imports nothing else of `pg`.

pub(crate) mod backend_local;
pub(crate) mod background_worker;
pub(crate) mod datum;
pub(crate) mod ereport;
pub(crate) mod errors;
pub(crate) mod host_names;
pub(crate) mod libpq;
pub(crate) mod log_spacing;
pub(crate) mod server_clock;
pub(crate) mod settings;
pub(crate) mod timestamps;
