//! `ORDER BY sno_time(id)` read in the order of `id`.
//!
//! A later ID never has an earlier time, so any order of `id` is an order of `sno_time(id)`:
//! sorting by `id` gives rows that `ORDER BY sno_time(id)` allows (IDs of one 4 ms unit tie on
//! their time, and any order among ties is allowed). So when `sno_time(id)` is the last sort
//! key, it can be replaced by `id`, which an index on `id` (or a table partitioned by it)
//! returns in order, and `ORDER BY sno_time(id) DESC LIMIT 10` reads ten index entries instead
//! of sorting the table. Only the last key: before another key, the ties would be ordered by
//! that key, not by `id`. And only where the sort is the query level's last step on its rows
//! (no grouping, aggregates, window functions, DISTINCT, set operations or set-returning
//! functions in the select list, each of which would need `id` after it has gone).

use super::nodes::cells;
use super::sno_objects::{sno_time_call, targets};
use pgrx::pg_sys::{self, Node};

/// timestamptz's `<` and `>` (pg_operator.dat), the sort operators of ASC and DESC.
const TIMESTAMPTZ_LESS: u32 = 1322;
const TIMESTAMPTZ_GREATER: u32 = 1324;

/// Replaces a last sort key `sno_time(id)`, `id` a column of the table `relid` of this query
/// level, with `id`, added to the select
/// list as a hidden (junk) column, as PostgreSQL adds any sort key that is not selected.
///
/// # Safety
/// `root` is the planner's state of the query level, after its select list has been prepared
/// and before its sort order is read (query_planner's `qp_callback`).
pub(super) unsafe fn order_by_id(root: *mut pg_sys::PlannerInfo, relid: u32) {
    unsafe {
        let parse = (*root).parse;
        if (*parse).commandType != pg_sys::CmdType::CMD_SELECT
            || (*parse).sortClause.is_null()
            || (*parse).hasAggs
            || !(*parse).groupClause.is_null()
            || !(*parse).groupingSets.is_null()
            || !(*parse).havingQual.is_null()
            || (*parse).hasWindowFuncs
            || !(*parse).distinctClause.is_null()
            || !(*parse).setOperations.is_null()
            || (*parse).hasTargetSRFs
            // The select list the plan is made from must be the query's own (it is, for a
            // SELECT): the hidden column goes into both.
            || (*root).processed_tlist != (*parse).targetList
        {
            return;
        }
        let Some(last) = cells((*parse).sortClause).last() else {
            return;
        };
        let key = (*last).cast::<pg_sys::SortGroupClause>();
        let descending = match (*key).sortop.to_u32() {
            TIMESTAMPTZ_LESS => false,
            TIMESTAMPTZ_GREATER => true,
            _ => return,
        };
        let select_list = (*root).processed_tlist;
        let entries: Vec<*mut pg_sys::TargetEntry> =
            cells(select_list).map(|cell| (*cell).cast()).collect();
        let Some(&entry) = entries
            .iter()
            .find(|entry| (***entry).ressortgroupref == (*key).tleSortGroupRef)
        else {
            return;
        };
        let Some((sno_time, id)) = sno_time_call((*entry).expr.cast()) else {
            return;
        };
        if !pgrx::is_a(id, pg_sys::NodeTag::T_Var) {
            return;
        }
        let var = id.cast::<pg_sys::Var>();
        if (*var).varno as u32 != relid || (*var).varlevelsup != 0 {
            return;
        }
        let Some(targets) = targets(sno_time) else {
            return;
        };
        let reference = entries
            .iter()
            .map(|entry| (**entry).ressortgroupref)
            .max()
            .unwrap_or(0)
            + 1;
        let hidden = pg_sys::makeTargetEntry(
            pg_sys::copyObjectImpl(id.cast()).cast(),
            (entries.len() + 1) as pg_sys::AttrNumber,
            std::ptr::null_mut(),
            true,
        );
        (*hidden).ressortgroupref = reference;
        let by_id = pg_sys::copyObjectImpl(key.cast()).cast::<pg_sys::SortGroupClause>();
        (*by_id).tleSortGroupRef = reference;
        (*by_id).eqop = targets.equal;
        (*by_id).sortop = if descending {
            targets.greater
        } else {
            targets.less
        };
        (*by_id).hashable = pg_sys::op_hashjoinable(targets.equal, targets.sno_type);
        *last = by_id.cast::<Node>();
        let appended = pg_sys::lappend(select_list, hidden.cast());
        debug_assert!(
            appended == select_list,
            "a list keeps its header when it grows"
        );
        (*root).processed_tlist = appended;
        (*parse).targetList = appended;
    }
}
