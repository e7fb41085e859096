//! The boundary IDs of a time: exact, saturating, NULL where no ID qualifies.

use crate::id::Sno;
use crate::pg::support::timestamps::POSTGRES_EPOCH_UNIX_US;
use crate::time::{Units, EPOCH_UNIX_MS, UNIT_MS};
use pgrx::pg_sys;
use pgrx::prelude::*;

/// Length of a unit in PostgreSQL's microseconds.
const UNIT_US: i128 = UNIT_MS as i128 * 1000;

/// Microseconds from the sno epoch to `at`. PostgreSQL's `-infinity` and `infinity` are i64's
/// extremes, so in i128 they land far before the first unit and far after the last one, and
/// every bound below saturates or is NULL for them without a special case.
fn micros_since_sno_epoch(at: TimestampWithTimeZone) -> i128 {
    i128::from(at.into_inner()) + i128::from(POSTGRES_EPOCH_UNIX_US)
        - i128::from(EPOCH_UNIX_MS) * 1000
}

/// The first unit that starts at or after `at`.
fn first_unit_from(at: TimestampWithTimeZone) -> i128 {
    let micros = micros_since_sno_epoch(at);
    micros.div_euclid(UNIT_US) + i128::from(micros.rem_euclid(UNIT_US) != 0)
}

/// The last unit that starts at or before `at`.
fn last_unit_through(at: TimestampWithTimeZone) -> i128 {
    micros_since_sno_epoch(at).div_euclid(UNIT_US)
}

/// The smallest ID of the unit, or of the first unit for one before it; None after the last.
fn first_id_from_unit(unit: i128) -> Option<Sno> {
    let unit = u64::try_from(unit.max(0)).ok()?;
    Units::new(unit).map(Sno::min_at)
}

/// The largest ID of the unit, or of the last unit for one after it; None before the first.
fn last_id_through_unit(unit: i128) -> Option<Sno> {
    if unit < 0 {
        return None;
    }
    let last = i128::from(Units::MAX.get());
    Units::new(unit.min(last) as u64).map(Sno::max_at)
}

#[pg_extern(sql = false)]
fn sno_min_at_or_after(at: TimestampWithTimeZone) -> Option<Sno> {
    first_id_from_unit(first_unit_from(at))
}

#[pg_extern(sql = false)]
fn sno_min_after(at: TimestampWithTimeZone) -> Option<Sno> {
    first_id_from_unit(last_unit_through(at) + 1)
}

#[pg_extern(sql = false)]
fn sno_max_at_or_before(at: TimestampWithTimeZone) -> Option<Sno> {
    last_id_through_unit(last_unit_through(at))
}

#[pg_extern(sql = false)]
fn sno_max_before(at: TimestampWithTimeZone) -> Option<Sno> {
    last_id_through_unit(first_unit_from(at) - 1)
}

/// The four boundary IDs of a time, each a SQL function of its own.
#[derive(Clone, Copy)]
pub(super) enum Bound {
    MinAtOrAfter,
    MinAfter,
    MaxAtOrBefore,
    MaxBefore,
}

pub(super) type CEntryPoint =
    unsafe extern "C-unwind" fn(pg_sys::FunctionCallInfo) -> pg_sys::Datum;

impl Bound {
    pub(super) const ALL: [Bound; 4] = [
        Bound::MinAtOrAfter,
        Bound::MinAfter,
        Bound::MaxAtOrBefore,
        Bound::MaxBefore,
    ];

    /// The bound of `at`, as its SQL function computes it.
    pub(super) fn of(self, at: TimestampWithTimeZone) -> Option<Sno> {
        match self {
            Bound::MinAtOrAfter => sno_min_at_or_after(at),
            Bound::MinAfter => sno_min_after(at),
            Bound::MaxAtOrBefore => sno_max_at_or_before(at),
            Bound::MaxBefore => sno_max_before(at),
        }
    }

    pub(super) fn name(self) -> &'static core::ffi::CStr {
        match self {
            Bound::MinAtOrAfter => c"sno_min_at_or_after",
            Bound::MinAfter => c"sno_min_after",
            Bound::MaxAtOrBefore => c"sno_max_at_or_before",
            Bound::MaxBefore => c"sno_max_before",
        }
    }

    /// The C entry point of its SQL function, by which sno's own is recognised.
    pub(super) fn entry_point(self) -> CEntryPoint {
        match self {
            Bound::MinAtOrAfter => sno_min_at_or_after_wrapper,
            Bound::MinAfter => sno_min_after_wrapper,
            Bound::MaxAtOrBefore => sno_max_at_or_before_wrapper,
            Bound::MaxBefore => sno_max_before_wrapper,
        }
    }
}
