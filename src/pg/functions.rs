//! Reading IDs apart and making them from parts and times.

use super::errors::{part_out_of_range, time_out_of_range};
use crate::id::Sno;
use crate::time::{TimeRangeError, Units};
use pgrx::prelude::*;

/// PostgreSQL counts timestamps in microseconds from 2000-01-01T00:00:00Z.
const POSTGRES_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

/// The Unix millisecond that contains `at` (floored, so 4 ms units floor too), or an error for
/// `infinity` and times far outside any ID's range.
pub(super) fn unix_millis(at: TimestampWithTimeZone) -> Result<i64, TimeRangeError> {
    let unix_us = at.into_inner().checked_add(POSTGRES_EPOCH_UNIX_US);
    match unix_us {
        Some(us) if at.is_finite() => Ok(us.div_euclid(1000)),
        _ => Err(TimeRangeError {
            unix_ms: if at.into_inner() < 0 {
                i64::MIN
            } else {
                i64::MAX
            },
        }),
    }
}

fn units(at: TimestampWithTimeZone) -> Units {
    unix_millis(at)
        .and_then(Units::from_unix_millis)
        .unwrap_or_else(|_| time_out_of_range())
}

pub(super) fn timestamptz(unix_ms: i64) -> TimestampWithTimeZone {
    TimestampWithTimeZone::try_from(unix_ms * 1000 - POSTGRES_EPOCH_UNIX_US)
        .expect("every sno time is a valid timestamptz")
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_time(id: Sno) -> TimestampWithTimeZone {
    timestamptz(id.unix_millis())
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_tick_tock(id: Sno) -> i32 {
    id.tick_tock() as i32
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_meta(id: Sno) -> i32 {
    id.meta().into()
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_partition(id: Sno) -> i32 {
    id.partition().into()
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_sequence(id: Sno) -> i32 {
    id.sequence().into()
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_from_parts(
    at: TimestampWithTimeZone,
    meta: i32,
    partition: i32,
    sequence: i32,
    tick_tock: i32,
) -> Sno {
    let unix_ms = unix_millis(at).unwrap_or_else(|_| time_out_of_range());
    Sno::try_from_parts(
        unix_ms,
        tick_tock.into(),
        meta.into(),
        partition.into(),
        sequence.into(),
    )
    .unwrap_or_else(|error| part_out_of_range(error))
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_min(at: TimestampWithTimeZone) -> Sno {
    Sno::min_at(units(at))
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn sno_max(at: TimestampWithTimeZone) -> Sno {
    Sno::max_at(units(at))
}
