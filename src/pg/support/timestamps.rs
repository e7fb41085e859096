//! Times as PostgreSQL holds and prints them.

use pgrx::prelude::*;

/// PostgreSQL counts timestamps in microseconds from 2000-01-01T00:00:00Z.
pub(crate) const POSTGRES_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

/// A `timestamptz` for a Unix millisecond that a sno ID can hold.
pub(crate) fn timestamptz(unix_ms: i64) -> TimestampWithTimeZone {
    TimestampWithTimeZone::try_from(unix_ms * 1000 - POSTGRES_EPOCH_UNIX_US)
        .expect("every sno time is a valid timestamptz")
}

/// A Unix millisecond as PostgreSQL prints a timestamptz in UTC (`2026-11-23 11:40:00.004+00`),
/// for messages: the postmaster has no session time zone to format with.
pub(crate) fn format_unix_millis(unix_ms: i64) -> String {
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
