//! Conditions on an expression of the time that are comparisons of the time in disguise, each
//! turned into those comparisons (which conditions.rs then makes ranges of `id`):
//!
//! | condition | the same rows as |
//! |---|---|
//! | `sno_time(id)::date = d` | `sno_time(id) >= d::timestamptz AND sno_time(id) < (d + 1)::timestamptz` |
//! | `sno_time(id)::date < d` (`<=`, `>`, `>=`) | `sno_time(id) < d::timestamptz` (and so on) |
//! | `date_trunc('day', sno_time(id)) = t` | `date_trunc('day', t) = t AND sno_time(id) >= t AND sno_time(id) < t + interval '1 day'` |
//! | `x - sno_time(id) < i` (`<=`, `=`, `>`, `>=`) | `sno_time(id) > x - i` (i a constant, as PostgreSQL compares intervals: a month is 30 days, a day 24 hours) |
//! | `r @> sno_time(id)`, `sno_time(id) <@ r` | `sno_time(id) >= lower(r) AND sno_time(id) < upper(r)` (r a constant; its bounds' kinds) |
//!
//! The conversions of a date and the day's end are left to the executor, in the session's time
//! zone when the query runs (a plan may outlive a `SET TimeZone`): only constants whose meaning
//! does not depend on the time zone are computed when planning.

use super::comparison::Comparison;
use super::nodes::{cells, constant_of, timestamptz_constant};
use super::sno_objects::sno_time_call;
use core::ffi::CStr;
use pgrx::is_a;
use pgrx::pg_sys::{self, Node, NodeTag, Oid};

/// date's comparison operators, and the functions and operators of the table above (pinned
/// OIDs of pg_operator.dat and pg_proc.dat).
const DATE_OPERATORS: [(u32, Comparison); 5] = [
    (1093, Comparison::Equal),
    (1095, Comparison::Less),
    (1096, Comparison::LessEqual),
    (1097, Comparison::Greater),
    (1098, Comparison::GreaterEqual),
];
const INTERVAL_OPERATORS: [(u32, Comparison); 5] = [
    (1330, Comparison::Equal),
    (1332, Comparison::Less),
    (1333, Comparison::LessEqual),
    (1334, Comparison::Greater),
    (1335, Comparison::GreaterEqual),
];
const DATE_OF_TIMESTAMPTZ: u32 = 1178;
const TIMESTAMPTZ_OF_DATE: u32 = 1174;
const DATE_PLUS_INTEGER: u32 = 1100;
const DATE_TRUNC: u32 = 1217;
const TIMESTAMPTZ_MINUS_TIMESTAMPTZ: u32 = 1328;
const TIMESTAMPTZ_MINUS_INTERVAL: u32 = 1329;
const TIMESTAMPTZ_PLUS_INTERVAL: u32 = 1327;
const RANGE_CONTAINS_ELEMENT: u32 = 3889;
const ELEMENT_CONTAINED_BY_RANGE: u32 = 3891;
/// now(), transaction_timestamp() and statement_timestamp() (pg_proc.dat).
const TRANSACTION_TIMES: [u32; 3] = [1299, 2647, 2648];
const MICROSECONDS_PER_DAY: i128 = 86_400_000_000;
/// 200 years of 365.25 days: an age compared with a longer interval is left as written.
const LONGEST_AGE_US: u128 = 200 * 36_525 * 86_400_000_000 / 100;

