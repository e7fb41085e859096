//! Time predicates answered by the index on `id`: `sno_time(id) >= now() - interval '1 hour'`
//! (and `id::timestamptz`, whose cast is the same function) planned as a range of `id`.
//!
//! # How, and why this way
//!
//! `sno_time` is monotonic: a later ID never has an earlier time. So every comparison of
//! `sno_time(id)` with a time `t` is *exactly* a comparison of `id` with one boundary ID:
//!
//! | predicate | same rows as | bound is NULL (no ID qualifies) when |
//! |---|---|---|
//! | `sno_time(id) >= t` | `id >= sno_min_at_or_after(t)` | `t` after the last unit |
//! | `sno_time(id) >  t` | `id >= sno_min_after(t)` | `t` at or after the last unit |
//! | `sno_time(id) <= t` | `id <= sno_max_at_or_before(t)` | `t` before 2010 |
//! | `sno_time(id) <  t` | `id <= sno_max_before(t)` | `t` at or before 2010 |
//! | `sno_time(id) =  t` | both of the `>=` and `<=` rows | (an empty range off a unit start) |
//!
//! Before PostgreSQL plans a query, [`plan`] rewrites each such comparison that is a conjunct or
//! disjunct of a `WHERE` or `JOIN ... ON` condition into its `id` form. From then on it is an
//! ordinary clause on `id` with sno's own btree operators: a btree or BRIN range scan, the
//! selectivity of `id`'s histogram, plan-time partition pruning for constants and run-time
//! pruning for `now()` or parameters, in every plan shape PostgreSQL knows, and no recheck,
//! because the range holds exactly the rows of the original predicate. The bounds saturate
//! (`-infinity`, 1970) or are NULL (nothing qualifies), never an error, just as the original
//! predicate never raises one; a NULL is the same as false where the rewrite is made (a
//! condition keeps a row only when it is true, and AND and OR are true for the same rows either
//! way), which is why nothing under NOT, CASE or a select list is rewritten.
//!
//! The two designs the issue proposed were weighed and reach none of these forms on their own:
//!
//! * **A planner support function on `sno_time`** (`SupportRequestIndexCondition`). PostgreSQL
//!   asks for index conditions only of the function that *implements the clause's operator*,
//!   and only when one operand already is the indexed column (`match_opclause_to_indexcol` in
//!   indxpath.c). In `sno_time(id) >= t` the operator is timestamptz's `>=` (`timestamptz_ge`,
//!   a built-in we cannot and should not give a support function) and its operand is
//!   `sno_time(id)`, not `id`, so no support function of ours is ever consulted. Likewise
//!   `SupportRequestSelectivity` is asked only for boolean function clauses, not for operator
//!   clauses over a function. A `SupportRequestSimplify` on `sno_time` sees only the call, not
//!   the comparison around it.
//! * **Cross-type `sno`/`timestamptz` operators in the btree family.** They would index
//!   `id >= t`, a new spelling, but not `sno_time(id) >= t`, which the parser resolves to
//!   timestamptz's operator before any family is consulted. And they cost correctness
//!   guarantees: a btree family's `=` must be transitive across its types, and "an ID equals the
//!   start of its unit" makes two different IDs of one unit each equal to the same time, so
//!   equivalence classes would derive `a.id = b.id` from `a.id = t AND b.id = t` (wrong rows).
//!   Leaving `=` out makes the family incomplete (amvalidate reports it), and partition pruning
//!   and merge joins assume a complete, consistent family.
//!
//! The rewrite needs sno loaded when the query is planned: always so with sno in
//! `shared_preload_libraries` (which generating IDs requires); otherwise from a session's first
//! use of sno, so docs/time.md says to preload. It can be turned off with
//! `sno.rewrite_time_predicates = off` (the plain predicate is then evaluated row by row, as
//! PostgreSQL would without sno's help: the benchmarks and tests compare the two).
//!
//! The comparison is *replaced*, not kept beside the range as a lossy filter: the planner would
//! multiply the selectivities of the two as if independent, so every window would be estimated
//! at the range's rows times PostgreSQL's default for the comparison (a third, or 1/200 for a
//! pair of bounds), and there is nothing left for a filter to remove. The price: an expression index on `sno_time(id)`, or a partial index
//! whose predicate is written with `sno_time`, no longer matches these predicates (docs/time.md
//! says to drop the one; the index on `id` serves them).
//!
//! Only sno's own `sno_time` and bound functions are used: each is recognised by the C entry
//! point it runs (`fmgr_info`; sno_time by its name first, so that planning never loads another
//! language's handler), so a function of the same name in another schema, or a database where
//! the extension is still 0.1.0 (no bound functions), is left alone.

