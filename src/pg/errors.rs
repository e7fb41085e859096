//! Raising PostgreSQL errors with the right SQLSTATE.

use crate::id::PartsError;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Raises an ERROR; does not return.
#[track_caller]
pub(super) fn raise(code: PgSqlErrorCode, message: String, detail: Option<String>) -> ! {
    report(PgLogLevel::ERROR, code, message, detail, None)
}

/// Raises an ERROR with a HINT saying what to do about it, and a DETAIL if there is more to say
/// about what happened.
#[track_caller]
pub(super) fn raise_with_hint(
    code: PgSqlErrorCode,
    message: String,
    detail: Option<String>,
    hint: &str,
) -> ! {
    report(PgLogLevel::ERROR, code, message, detail, Some(hint))
}

/// Sends a WARNING to the client and the server log, and returns.
#[track_caller]
pub(super) fn warn(code: PgSqlErrorCode, message: String, detail: String) {
    ErrorReport::new(code, message, "sno")
        .set_detail(detail)
        .report(PgLogLevel::WARNING);
}

/// Ends the process (in the postmaster: the server) with a FATAL error and a HINT.
#[track_caller]
pub(super) fn fatal(code: PgSqlErrorCode, message: String, hint: &str) -> ! {
    report(PgLogLevel::FATAL, code, message, None, Some(hint))
}

#[track_caller]
fn report(
    level: PgLogLevel,
    code: PgSqlErrorCode,
    message: String,
    detail: Option<String>,
    hint: Option<&str>,
) -> ! {
    let mut report = ErrorReport::new(code, message, "sno");
    if let Some(detail) = detail {
        report = report.set_detail(detail);
    }
    if let Some(hint) = hint {
        report = report.set_hint(hint);
    }
    report.report(level);
    unreachable!("ERROR and FATAL do not return")
}

/// 22008: a time the format cannot hold.
pub(super) fn time_out_of_range() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        "timestamp out of range for sno".into(),
        Some("A sno holds times from 2010-01-01 00:00:00+00 to 2079-09-07 15:47:35.548+00.".into()),
    )
}

/// 22003 naming the part, or 22008 for the time.
pub(super) fn part_out_of_range(error: PartsError) -> ! {
    match error {
        PartsError::Time(_) => time_out_of_range(),
        _ => raise(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("sno {error}"),
            None,
        ),
    }
}
