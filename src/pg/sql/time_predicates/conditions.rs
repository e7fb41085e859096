//! The conditions of one query level, for one of its tables: each comparison of `sno_time(id)`
//! with a time, and each `sno_time(id) IN (...)`, that is a conjunct or disjunct of `WHERE` or
//! `JOIN ... ON` (or of a row-level security policy) becomes the same condition on `id`; so
//! does each condition on an expression of the time that expressions.rs turns into such
//! comparisons (`sno_time(id)::date = d`, `now() - sno_time(id) < interval '1 hour'`, ...).
//!
//! Left as written, so that the plan is never worse than without the rewrite:
//! * every condition of a `FULL JOIN` (PostgreSQL joins those only by hash or merge, which need
//!   the `=` it was written with; a one-sided condition there is a join filter either way);
//! * `=` with an operand that reads another table's row (a join's `sno_time(a.id) = b.at`,
//!   also the semi and anti joins that `EXISTS` and `NOT EXISTS` become): the written `=` can be
//!   hashed and merged, a range cannot;
//! * `=` with an operand that runs a subplan per row (it would run twice);
//! * an operand that reads the row's own table (`sno_time(id) > created_at`: no index helps).

use super::bounds::Bound;
use super::comparison::Comparison;
use super::expressions::as_time_comparisons;
use super::nodes::{cells, constant_of, list_of, timestamptz_constant};
use super::sno_objects::{may_execute, mentions_sno_time, sno_time_call, targets, Targets};
use crate::id::Sno;
use core::cell::OnceCell;
use core::ffi::c_void;
use pgrx::datum::{FromDatum, IntoDatum, TimestampWithTimeZone};
use pgrx::pg_sys::{self, Node, NodeTag, Oid};
use pgrx::{is_a, pg_guard};

/// An IN list longer than this is left as written: each element becomes a range of its own,
/// and a bitmap OR of that many index scans stops paying for itself.
const LONGEST_IN_LIST: usize = 64;

/// The table whose comparisons are rewritten, with what decides how.
pub(super) struct Scope {
    /// Its index in the query level's range table.
    relid: u32,
    /// Whether the table is partitioned (or has inheritance children) with a foreign table
    /// among its partitions, asked only for a bound that would be a call.
    foreign_partition: OnceCell<bool>,
    relation: Oid,
    inherited: bool,
}

impl Scope {
    unsafe fn of(root: *mut pg_sys::PlannerInfo, relid: u32) -> Scope {
        // SAFETY: the range-table entry of a table of this query level.
        let entry = unsafe { *(*root).simple_rte_array.add(relid as usize) };
        Scope {
            relid,
            foreign_partition: OnceCell::new(),
            relation: unsafe { (*entry).relid },
            inherited: unsafe { (*entry).inh },
        }
    }

    /// Whether a condition with a call of a bound function may go to a foreign table's server
    /// (postgres_fdw sends it where the server's `extensions` name sno), which may not have the
    /// bound functions or another version of sno: a partition or child that is a foreign table.
    fn may_reach_foreign_server(&self) -> bool {
        // SAFETY: catalog lookups while planning.
        self.inherited
            && *self
                .foreign_partition
                .get_or_init(|| unsafe { has_foreign_partition(self.relation) })
    }
}

/// Whether a partition of the partitioned table, at any depth, is a foreign table.
///
/// # Safety
/// Called in a transaction.
unsafe fn has_foreign_partition(relation: Oid) -> bool {
    unsafe {
        if pg_sys::get_rel_relkind(relation) as u8 != pg_sys::RELKIND_PARTITIONED_TABLE {
            return false;
        }
        let open = pg_sys::RelationIdGetRelation(relation);
        if open.is_null() {
            return true;
        }
        let partitions = pg_sys::RelationGetPartitionDesc(open, true);
        let oids: Vec<Oid> = (0..(*partitions).nparts as usize)
            .map(|i| *(*partitions).oids.add(i))
            .collect();
        pg_sys::RelationClose(open);
        oids.into_iter().any(|partition| {
            pg_sys::get_rel_relkind(partition) as u8 == pg_sys::RELKIND_FOREIGN_TABLE
                || has_foreign_partition(partition)
        })
    }
}