/// The parts, ANDed, that the clause is: comparisons of `sno_time(id)` with a time, and
/// conditions without any column (evaluated once); None if it is none of the table's forms.
/// `is_operand` says whether an expression can be the operand of a bound (used twice).
///
/// # Safety
/// `clause` is an operator clause of the query being planned.
pub(super) unsafe fn as_time_comparisons(
    clause: *mut pg_sys::OpExpr,
    is_operand: impl Fn(*mut Node) -> bool,
) -> Option<Vec<*mut Node>> {
    unsafe {
        let mut operands = cells((*clause).args).map(|cell| *cell);
        let (Some(left), Some(right)) = (operands.next(), operands.next()) else {
            return None;
        };
        let opno = (*clause).opno;
        if let Some(comparison) = Comparison::of_operator(opno, DATE_OPERATORS) {
            let (time, date, comparison) = match date_of(left) {
                Some(time) => (time, right, comparison),
                None => (date_of(right)?, left, comparison.commuted()),
            };
            return is_operand(date).then(|| date_comparisons(time, date, comparison));
        }
        if let Some(comparison) = Comparison::of_operator(opno, INTERVAL_OPERATORS) {
            let (age, span, comparison) = match age_of(left) {
                Some(age) => (age, right, comparison),
                None => (age_of(right)?, left, comparison.commuted()),
            };
            let (time, from) = age;
            let span = linear_interval(span)?;
            if !is_operand(from) || !is_finite_time(from) {
                return None;
            }
            // x - t < i is t > x - i: the age's comparison, turned around.
            let since = operator(
                TIMESTAMPTZ_MINUS_INTERVAL,
                pg_sys::TIMESTAMPTZOID,
                from,
                span,
            );
            return Some(vec![compare(time, comparison.commuted(), since)]);
        }
        if opno.to_u32() == Comparison::Equal.timestamptz_operator().to_u32() {
            let (time, day) = match day_of(left) {
                Some(time) => (time, right),
                None => (day_of(right)?, left),
            };
            return is_operand(day).then(|| day_comparisons(time, day));
        }
        let (range, time) = match opno.to_u32() {
            RANGE_CONTAINS_ELEMENT => (left, right),
            ELEMENT_CONTAINED_BY_RANGE => (right, left),
            _ => return None,
        };
        sno_time_call(time)?;
        range_comparisons(time, range)
    }
}

/// `t` of `t::date`, `t` a call of sno_time.
unsafe fn date_of(node: *mut Node) -> Option<*mut Node> {
    unsafe { argument_of(node, DATE_OF_TIMESTAMPTZ, 1) }
}

/// `t` of `date_trunc('day', t)`, `t` a call of sno_time.
unsafe fn day_of(node: *mut Node) -> Option<*mut Node> {
    unsafe {
        let time = argument_of(node, DATE_TRUNC, 2)?;
        let field = *cells((*node.cast::<pg_sys::FuncExpr>()).args).next()?;
        if !is_a(field, NodeTag::T_Const) || (*field.cast::<pg_sys::Const>()).constisnull {
            return None;
        }
        let text =
            pg_sys::text_to_cstring((*field.cast::<pg_sys::Const>()).constvalue.cast_mut_ptr());
        CStr::from_ptr(text)
            .to_bytes()
            .eq_ignore_ascii_case(b"day")
            .then_some(time)
    }
}

/// `(t, x)` of `x - t`, `t` a call of sno_time.
unsafe fn age_of(node: *mut Node) -> Option<(*mut Node, *mut Node)> {
    unsafe {
        if !is_a(node, NodeTag::T_OpExpr)
            || (*node.cast::<pg_sys::OpExpr>()).opno.to_u32() != TIMESTAMPTZ_MINUS_TIMESTAMPTZ
        {
            return None;
        }
        let mut operands = cells((*node.cast::<pg_sys::OpExpr>()).args).map(|cell| *cell);
        let (Some(from), Some(time)) = (operands.next(), operands.next()) else {
            return None;
        };
        sno_time_call(time)?;
        Some((time, from))
    }
}

/// The last argument of a call of `function` with `arity` arguments, if it calls sno_time.
unsafe fn argument_of(node: *mut Node, function: u32, arity: usize) -> Option<*mut Node> {
    unsafe {
        if !is_a(node, NodeTag::T_FuncExpr) {
            return None;
        }
        let call = node.cast::<pg_sys::FuncExpr>();
        let arguments: Vec<*mut Node> = cells((*call).args).map(|cell| *cell).collect();
        if (*call).funcid.to_u32() != function || arguments.len() != arity {
            return None;
        }
        let time = arguments[arity - 1];
        sno_time_call(time).map(|_| time)
    }
}

