//! How sno raises errors: PostgreSQL's error reports, with a SQLSTATE, DETAIL and HINT, and on
//! PostgreSQL 16+ the soft errors of input functions. What each error says is `errors`'.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{pg_sys, PgLogLevel, PgSqlErrorCode};

/// Raises an ERROR; does not return.
#[track_caller]
pub(crate) fn raise(code: PgSqlErrorCode, message: String, detail: Option<String>) -> ! {
    report(PgLogLevel::ERROR, code, message, detail, None)
}

/// Raises an ERROR with a HINT saying what to do about it, and a DETAIL if there is more to say
/// about what happened.
#[track_caller]
pub(crate) fn raise_with_hint(
    code: PgSqlErrorCode,
    message: String,
    detail: Option<String>,
    hint: &str,
) -> ! {
    report(PgLogLevel::ERROR, code, message, detail, Some(hint))
}

/// Raises an ERROR, unless the caller passed an error-saving context (PostgreSQL 16+: input
/// functions called by `pg_input_is_valid`, `pg_input_error_info` or `COPY ... ON_ERROR`): then
/// the same SQLSTATE, message and detail go into that context, and this returns.
#[track_caller]
pub(crate) fn raise_or_save(
    context: *mut pg_sys::Node,
    code: PgSqlErrorCode,
    message: String,
    detail: String,
) {
    if !save_soft_error(context, code, &message, &detail) {
        raise(code, message, Some(detail))
    }
}

/// Whether the error went into `context`, an ErrorSaveContext (PostgreSQL 16 added them; up to
/// 15 every input error is hard, so nothing is saved there).
#[cfg(not(pg16_or_later))]
fn save_soft_error(_: *mut pg_sys::Node, _: PgSqlErrorCode, _: &str, _: &str) -> bool {
    false
}

#[cfg(pg16_or_later)]
#[track_caller]
fn save_soft_error(
    context: *mut pg_sys::Node,
    code: PgSqlErrorCode,
    message: &str,
    detail: &str,
) -> bool {
    use std::ffi::{c_int, CString};
    extern "C-unwind" {
        // Not in pgrx's bindings (pgrx declares it privately for its own error reports).
        fn errcode(sqlerrcode: c_int) -> c_int;
    }
    // SAFETY: `context` is null or the node the caller passed in fcinfo->context.
    let soft =
        !context.is_null() && unsafe { (*context).type_ } == pg_sys::NodeTag::T_ErrorSaveContext;
    if !soft {
        return false;
    }
    let c_string = |text: &str| CString::new(text.replace('\0', "")).expect("NULs removed");
    let location = std::panic::Location::caller();
    let file = c_string(location.file());
    // SAFETY: errsave_start on an ErrorSaveContext marks the error and, only when the caller
    // wants details, opens an error-stack entry (returning true) that errcode, errmsg and
    // errdetail fill and errsave_finish copies into the context and closes. None of them
    // raises for such a context. The format strings are "%s", so no text is read as one.
    unsafe {
        if pg_sys::errsave_start(context, std::ptr::null()) {
            errcode(code as c_int);
            pg_sys::errmsg_internal(c"%s".as_ptr(), c_string(message).as_ptr());
            pg_sys::errdetail_internal(c"%s".as_ptr(), c_string(detail).as_ptr());
            pg_sys::errsave_finish(
                context,
                file.as_ptr(),
                location.line() as i32,
                std::ptr::null(),
            );
        }
    }
    true
}

/// Sends a WARNING to the client and the server log, and returns.
#[track_caller]
pub(crate) fn warn(code: PgSqlErrorCode, message: String, detail: String) {
    ErrorReport::new(code, message, "sno")
        .set_detail(detail)
        .report(PgLogLevel::WARNING);
}

/// Ends the process (in the postmaster: the server) with a FATAL error and a HINT.
#[track_caller]
pub(crate) fn fatal(code: PgSqlErrorCode, message: String, hint: &str) -> ! {
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