/// Rewrites the comparisons on the table `relid` of this query level (its range-table index).
///
/// # Safety
/// `root` is the planner's state of the query level, before its conditions are distributed.
pub(super) unsafe fn rewrite(root: *mut pg_sys::PlannerInfo, relid: u32) {
    unsafe {
        let scope = &Scope::of(root, relid);
        let parse = (*root).parse;
        rewrite_join_tree((*parse).jointree.cast(), scope);
        let entry = *(*root).simple_rte_array.add(scope.relid as usize);
        for policy in cells((*entry).securityQuals) {
            rewrite_condition(policy, scope);
        }
    }
}

/// The conditions of a FROM list and its joins.
///
/// # Safety
/// `node` is NULL or a join-tree node of the query being planned.
unsafe fn rewrite_join_tree(node: *mut Node, scope: &Scope) {
    unsafe {
        if node.is_null() {
        } else if is_a(node, NodeTag::T_FromExpr) {
            let from = node.cast::<pg_sys::FromExpr>();
            rewrite_condition(&mut (*from).quals, scope);
            for item in cells((*from).fromlist) {
                rewrite_join_tree(*item, scope);
            }
        } else if is_a(node, NodeTag::T_JoinExpr) {
            let join = node.cast::<pg_sys::JoinExpr>();
            if (*join).jointype != pg_sys::JoinType::JOIN_FULL {
                rewrite_condition(&mut (*join).quals, scope);
            }
            rewrite_join_tree((*join).larg, scope);
            rewrite_join_tree((*join).rarg, scope);
        }
    }
}

/// A condition: an implicit-AND list (as the planner holds them by now), an AND or OR, or a
/// comparison. Only where NULL and false keep the same rows: never under NOT.
///
/// # Safety
/// `place` holds NULL or an expression of the query being planned.
unsafe fn rewrite_condition(place: &mut *mut Node, scope: &Scope) {
    unsafe {
        let node = *place;
        if node.is_null() {
        } else if is_a(node, NodeTag::T_List) {
            *place = rewrite_conjuncts(node.cast(), scope).cast();
        } else if is_a(node, NodeTag::T_BoolExpr) {
            let bool_expr = node.cast::<pg_sys::BoolExpr>();
            match (*bool_expr).boolop {
                pg_sys::BoolExprType::AND_EXPR => {
                    (*bool_expr).args = rewrite_conjuncts((*bool_expr).args, scope);
                }
                pg_sys::BoolExprType::OR_EXPR => {
                    for arm in cells((*bool_expr).args) {
                        rewrite_condition(arm, scope);
                    }
                    // An IN list became an OR: its arms join this OR's (the planner
                    // requires ORs flat, as ANDs, and asserts it).
                    (*bool_expr).args = spliced((*bool_expr).args, pg_sys::BoolExprType::OR_EXPR);
                }
                _ => {}
            }
        } else if is_a(node, NodeTag::T_OpExpr) {
            let clause = node.cast();
            if let Some(range) =
                comparison_range(clause, scope).or_else(|| expression_ranges(clause, scope))
            {
                *place = range;
            }
        } else if is_a(node, NodeTag::T_ScalarArrayOpExpr) {
            if let Some(ranges) = in_list_ranges(node.cast(), scope) {
                *place = ranges;
            }
        }
    }
}