/// `t::date OP d` as comparisons of `t`.
unsafe fn date_comparisons(
    time: *mut Node,
    date: *mut Node,
    comparison: Comparison,
) -> Vec<*mut Node> {
    unsafe {
        let start = || timestamptz_of_date(copy(date));
        let next_start = || {
            let one = pg_sys::makeConst(
                pg_sys::INT4OID,
                -1,
                Oid::INVALID,
                4,
                pg_sys::Datum::from(1),
                false,
                true,
            );
            timestamptz_of_date(operator(
                DATE_PLUS_INTEGER,
                pg_sys::DATEOID,
                copy(date),
                one.cast(),
            ))
        };
        match comparison {
            Comparison::Equal => vec![
                compare(time, Comparison::GreaterEqual, start()),
                compare(time, Comparison::Less, next_start()),
            ],
            Comparison::Less => vec![compare(time, Comparison::Less, start())],
            Comparison::LessEqual => vec![compare(time, Comparison::Less, next_start())],
            Comparison::Greater => vec![compare(time, Comparison::GreaterEqual, next_start())],
            Comparison::GreaterEqual => vec![compare(time, Comparison::GreaterEqual, start())],
        }
    }
}

/// `date_trunc('day', t) = x` as a condition on `x` and comparisons of `t`.
unsafe fn day_comparisons(time: *mut Node, day: *mut Node) -> Vec<*mut Node> {
    unsafe {
        let field = pg_sys::makeConst(
            pg_sys::TEXTOID,
            -1,
            pg_sys::DEFAULT_COLLATION_OID,
            -1,
            pg_sys::Datum::from(pg_sys::cstring_to_text(c"day".as_ptr())),
            false,
            false,
        );
        let truncated = pg_sys::makeFuncExpr(
            Oid::from(DATE_TRUNC),
            pg_sys::TIMESTAMPTZOID,
            list([field.cast(), copy(day)]),
            Oid::INVALID,
            pg_sys::DEFAULT_COLLATION_OID,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
        );
        let is_a_day_start = pg_sys::make_opclause(
            Comparison::Equal.timestamptz_operator(),
            pg_sys::BOOLOID,
            false,
            truncated.cast(),
            copy(day).cast(),
            Oid::INVALID,
            Oid::INVALID,
        );
        let one_day = interval_constant(0, 1, 0);
        let next_day = operator(
            TIMESTAMPTZ_PLUS_INTERVAL,
            pg_sys::TIMESTAMPTZOID,
            copy(day),
            one_day,
        );
        vec![
            is_a_day_start.cast(),
            compare(time, Comparison::GreaterEqual, copy(day)),
            compare(time, Comparison::Less, next_day),
        ]
    }
}

/// `r @> t` as comparisons of `t` with the bounds of a constant range; None for a range that
/// is not a constant, or has no bound (left as written); `false` for an empty one.
unsafe fn range_comparisons(time: *mut Node, range: *mut Node) -> Option<Vec<*mut Node>> {
    unsafe {
        let constant = constant_of(range, pg_sys::TSTZRANGEOID)?;
        let typcache =
            pg_sys::lookup_type_cache(pg_sys::TSTZRANGEOID, pg_sys::TYPECACHE_RANGE_INFO as i32);
        let value = pg_sys::pg_detoast_datum((*constant).constvalue.cast_mut_ptr());
        let (mut lower, mut upper, mut empty) = (
            pg_sys::RangeBound::default(),
            pg_sys::RangeBound::default(),
            false,
        );
        pg_sys::range_deserialize(typcache, value.cast(), &mut lower, &mut upper, &mut empty);
        if empty {
            return Some(vec![pg_sys::makeBoolConst(false, false)]);
        }
        let mut parts = Vec::new();
        if !lower.infinite {
            let kind = if lower.inclusive {
                Comparison::GreaterEqual
            } else {
                Comparison::Greater
            };
            parts.push(compare(time, kind, timestamptz_constant(lower.val)));
        }
        if !upper.infinite {
            let kind = if upper.inclusive {
                Comparison::LessEqual
            } else {
                Comparison::Less
            };
            parts.push(compare(time, kind, timestamptz_constant(upper.val)));
        }
        (!parts.is_empty()).then_some(parts)
    }
}