use crate::id::Sno;
use crate::pg::support::timestamps::POSTGRES_EPOCH_UNIX_US;
use crate::time::{Units, EPOCH_UNIX_MS, UNIT_MS};
use core::ffi::{c_char, c_int, c_void, CStr};
use pgrx::pg_sys::{self, Node, NodeTag, Oid};
use pgrx::prelude::*;
use pgrx::{is_a, GucContext, GucFlags, GucRegistry, GucSetting};

// ---- The bounds: exact, saturating, NULL where no ID qualifies -----------------------------

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

// sno_time's C entry point, to recognise it in a query by what it runs (the bound functions'
// are the `_wrapper`s pgrx makes above).
unsafe extern "C-unwind" {
    fn sno_time_wrapper(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum;
}

type CEntryPoint = unsafe extern "C-unwind" fn(pg_sys::FunctionCallInfo) -> pg_sys::Datum;

// ---- The setting and the hook ------------------------------------------------------------

static REWRITE: GucSetting<bool> = GucSetting::<bool>::new(true);

static mut PREVIOUS_PLANNER_HOOK: pg_sys::planner_hook_type = None;

/// Defines `sno.rewrite_time_predicates` and puts [`plan`] in front of the planner. Runs
/// whenever the library is loaded, preloaded or not: both are per-backend.
pub(crate) fn install() {
    GucRegistry::define_bool_guc(
        c"sno.rewrite_time_predicates",
        c"Plans comparisons of sno_time(id) with a time as ranges of id.",
        c"Such a range has exactly the rows of the comparison and is answered by an index on \
          id, and prunes partitions by range of id. Off: the comparison is evaluated row by row.",
        &REWRITE,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: _PG_init runs once per process, single-threaded; hooks are chained as usual.
    unsafe {
        PREVIOUS_PLANNER_HOOK = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(plan);
    }
}

/// The hook. Not guarded, and holding nothing that needs dropping: an error the planner raises
/// (a constant that does not fold, say) passes through this frame to PostgreSQL's handler as
/// it would through C. Through a guard it would come back as a Rust panic and be raised again,
/// with a backtrace in place of its own DETAIL.
unsafe extern "C-unwind" fn plan(
    parse: *mut pg_sys::Query,
    query_string: *const c_char,
    cursor_options: c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    if REWRITE.get() {
        // SAFETY: the planner owns `parse` and may change it (plan caches hand it a copy);
        // `visit` is guarded, so its own errors reach PostgreSQL as errors.
        unsafe { visit(parse.cast(), std::ptr::null_mut()) };
    }
    // SAFETY: the next hook, or the planner itself, with the arguments we were given.
    unsafe {
        match PREVIOUS_PLANNER_HOOK {
            Some(previous) => previous(parse, query_string, cursor_options, bound_params),
            None => standard_planner(parse, query_string, cursor_options, bound_params),
        }
    }
}

unsafe extern "C-unwind" {
    /// PostgreSQL's planner, declared here without pgrx's guard (see [`plan`]).
    fn standard_planner(
        parse: *mut pg_sys::Query,
        query_string: *const c_char,
        cursor_options: c_int,
        bound_params: pg_sys::ParamListInfo,
    ) -> *mut pg_sys::PlannedStmt;
}

// ---- Walking the query -------------------------------------------------------------------

/// Every query level (subqueries in FROM, CTEs, sublinks anywhere): rewrite its join tree's
/// conditions, then go on into what it contains.
#[pg_guard]
unsafe extern "C-unwind" fn visit(node: *mut Node, context: *mut c_void) -> bool {
    if node.is_null() {
        return false;
    }
    // SAFETY: nodes of the query being planned.
    unsafe {
        if is_a(node, NodeTag::T_Query) {
            let query = node.cast::<pg_sys::Query>();
            rewrite_join_tree((*query).jointree.cast());
            return pg_sys::query_tree_walker(query, Some(visit), context, 0);
        }
        pg_sys::expression_tree_walker(node, Some(visit), context)
    }
}

/// The cells of a PostgreSQL list, as places that can be overwritten.
///
/// # Safety
/// `list` is NIL or a valid pointer list that outlives the returned places.
unsafe fn cells<'a>(list: *mut pg_sys::List) -> impl Iterator<Item = &'a mut *mut Node> {
    let length = if list.is_null() {
        0
    } else {
        unsafe { (*list).length as usize }
    };
    // SAFETY: `elements` holds `length` cells of a pointer list.
    (0..length).map(move |i| unsafe {
        &mut *(&raw mut (*(*list).elements.add(i)).ptr_value).cast::<*mut Node>()
    })
}

/// How a comparison of `sno_time(id)` with a time becomes one of `id` with a bound.
#[derive(Clone, Copy)]
enum Comparison {
    Less,
    LessEqual,
    Equal,
    GreaterEqual,
    Greater,
}

impl Comparison {
    /// timestamptz's comparison operators: pinned OIDs of pg_operator.dat, the same on every
    /// major and kept by pg_upgrade.
    fn of_timestamptz_operator(opno: Oid) -> Option<Comparison> {
        match opno.to_u32() {
            1320 => Some(Comparison::Equal),
            1322 => Some(Comparison::Less),
            1323 => Some(Comparison::LessEqual),
            1324 => Some(Comparison::Greater),
            1325 => Some(Comparison::GreaterEqual),
            _ => None,
        }
    }

    /// `t < sno_time(id)` is `sno_time(id) > t`.
    fn commuted(self) -> Comparison {
        match self {
            Comparison::Less => Comparison::Greater,
            Comparison::LessEqual => Comparison::GreaterEqual,
            Comparison::Equal => Comparison::Equal,
            Comparison::GreaterEqual => Comparison::LessEqual,
            Comparison::Greater => Comparison::Less,
        }
    }
}

/// sno's objects in the database of the query being planned, found at its first time
/// predicate: the bound functions in sno_time's schema and the btree operators of `sno`.
#[derive(Clone, Copy)]
struct Targets {
    sno_type: Oid,
    greater_equal: Oid,
    less_equal: Oid,
    min_at_or_after: Oid,
    min_after: Oid,
    max_at_or_before: Oid,
    max_before: Oid,
}

/// The conditions of a FROM list and its joins.
///
/// # Safety
/// `node` is NULL or a join-tree node of the query being planned.
unsafe fn rewrite_join_tree(node: *mut Node) {
    unsafe {
        if node.is_null() {
        } else if is_a(node, NodeTag::T_FromExpr) {
            let from = node.cast::<pg_sys::FromExpr>();
            rewrite_condition(&mut (*from).quals);
            for item in cells((*from).fromlist) {
                rewrite_join_tree(*item);
            }
        } else if is_a(node, NodeTag::T_JoinExpr) {
            let join = node.cast::<pg_sys::JoinExpr>();
            rewrite_condition(&mut (*join).quals);
            rewrite_join_tree((*join).larg);
            rewrite_join_tree((*join).rarg);
        }
    }
}

/// A condition, and the arms of its ANDs and ORs: where NULL and false keep the same rows.
///
/// # Safety
/// `place` holds NULL or an expression of the query being planned.
unsafe fn rewrite_condition(place: &mut *mut Node) {
    unsafe {
        let node = *place;
        if node.is_null() {
        } else if is_a(node, NodeTag::T_BoolExpr) {
            let bool_expr = node.cast::<pg_sys::BoolExpr>();
            if (*bool_expr).boolop != pg_sys::BoolExprType::NOT_EXPR {
                for arm in cells((*bool_expr).args) {
                    rewrite_condition(arm);
                }
            }
        } else if is_a(node, NodeTag::T_OpExpr) {
            if let Some(range) = id_range(node.cast()) {
                *place = range;
            }
        }
    }
}

/// The `id` form of `sno_time(id) OP t` or `t OP sno_time(id)`, if the clause is one.
///
/// # Safety
/// `clause` is an operator clause of the query being planned.
unsafe fn id_range(clause: *mut pg_sys::OpExpr) -> Option<*mut Node> {
    unsafe {
        let comparison = Comparison::of_timestamptz_operator((*clause).opno)?;
        let operands: Vec<*mut Node> = cells((*clause).args).map(|cell| *cell).collect();
        let [left, right] = operands[..] else {
            return None;
        };
        let (sno_time, id, time, comparison) = match sno_time_call(left) {
            Some((function, id)) => (function, id, right, comparison),
            None => {
                let (function, id) = sno_time_call(right)?;
                (function, id, left, comparison.commuted())
            }
        };
        // A volatile operand could give another value per evaluation; leave it as it is.
        if pg_sys::contain_volatile_functions(id) || pg_sys::contain_volatile_functions(time) {
            return None;
        }
        let targets = targets(sno_time)?;
        let bound = |function: Oid, operator: Oid, id: *mut Node, time: *mut Node| {
            let call = pg_sys::makeFuncExpr(
                function,
                targets.sno_type,
                pg_sys::lappend(std::ptr::null_mut(), time.cast()),
                Oid::INVALID,
                Oid::INVALID,
                pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
            );
            pg_sys::make_opclause(
                operator,
                pg_sys::BOOLOID,
                false,
                id.cast(),
                call.cast(),
                Oid::INVALID,
                Oid::INVALID,
            )
            .cast::<Node>()
        };
        let (ge, le) = (targets.greater_equal, targets.less_equal);
        Some(match comparison {
            Comparison::GreaterEqual => bound(targets.min_at_or_after, ge, id, time),
            Comparison::Greater => bound(targets.min_after, ge, id, time),
            Comparison::LessEqual => bound(targets.max_at_or_before, le, id, time),
            Comparison::Less => bound(targets.max_before, le, id, time),
            Comparison::Equal => {
                let from = bound(targets.min_at_or_after, ge, id, time);
                let through = bound(
                    targets.max_at_or_before,
                    le,
                    pg_sys::copyObjectImpl(id.cast()).cast(),
                    pg_sys::copyObjectImpl(time.cast()).cast(),
                );
                let both = pg_sys::lappend(
                    pg_sys::lappend(std::ptr::null_mut(), from.cast()),
                    through.cast(),
                );
                pg_sys::makeBoolExpr(pg_sys::BoolExprType::AND_EXPR, both, -1).cast()
            }
        })
    }
}

// ---- Finding sno's objects ----------------------------------------------------------------

/// The sno_time function last seen and what it resolved to (None: not all of sno's objects
/// exist, e.g. the extension is still 0.1.0; then nothing is rewritten). Kept per backend until
/// pg_proc changes (CREATE, ALTER or DROP EXTENSION, or any other function), so planning a
/// query costs one comparison per candidate call, not catalog lookups.
static mut RESOLVED: Option<(Oid, Option<Targets>)> = None;
static mut FORGETS_ON_FUNCTION_CHANGES: bool = false;

/// Resets [`RESOLVED`]: pg_proc changed.
#[pg_guard]
unsafe extern "C-unwind" fn forget_resolved(_arg: pg_sys::Datum, _cache: c_int, _hash: u32) {
    // SAFETY: backends are single-threaded; invalidations arrive between statements' steps.
    unsafe { RESOLVED = None };
}

/// sno's objects for this sno_time (a verified one).
fn targets(sno_time: Oid) -> Option<Targets> {
    // SAFETY: backends are single-threaded; catalog lookups in a transaction, as planning is.
    unsafe {
        if let Some((function, targets)) = RESOLVED {
            if function == sno_time {
                return targets;
            }
        }
        if !FORGETS_ON_FUNCTION_CHANGES {
            pg_sys::CacheRegisterSyscacheCallback(
                pg_sys::SysCacheIdentifier::PROCOID as c_int,
                Some(forget_resolved),
                pg_sys::Datum::from(0),
            );
            FORGETS_ON_FUNCTION_CHANGES = true;
        }
        let targets = resolve(sno_time);
        RESOLVED = Some((sno_time, targets));
        targets
    }
}

/// Whether the function is the sno_time of [`RESOLVED`], checked before and valid since.
fn is_resolved_sno_time(function: Oid) -> bool {
    // SAFETY: backends are single-threaded.
    unsafe { matches!(RESOLVED, Some((known, _)) if known == function) }
}

/// `(function, argument)` when `node` is a call of sno's own sno_time (also what the cast
/// `id::timestamptz` is).
///
/// # Safety
/// `node` is an expression of the query being planned.
unsafe fn sno_time_call(node: *mut Node) -> Option<(Oid, *mut Node)> {
    unsafe {
        if !is_a(node, NodeTag::T_FuncExpr) {
            return None;
        }
        let call = node.cast::<pg_sys::FuncExpr>();
        // Cheap tests first: built-in functions and other shapes never run sno_time's code.
        if (*call).funcresulttype != pg_sys::TIMESTAMPTZOID
            || (*call).funcretset
            || (*call).funcid.to_u32() < pg_sys::FirstNormalObjectId
        {
            return None;
        }
        let arguments: Vec<*mut Node> = cells((*call).args).map(|cell| *cell).collect();
        let [argument] = arguments[..] else {
            return None;
        };
        if is_resolved_sno_time((*call).funcid) {
            return Some(((*call).funcid, argument));
        }
        // By name before by code: fmgr_info of another language's function would load its
        // handler, which planning has no business doing.
        let name = pg_sys::get_func_name((*call).funcid);
        if name.is_null() || CStr::from_ptr(name) != c"sno_time" {
            return None;
        }
        runs((*call).funcid, sno_time_wrapper).then_some(((*call).funcid, argument))
    }
}

/// Whether the function with this OID is a C function whose code is `entry_point`.
///
/// # Safety
/// Called in a transaction (it reads the catalog and may load the function's library).
unsafe fn runs(function: Oid, entry_point: CEntryPoint) -> bool {
    if function == Oid::INVALID {
        return false;
    }
    let mut info = pg_sys::FmgrInfo::default();
    // SAFETY: fills `info` for an existing function.
    unsafe { pg_sys::fmgr_info(function, &mut info) };
    info.fn_addr.map(|address| address as usize) == Some(entry_point as usize)
}

/// The bound functions next to this sno_time, and sno's btree `>=` and `<=`; None unless all
/// are sno's own.
///
/// # Safety
/// Called in a transaction.
unsafe fn resolve(sno_time: Oid) -> Option<Targets> {
    unsafe {
        let schema = pg_sys::get_namespace_name(pg_sys::get_func_namespace(sno_time));
        if schema.is_null() {
            return None;
        }
        let bound = |name: &CStr, entry_point: CEntryPoint| {
            let qualified = pg_sys::lappend(
                pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeString(schema).cast()),
                pg_sys::makeString(pg_sys::pstrdup(name.as_ptr())).cast(),
            );
            let function = pg_sys::LookupFuncName(qualified, 1, &pg_sys::TIMESTAMPTZOID, true);
            runs(function, entry_point).then_some(function)
        };
        let min_at_or_after = bound(c"sno_min_at_or_after", sno_min_at_or_after_wrapper)?;
        let min_after = bound(c"sno_min_after", sno_min_after_wrapper)?;
        let max_at_or_before = bound(c"sno_max_at_or_before", sno_max_at_or_before_wrapper)?;
        let max_before = bound(c"sno_max_before", sno_max_before_wrapper)?;
        let sno_type = pg_sys::get_func_rettype(min_at_or_after);
        let opclass = pg_sys::GetDefaultOpClass(sno_type, pg_sys::BTREE_AM_OID);
        if opclass == Oid::INVALID {
            return None;
        }
        let family = pg_sys::get_opclass_family(opclass);
        let operator = |strategy: u32| {
            let operator = pg_sys::get_opfamily_member(family, sno_type, sno_type, strategy as i16);
            (operator != Oid::INVALID).then_some(operator)
        };
        Some(Targets {
            sno_type,
            greater_equal: operator(pg_sys::BTGreaterEqualStrategyNumber)?,
            less_equal: operator(pg_sys::BTLessEqualStrategyNumber)?,
            min_at_or_after,
            min_after,
            max_at_or_before,
            max_before,
        })
    }
}