/// The arms of an AND, each rewritten; an arm that became an AND (an `=`) is spliced in, so
/// that ANDs stay flat, as the planner requires of its conditions.
///
/// # Safety
/// `list` is a list of expressions of the query being planned.
unsafe fn rewrite_conjuncts(list: *mut pg_sys::List, scope: &Scope) -> *mut pg_sys::List {
    unsafe {
        for arm in cells(list) {
            rewrite_condition(arm, scope);
        }
        spliced(list, pg_sys::BoolExprType::AND_EXPR)
    }
}

/// The list with each arm that is an AND (or an OR) replaced by its own arms; the list itself
/// when there is none (most conditions have nothing rewritten: they are kept, not copied).
///
/// # Safety
/// `list` is a list of expressions of the query being planned.
unsafe fn spliced(
    list: *mut pg_sys::List,
    operator: pg_sys::BoolExprType::Type,
) -> *mut pg_sys::List {
    unsafe {
        let is_operator = |node: *mut Node| {
            is_a(node, NodeTag::T_BoolExpr) && (*node.cast::<pg_sys::BoolExpr>()).boolop == operator
        };
        if !cells(list).any(|arm| is_operator(*arm)) {
            return list;
        }
        let mut arms = Vec::new();
        for arm in cells(list) {
            if is_operator(*arm) {
                arms.extend(cells((*(*arm).cast::<pg_sys::BoolExpr>()).args).map(|c| *c));
            } else {
                arms.push(*arm);
            }
        }
        list_of(arms)
    }
}

/// The `id` form of a condition on an expression of the time (expressions.rs), if each of its
/// comparisons is one that is rewritten.
///
/// # Safety
/// `clause` is an operator clause of the query being planned.
unsafe fn expression_ranges(clause: *mut pg_sys::OpExpr, scope: &Scope) -> Option<*mut Node> {
    unsafe {
        let parts = as_time_comparisons(clause, |operand| is_bound_operand(operand, scope, true))?;
        let mut conjuncts = Vec::with_capacity(parts.len());
        for part in parts {
            if mentions_sno_time(part) {
                conjuncts.push(comparison_range(part.cast(), scope)?);
            } else {
                conjuncts.push(part);
            }
        }
        Some(and_of(conjuncts))
    }
}

/// `sno_time(id)` where `id` is a column of the scope's table.
///
/// # Safety
/// `node` is an expression of the query being planned.
unsafe fn sno_time_of_column(node: *mut Node, scope: &Scope) -> Option<(Oid, *mut Node)> {
    unsafe {
        let (sno_time, id) = sno_time_call(node)?;
        if !is_a(id, NodeTag::T_Var) {
            return None;
        }
        let var = id.cast::<pg_sys::Var>();
        ((*var).varno as u32 == scope.relid && (*var).varlevelsup == 0).then_some((sno_time, id))
    }
}

/// The `id` form of `sno_time(id) OP t` or `t OP sno_time(id)`, if the clause is one that is
/// rewritten (the module's doc says which are not).
///
/// # Safety
/// `clause` is an operator clause of the query being planned.
unsafe fn comparison_range(clause: *mut pg_sys::OpExpr, scope: &Scope) -> Option<*mut Node> {
    unsafe {
        let comparison = Comparison::of_timestamptz_operator((*clause).opno)?;
        let mut operands = cells((*clause).args).map(|cell| *cell);
        let (Some(left), Some(right)) = (operands.next(), operands.next()) else {
            return None;
        };
        let (sno_time, id, time, comparison) = match sno_time_of_column(left, scope) {
            Some((function, id)) => (function, id, right, comparison),
            None => {
                let (function, id) = sno_time_of_column(right, scope)?;
                (function, id, left, comparison.commuted())
            }
        };
        if !is_bound_operand(time, scope, comparison == Comparison::Equal) {
            return None;
        }
        let targets = targets(sno_time)?;
        let ranges = comparison
            .bounds()
            .iter()
            .map(|&bound| id_against_bound(scope, &targets, id, bound, time))
            .collect::<Option<Vec<_>>>()?;
        Some(and_of(ranges))
    }
}

