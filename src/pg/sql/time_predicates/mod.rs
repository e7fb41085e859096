//! Time predicates answered by the index on `id`: `sno_time(id) >= now() - interval '1 hour'`
//! (and `id::timestamptz`, whose cast is the same function) planned as a range of `id`, and
//! `ORDER BY sno_time(id)` read in the order of `id` (order.rs).
//!
//! # How, and why this way
//!
//! `sno_time` is monotonic: a later ID never has an earlier time. So every comparison of
//! `sno_time(id)` with a time `t` is *exactly* a comparison of `id` with one boundary ID
//! (bounds.rs):
//!
//! | predicate | same rows as | bound is NULL (no ID qualifies) when |
//! |---|---|---|
//! | `sno_time(id) >= t` | `id >= sno_min_at_or_after(t)` | `t` after the last unit |
//! | `sno_time(id) >  t` | `id >= sno_min_after(t)` | `t` at or after the last unit |
//! | `sno_time(id) <= t` | `id <= sno_max_at_or_before(t)` | `t` before 2010 |
//! | `sno_time(id) <  t` | `id <= sno_max_before(t)` | `t` at or before 2010 |
//! | `sno_time(id) =  t` | both of the `>=` and `<=` rows | (an empty range off a unit start) |
//!
//! When PostgreSQL builds its description of a table in a query (`get_relation_info_hook`;
//! `build_simple_rel_hook` from 19 on),
//! after it has pulled views, subqueries and `EXISTS` up into the query and folded constants,
//! and before it hands the conditions to the tables, [`on_relation`] rewrites each such
//! comparison on that table that is a conjunct or disjunct of a `WHERE` or `JOIN ... ON`
//! condition into its `id` form (conditions.rs says which are left as written, so that no plan
//! gets worse). From then on it is an ordinary clause on `id` with sno's own btree operators: a
//! btree or BRIN range scan, the selectivity of `id`'s histogram, plan-time partition pruning
//! for constants (whose bounds are computed then) and run-time pruning for `now()` or
//! parameters, in every plan shape PostgreSQL knows, and no recheck, because the range holds
//! exactly the rows of the original predicate. The bounds saturate (`-infinity`, 1970) or are
//! NULL (nothing qualifies), never an error; a NULL is the same as false where the rewrite is
//! made (a condition keeps a row only when it is true, and AND and OR are true for the same
//! rows either way), which is why nothing under NOT, CASE or a select list is rewritten.
//!
//! Rewriting there rather than in front of the planner (`planner_hook`) matters: a view's
//! `sno_time(id) AS created_at` or a CTE's is a plain column until PostgreSQL pulls it up, and
//! an `EXISTS` is a join only after; and what the hook leaves is what the planner would have had.
//!
//! Two other designs reach none of these forms on their own:
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
//! pair of bounds), and there is nothing left for a filter to remove. For the same reason a
//! table with an index on an expression of `sno_time`, a partial index whose predicate calls it,
//! or a partition key that is an expression, is left as written: its index or its pruning
//! answers the written predicate, and would not answer the rewritten one.

mod bounds;
mod comparison;
mod conditions;
mod expressions;
mod nodes;
mod order;
mod sno_objects;

use nodes::cells;
use pgrx::pg_sys::{self, Node};
use pgrx::{pg_guard, GucContext, GucFlags, GucRegistry, GucSetting};

static REWRITE: GucSetting<bool> = GucSetting::<bool>::new(true);

// PostgreSQL 19 replaced get_relation_info_hook by build_simple_rel_hook, called at the same
// point of build_simple_rel (after get_relation_info), for every kind of range-table entry.
#[cfg(not(pg19_or_later))]
static mut PREVIOUS_HOOK: pg_sys::get_relation_info_hook_type = None;
#[cfg(pg19_or_later)]
static mut PREVIOUS_HOOK: pg_sys::build_simple_rel_hook_type = None;

