//! sno: compact, sortable, unique 10-byte IDs, as a Rust library and a PostgreSQL extension.
//!
//! The format and the generator (`id`, `text`, `time`, `generator`, `clock`) are plain Rust with
//! no PostgreSQL in them; `pg` maps them onto SQL (the `pg15`..`pg18` features). Applications
//! that read and write IDs through a PostgreSQL client turn on `postgres-types` (for the
//! `postgres` and `tokio-postgres` crates) or `sqlx`, and get neither pgrx nor the extension.

pub mod clock;
pub mod generator;
pub mod id;
pub mod serde;
pub mod text;
pub mod time;

#[cfg(feature = "extension")]
mod pg;
#[cfg(feature = "postgres-types")]
mod with_postgres_types;
#[cfg(feature = "sqlx")]
mod with_sqlx;

pub use clock::{Clock, CoarseClock, Deadline, ManualClock, RealtimeClock};
pub use generator::{Config, GenerateError, Generator, Lease, PoolTooSmall, Snapshot, Stats};
pub use id::{LengthError, Parts, PartsError, Sno};
pub use text::DecodeError;
pub use time::{TimeRangeError, Units};

/// Required by `cargo pgrx test`: settings for the test server.
#[cfg(all(test, feature = "extension"))]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![
            "shared_preload_libraries = 'sno'",
            "sno.partition = 4242",
            "sno.backfill_partition = 4243",
        ]
    }
}
