//! Reading IDs apart and making them from parts and times.

use super::errors::{part_out_of_range, time_out_of_range};
use crate::id::Sno;
use crate::time::Units;
use pgrx::prelude::*;

/// PostgreSQL counts timestamps in microseconds from 2000-01-01T00:00:00Z.
pub(super) const POSTGRES_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

/// The Unix millisecond that contains `at` (floored, so 4 ms units floor too); `infinity` and
/// times no ID can hold raise 22008.
pub(super) fn unix_millis(at: TimestampWithTimeZone) -> i64 {
    match at.into_inner().checked_add(POSTGRES_EPOCH_UNIX_US) {
        Some(unix_us) if at.is_finite() => unix_us.div_euclid(1000),
        _ => time_out_of_range(),
    }
}

fn units(at: TimestampWithTimeZone) -> Units {
    Units::from_unix_millis(unix_millis(at)).unwrap_or_else(|_| time_out_of_range())
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
    Sno::try_from_parts(
        unix_millis(at),
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

/// A Unix millisecond as PostgreSQL prints a timestamptz in UTC (`2026-11-23 11:40:00.004+00`),
/// for messages: the postmaster has no session time zone to format with.
pub(super) fn format_unix_millis(unix_ms: i64) -> String {
    let (days, ms_of_day) = (
        unix_ms.div_euclid(86_400_000),
        unix_ms.rem_euclid(86_400_000),
    );
    // Days to a civil date (proleptic Gregorian), after Howard Hinnant's `civil_from_days`.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:03}+00",
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000
    )
}