/// Whether `time` can be the operand of a bound: not volatile (it could give another value
/// per evaluation), not reading the row's own table; for a bound used twice (`=`), reading no
/// table's row at all and running no subplan.
///
/// # Safety
/// `time` is an expression of the query being planned.
unsafe fn is_bound_operand(time: *mut Node, scope: &Scope, used_twice: bool) -> bool {
    unsafe {
        !pg_sys::contain_volatile_functions(time)
            && !reads_table(time, scope.relid)
            && !(used_twice && (pg_sys::contain_var_clause(time) || pg_sys::contain_subplans(time)))
    }
}

/// Whether the expression reads a column of the table `relid` of this query level.
///
/// # Safety
/// `node` is an expression of the query being planned.
unsafe fn reads_table(node: *mut Node, relid: u32) -> bool {
    #[pg_guard]
    unsafe extern "C-unwind" fn walk(node: *mut Node, relid: *mut c_void) -> bool {
        // SAFETY: nodes of the expression being walked.
        unsafe {
            if node.is_null() {
                return false;
            }
            if is_a(node, NodeTag::T_Var) {
                let var = node.cast::<pg_sys::Var>();
                return (*var).varno as usize == relid as usize && (*var).varlevelsup == 0;
            }
            pg_sys::expression_tree_walker(node, Some(walk), relid)
        }
    }
    // SAFETY: as promised by the caller; the context carries the index, not a pointer.
    unsafe { walk(node, relid as usize as *mut c_void) }
}

/// `id >= bound(time)` or `id <= bound(time)`. A constant's bound is computed now, as
/// PostgreSQL folds the bound function of a constant it is given (plan-time partition pruning
/// needs a constant); otherwise None if the role may not call the bound function.
///
/// # Safety
/// `id` and `time` are expressions of the query being planned; each is used once more.
unsafe fn id_against_bound(
    scope: &Scope,
    targets: &Targets,
    id: *mut Node,
    bound: Bound,
    time: *mut Node,
) -> Option<*mut Node> {
    unsafe {
        let value = if is_a(time, NodeTag::T_Const) {
            let time = time.cast::<pg_sys::Const>();
            let at = TimestampWithTimeZone::from_datum((*time).constvalue, (*time).constisnull);
            match at.and_then(|at| bound.of(at)) {
                Some(bound) => sno_constant(targets, bound),
                // No ID qualifies: false, the same rows as NULL here, and what the planner
                // turns into a plan that reads nothing.
                None => return Some(pg_sys::makeBoolConst(false, false)),
            }
        } else {
            let function = targets.function(bound);
            if !may_execute(function) || scope.may_reach_foreign_server() {
                return None;
            }
            pg_sys::makeFuncExpr(
                function,
                targets.sno_type,
                list_of([pg_sys::copyObjectImpl(time.cast()).cast()]),
                Oid::INVALID,
                Oid::INVALID,
                pg_sys::CoercionForm::COERCE_EXPLICIT_CALL,
            )
            .cast()
        };
        let operator = match bound {
            Bound::MinAtOrAfter | Bound::MinAfter => targets.greater_equal,
            Bound::MaxAtOrBefore | Bound::MaxBefore => targets.less_equal,
        };
        let clause = pg_sys::make_opclause(
            operator,
            pg_sys::BOOLOID,
            false,
            pg_sys::copyObjectImpl(id.cast()).cast(),
            value.cast(),
            Oid::INVALID,
            Oid::INVALID,
        );
        Some(clause.cast())
    }
}

/// A `sno` constant.
///
/// # Safety
/// Called while planning (the constant lives in the planner's memory).
unsafe fn sno_constant(targets: &Targets, id: Sno) -> *mut Node {
    let datum = id.into_datum().expect("an ID is never NULL");
    // SAFETY: a by-reference constant of sno's fixed length.
    unsafe {
        pg_sys::makeConst(
            targets.sno_type,
            -1,
            Oid::INVALID,
            Sno::SIZE as i32,
            datum,
            false,
            false,
        )
        .cast()
    }
}

