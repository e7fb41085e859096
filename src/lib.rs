//! Compact, sortable, unique 10-byte IDs: the sno format, its generator, and a PostgreSQL
//! extension built on them.
//!
//! ```
//! use sno::{Config, Generator, RealtimeClock, Sno};
//!
//! // One generator per partition (say, per server); meta is yours, e.g. which table.
//! let generator = Generator::new(Config::new(7));
//! let id = generator.generate(1, &RealtimeClock)?;
//! assert_eq!((id.meta(), id.partition()), (1, 7));
//!
//! // 16 characters that sort as the 10 bytes do, and back.
//! let text = id.to_string();
//! assert_eq!(text.len(), 16);
//! assert_eq!(text.parse::<Sno>()?, id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! An ID ([`Sno`]) is a 39-bit time in 4 ms units since 2010 with a tick-tock bit, a metabyte,
//! a 16-bit partition and a 16-bit sequence, big-endian, so that byte order is time order. Its
//! text form is 16 characters of an ordered base32. Both are byte-for-byte those of the Go
//! package `muyo/sno`; `SPEC.md` at the root of the repository specifies them, and the
//! references to "SPEC §N" in this crate are to its sections.
//!
//! A [`Generator`] never issues an ID twice, whatever its clock does: it waits for the next
//! 4 ms unit when one is full, and starts a second timeline (the tick-tock bit) when the clock
//! goes back. Its state is a few atomics and no pointers, so one generator can serve many
//! threads, or many processes from shared memory; a [`Lease`] lets each caller take runs of
//! sequences in one step.
//!
//! # Features
//!
//! With no features the crate is the format and the generator in plain Rust, depending only on
//! `libc`. Each feature adds one thing:
//!
//! - `serde`: [`Sno`] is `Serialize` and `Deserialize` as its text form (the all-zero ID is
//!   `"2222222222222222"`, not `null`; use `Option<Sno>` for a missing ID).
//! - `postgres-types`: [`Sno`] is a parameter and a result of the `postgres` and
//!   `tokio-postgres` crates, as the extension's `sno` type (binary: the 10 bytes).
//! - `sqlx`: the same for sqlx's PostgreSQL driver.
//! - `diesel`: the same for Diesel's PostgreSQL backend, with the SQL type
//!   [`sql_types::Sno`] for `table!` (`id -> sno::sql_types::Sno`).
//! - `pg15` (the default) .. `pg19`: the PostgreSQL extension itself, for one major, with
//!   pgrx; `test-clock` adds a setting that moves its clock, for tests of the server.
//! - `test-util`: a [`Clock`] that moves only when told to (`ManualClock`), for tests and
//!   benchmarks. It is not part of the API and may change in any release.

#![deny(missing_docs)]

pub mod clock;
pub mod generator;
pub mod id;
pub mod text;
pub mod time;

#[cfg(any(test, feature = "extension"))]
mod persisted;
#[cfg(feature = "extension")]
mod pg;
#[cfg(feature = "serde")]
mod serde_impl;
#[cfg(feature = "diesel")]
mod with_diesel;
#[cfg(feature = "postgres-types")]
mod with_postgres_types;
#[cfg(feature = "sqlx")]
mod with_sqlx;

#[cfg(feature = "test-util")]
pub use clock::ManualClock;
pub use clock::{Clock, CoarseClock, Deadline, RealtimeClock};
pub use generator::{Config, GenerateError, Generator, Lease, PoolTooSmall, Snapshot, Stats};
pub use id::{LengthError, Parts, PartsError, Sno};
pub use text::DecodeError;
pub use time::{TimeRangeError, Units};
#[cfg(feature = "diesel")]
pub use with_diesel::sql_types;