/// A constant interval as one span of microseconds, as interval comparisons count it (a month
/// 30 days, a day 24 hours), so that `x - i` is exactly what `x - t < i` compares with.
unsafe fn linear_interval(node: *mut Node) -> Option<*mut Node> {
    unsafe {
        let constant = constant_of(node, pg_sys::INTERVALOID)?;
        let interval = *(*constant).constvalue.cast_mut_ptr::<pg_sys::Interval>();
        let days = i128::from(interval.day) + i128::from(interval.month) * 30;
        let span = i128::from(interval.time) + days * MICROSECONDS_PER_DAY;
        // An infinite interval (17 and later), or a span so long that `x - i` could leave
        // timestamptz's range where `x - t` stays in it, is left as written.
        if span.unsigned_abs() > LONGEST_AGE_US {
            return None;
        }
        let span = span as i64;
        Some(interval_constant(span, 0, 0))
    }
}

/// Whether the time is certainly finite: the transaction's or the statement's start, or a
/// finite constant. `x - t` raises for an infinite `x` (before 17) where `t > x - i` would not.
unsafe fn is_finite_time(node: *mut Node) -> bool {
    unsafe {
        if let Some(constant) = constant_of(node, pg_sys::TIMESTAMPTZOID) {
            let value = (*constant).constvalue.value() as i64;
            return value != i64::MIN && value != i64::MAX;
        }
        if is_a(node, NodeTag::T_SQLValueFunction) {
            return (*node.cast::<pg_sys::SQLValueFunction>()).type_ == pg_sys::TIMESTAMPTZOID;
        }
        is_a(node, NodeTag::T_FuncExpr)
            && TRANSACTION_TIMES.contains(&(*node.cast::<pg_sys::FuncExpr>()).funcid.to_u32())
    }
}

unsafe fn compare(time: *mut Node, comparison: Comparison, other: *mut Node) -> *mut Node {
    unsafe {
        pg_sys::make_opclause(
            comparison.timestamptz_operator(),
            pg_sys::BOOLOID,
            false,
            copy(time).cast(),
            other.cast(),
            Oid::INVALID,
            Oid::INVALID,
        )
        .cast()
    }
}

unsafe fn operator(opno: u32, result: Oid, left: *mut Node, right: *mut Node) -> *mut Node {
    unsafe {
        pg_sys::make_opclause(
            Oid::from(opno),
            result,
            false,
            left.cast(),
            right.cast(),
            Oid::INVALID,
            Oid::INVALID,
        )
        .cast()
    }
}

unsafe fn timestamptz_of_date(date: *mut Node) -> *mut Node {
    unsafe {
        pg_sys::makeFuncExpr(
            Oid::from(TIMESTAMPTZ_OF_DATE),
            pg_sys::TIMESTAMPTZOID,
            list([date]),
            Oid::INVALID,
            Oid::INVALID,
            pg_sys::CoercionForm::COERCE_EXPLICIT_CAST,
        )
        .cast()
    }
}

unsafe fn interval_constant(time: i64, day: i32, month: i32) -> *mut Node {
    unsafe {
        let interval = pg_sys::palloc(size_of::<pg_sys::Interval>()).cast::<pg_sys::Interval>();
        interval.write(pg_sys::Interval { time, day, month });
        pg_sys::makeConst(
            pg_sys::INTERVALOID,
            -1,
            Oid::INVALID,
            size_of::<pg_sys::Interval>() as i32,
            pg_sys::Datum::from(interval),
            false,
            false,
        )
        .cast()
    }
}

unsafe fn copy(node: *mut Node) -> *mut Node {
    unsafe { pg_sys::copyObjectImpl(node.cast()).cast() }
}

unsafe fn list<const N: usize>(nodes: [*mut Node; N]) -> *mut pg_sys::List {
    unsafe { super::nodes::list_of(nodes) }
}
