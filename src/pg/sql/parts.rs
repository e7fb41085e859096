//! Reading IDs apart and making them from parts and times.

use crate::id::Sno;
use crate::pg::support::errors::{part_out_of_range, time_out_of_range};
use crate::pg::support::timestamps::{timestamptz, POSTGRES_EPOCH_UNIX_US};
use crate::time::Units;
use pgrx::prelude::*;

/// The Unix millisecond that contains `at` (floored, so 4 ms units floor too); `infinity` and
/// times no ID can hold raise 22008.
pub(crate) fn unix_millis(at: TimestampWithTimeZone) -> i64 {
    match at.into_inner().checked_add(POSTGRES_EPOCH_UNIX_US) {
        Some(unix_us) if at.is_finite() => unix_us.div_euclid(1000),
        _ => time_out_of_range(),
    }
}

fn units(at: TimestampWithTimeZone) -> Units {
    Units::from_unix_millis(unix_millis(at)).unwrap_or_else(|_| time_out_of_range())
}

#[pg_extern(sql = false)]
fn sno_time(id: Sno) -> TimestampWithTimeZone {
    timestamptz(id.unix_millis())
}

#[pg_extern(sql = false)]
fn sno_tick_tock(id: Sno) -> i32 {
    id.tick_tock() as i32
}

#[pg_extern(sql = false)]
fn sno_meta(id: Sno) -> i32 {
    id.meta().into()
}

#[pg_extern(sql = false)]
fn sno_partition(id: Sno) -> i32 {
    id.partition().into()
}

#[pg_extern(sql = false)]
fn sno_sequence(id: Sno) -> i32 {
    id.sequence().into()
}

#[pg_extern(sql = false)]
fn sno_from_parts(
    at: TimestampWithTimeZone,
    meta: i32,
    partition: i32,
    sequence: i32,
    tick_tock: i32,
) -> Sno {
    Sno::try_from_parts(
        unix_millis(at),
        tick_tock.into(),
        meta.into(),
        partition.into(),
        sequence.into(),
    )
    .unwrap_or_else(|error| part_out_of_range(error))
}

#[pg_extern(sql = false)]
fn sno_min(at: TimestampWithTimeZone) -> Sno {
    Sno::min_at(units(at))
}

#[pg_extern(sql = false)]
fn sno_max(at: TimestampWithTimeZone) -> Sno {
    Sno::max_at(units(at))
}