/// Defines `sno.rewrite_time_predicates` and hooks [`on_relation`] into the planner. Runs
/// whenever the library is loaded, preloaded or not: both are per-backend.
pub(crate) fn install() {
    GucRegistry::define_bool_guc(
        c"sno.rewrite_time_predicates",
        c"Plans comparisons of sno_time(id) with a time as ranges of id.",
        c"Such a range has exactly the rows of the comparison and is answered by an index on \
          id, and prunes partitions by range of id; ORDER BY sno_time(id) is read in the order \
          of id. Off: the comparison is evaluated row by row, and the order sorted.",
        &REWRITE,
        GucContext::Userset,
        GucFlags::default(),
    );
    // SAFETY: _PG_init runs once per process, single-threaded; hooks are chained as usual.
    unsafe {
        #[cfg(not(pg19_or_later))]
        {
            PREVIOUS_HOOK = pg_sys::get_relation_info_hook;
            pg_sys::get_relation_info_hook = Some(on_relation);
        }
        #[cfg(pg19_or_later)]
        {
            PREVIOUS_HOOK = pg_sys::build_simple_rel_hook;
            pg_sys::build_simple_rel_hook = Some(on_relation);
        }
    }
}

/// The hook, called for each table of each query level as the planner builds its description
/// (`rel`, with its indexes and partition key), before any condition is handed to a table.
/// Not guarded itself: an error of the next hook passes through this frame to PostgreSQL's
/// handler as it would through C; [`rewrite`] is guarded.
#[cfg(not(pg19_or_later))]
unsafe extern "C-unwind" fn on_relation(
    root: *mut pg_sys::PlannerInfo,
    relation: pg_sys::Oid,
    inherited_parent: bool,
    rel: *mut pg_sys::RelOptInfo,
) {
    if REWRITE.get() {
        // SAFETY: the planner's own state, which it lets hooks change here.
        unsafe { rewrite(root, rel) };
    }
    // SAFETY: the next hook, with the arguments we were given.
    unsafe {
        if let Some(previous) = PREVIOUS_HOOK {
            previous(root, relation, inherited_parent, rel);
        }
    }
}

/// As above, for PostgreSQL 19, whose hook is called for every range-table entry.
#[cfg(pg19_or_later)]
unsafe extern "C-unwind" fn on_relation(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    entry: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: the planner's own state, which it lets hooks change here.
    unsafe {
        if REWRITE.get() && (*entry).rtekind == pg_sys::RTEKind::RTE_RELATION {
            rewrite(root, rel);
        }
        if let Some(previous) = PREVIOUS_HOOK {
            previous(root, rel, entry);
        }
    }
}

/// The time predicates on this table, and the query level's `ORDER BY sno_time(id)`.
#[pg_guard]
unsafe extern "C-unwind" fn rewrite(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) {
    // SAFETY: as for [`on_relation`].
    unsafe {
        // Only the query's own tables, built before the conditions are distributed: an
        // inheritance child or partition is built later, and gets its parent's conditions.
        if (*rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL || (*root).parse.is_null() {
            return;
        }
        let relid = (*rel).relid;
        let entry = *(*root).simple_rte_array.add(relid as usize);
        // A foreign table's conditions go to its server, which may not have sno's bound
        // functions (or another version of sno).
        if (*entry).relkind as u8 == pg_sys::RELKIND_FOREIGN_TABLE {
            return;
        }
        if answers_written_predicate(rel) {
            return;
        }
        conditions::rewrite(root, relid);
        order::order_by_id(root, relid);
    }
}

/// Whether the table has an index on an expression of sno_time, a partial index whose
/// predicate calls it, or a partition key that is an expression: these answer the written
/// predicate and would not answer its rewritten form.
///
/// # Safety
/// `rel` is the planner's description of a table, with its indexes and partition key.
unsafe fn answers_written_predicate(rel: *mut pg_sys::RelOptInfo) -> bool {
    unsafe {
        let scheme = (*rel).part_scheme;
        if !scheme.is_null() {
            for key in 0..(*scheme).partnatts as usize {
                let expressions = *(*rel).partexprs.add(key);
                if cells(expressions).any(|e| !pgrx::is_a(*e, pg_sys::NodeTag::T_Var)) {
                    return true;
                }
            }
        }
        cells((*rel).indexlist).any(|index| {
            let index = (*index).cast::<pg_sys::IndexOptInfo>();
            sno_objects::mentions_sno_time((*index).indexprs.cast::<Node>())
                || sno_objects::mentions_sno_time((*index).indpred.cast::<Node>())
        })
    }
}