/// The AND of the clauses (flat: an AND among them is spliced in), or the one clause.
///
/// # Safety
/// Called while planning.
unsafe fn and_of(clauses: Vec<*mut Node>) -> *mut Node {
    // SAFETY: an AND of expressions, in the planner's memory.
    unsafe {
        let flat = spliced(list_of(clauses), pg_sys::BoolExprType::AND_EXPR);
        if (*flat).length == 1 {
            return *cells(flat).next().expect("one clause");
        }
        pg_sys::makeBoolExpr(pg_sys::BoolExprType::AND_EXPR, flat, -1).cast()
    }
}

/// `sno_time(id) IN (t1, t2, ...)` (and `= ANY(array)`): the OR of each time's `=` range, for a
/// list of constants or of operands that could each bound an `=`.
///
/// # Safety
/// `clause` is a clause of the query being planned.
unsafe fn in_list_ranges(
    clause: *mut pg_sys::ScalarArrayOpExpr,
    scope: &Scope,
) -> Option<*mut Node> {
    unsafe {
        if Comparison::of_timestamptz_operator((*clause).opno) != Some(Comparison::Equal)
            || !(*clause).useOr
        {
            return None;
        }
        let mut operands = cells((*clause).args).map(|cell| *cell);
        let (Some(left), Some(list)) = (operands.next(), operands.next()) else {
            return None;
        };
        let (sno_time, id) = sno_time_of_column(left, scope)?;
        let times = list_elements(list)?;
        if times.is_empty() || times.len() > LONGEST_IN_LIST {
            return None;
        }
        if !times
            .iter()
            .all(|&time| is_bound_operand(time, scope, true))
        {
            return None;
        }
        let targets = targets(sno_time)?;
        let mut arms = Vec::with_capacity(times.len());
        for time in times {
            let ranges = Comparison::Equal
                .bounds()
                .iter()
                .map(|&bound| id_against_bound(scope, &targets, id, bound, time))
                .collect::<Option<Vec<_>>>()?;
            arms.push(and_of(ranges));
        }
        if arms.len() == 1 {
            return arms.pop();
        }
        Some(pg_sys::makeBoolExpr(pg_sys::BoolExprType::OR_EXPR, list_of(arms), -1).cast())
    }
}

/// The elements of an IN list: of an `ARRAY[...]` as written, or of a constant array (what a
/// list of constants has been folded into), each non-NULL one as a constant. None for any
/// other array (a parameter, a column).
///
/// # Safety
/// `list` is an expression of the query being planned.
unsafe fn list_elements(list: *mut Node) -> Option<Vec<*mut Node>> {
    unsafe {
        if is_a(list, NodeTag::T_ArrayExpr) {
            let array = list.cast::<pg_sys::ArrayExpr>();
            return ((*array).element_typeid == pg_sys::TIMESTAMPTZOID)
                .then(|| cells((*array).elements).map(|cell| *cell).collect());
        }
        let constant = constant_of(list, pg_sys::TIMESTAMPTZARRAYOID)?;
        let array = pg_sys::pg_detoast_datum((*constant).constvalue.cast_mut_ptr()).cast();
        let (mut values, mut nulls, mut count) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
        pg_sys::deconstruct_array(
            array,
            pg_sys::TIMESTAMPTZOID,
            8,
            true,
            pg_sys::TYPALIGN_DOUBLE as core::ffi::c_char,
            &mut values,
            &mut nulls,
            &mut count,
        );
        let mut elements = Vec::new();
        for i in 0..count as usize {
            // A NULL element matches no row: as a condition it is the same as leaving it out.
            if !*nulls.add(i) {
                elements.push(timestamptz_constant(*values.add(i)));
            }
        }
        Some(elements)
    }
}
