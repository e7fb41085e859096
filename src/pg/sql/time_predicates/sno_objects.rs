//! sno's own objects in the database of the query being planned: its `sno_time`, recognised by
//! the C code it runs, and next to it the bound functions and the btree operators of `sno`.
//!
//! Only sno's own are used: each function is recognised by the C entry point it runs
//! (`fmgr_info`; sno_time by its name first, so that planning never loads another language's
//! handler), so a function of the same name in another schema, or a database where the
//! extension is still 0.1.0 (no bound functions), is left alone.

use super::bounds::{Bound, CEntryPoint};
use super::nodes::cells;
use core::ffi::{c_int, CStr};
use pgrx::pg_sys::{self, Node, NodeTag, Oid};
use pgrx::{is_a, pg_guard};

// sno_time's C entry point, to recognise it in a query by what it runs (the bound functions'
// are the `_wrapper`s pgrx makes in bounds.rs).
unsafe extern "C-unwind" {
    fn sno_time_wrapper(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum;
}

/// sno's objects next to one sno_time.
#[derive(Clone, Copy)]
pub(super) struct Targets {
    pub(super) sno_type: Oid,
    /// The bound functions, in the order of [`Bound::ALL`].
    functions: [Oid; 4],
    pub(super) less: Oid,
    pub(super) less_equal: Oid,
    pub(super) equal: Oid,
    pub(super) greater_equal: Oid,
    pub(super) greater: Oid,
}

impl Targets {
    pub(super) fn function(&self, bound: Bound) -> Oid {
        self.functions[bound as usize]
    }
}

/// The sno_time function last seen and what it resolved to (None: not all of sno's objects
/// exist, e.g. the extension is still 0.1.0; then nothing is rewritten). Kept per backend until
/// a catalog it was read from changes, so planning a query costs one comparison per candidate
/// call, not catalog lookups.
static mut RESOLVED: Option<(Oid, Option<Targets>)> = None;
static mut FORGETS_ON_CATALOG_CHANGES: bool = false;

/// The catalogs [`resolve`] reads: functions, their schemas, the type, its operator class and
/// family and their members, and the operators.
const CATALOGS_READ: [pg_sys::SysCacheIdentifier::Type; 6] = [
    pg_sys::SysCacheIdentifier::PROCOID,
    pg_sys::SysCacheIdentifier::NAMESPACEOID,
    pg_sys::SysCacheIdentifier::TYPEOID,
    pg_sys::SysCacheIdentifier::CLAOID,
    pg_sys::SysCacheIdentifier::AMOPSTRATEGY,
    pg_sys::SysCacheIdentifier::OPEROID,
];

/// Resets [`RESOLVED`]: a catalog it was read from changed.
#[pg_guard]
unsafe extern "C-unwind" fn forget_resolved(_arg: pg_sys::Datum, _cache: c_int, _hash: u32) {
    // SAFETY: backends are single-threaded; invalidations arrive between statements' steps.
    unsafe { RESOLVED = None };
}

/// sno's objects for this sno_time (a verified one).
pub(super) fn targets(sno_time: Oid) -> Option<Targets> {
    // SAFETY: backends are single-threaded; catalog lookups in a transaction, as planning is.
    unsafe {
        if let Some((function, targets)) = RESOLVED {
            if function == sno_time {
                return targets;
            }
        }
        if !FORGETS_ON_CATALOG_CHANGES {
            for catalog in CATALOGS_READ {
                pg_sys::CacheRegisterSyscacheCallback(
                    catalog as c_int,
                    Some(forget_resolved),
                    pg_sys::Datum::from(0),
                );
            }
            FORGETS_ON_CATALOG_CHANGES = true;
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
pub(super) unsafe fn sno_time_call(node: *mut Node) -> Option<(Oid, *mut Node)> {
    unsafe {
        if node.is_null() || !is_a(node, NodeTag::T_FuncExpr) {
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
        let mut arguments = cells((*call).args);
        let (Some(argument), None) = (arguments.next(), arguments.next()) else {
            return None;
        };
        let argument = *argument;
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

/// Whether the expression calls sno's sno_time anywhere (an index on `sno_time(id)`, say).
///
/// # Safety
/// `node` is NULL or an expression of the query being planned.
pub(super) unsafe fn mentions_sno_time(node: *mut Node) -> bool {
    #[pg_guard]
    unsafe extern "C-unwind" fn walk(node: *mut Node, _context: *mut core::ffi::c_void) -> bool {
        // SAFETY: nodes of the expression being walked.
        unsafe {
            !node.is_null()
                && (sno_time_call(node).is_some()
                    || pg_sys::expression_tree_walker(node, Some(walk), std::ptr::null_mut()))
        }
    }
    // SAFETY: as promised by the caller.
    unsafe { walk(node, std::ptr::null_mut()) }
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

/// The bound functions next to this sno_time, and sno's btree operators; None unless all are
/// sno's own.
///
/// # Safety
/// Called in a transaction.
unsafe fn resolve(sno_time: Oid) -> Option<Targets> {
    unsafe {
        let schema = pg_sys::get_namespace_name(pg_sys::get_func_namespace(sno_time));
        if schema.is_null() {
            return None;
        }
        let mut functions = [Oid::INVALID; 4];
        for bound in Bound::ALL {
            let qualified = pg_sys::lappend(
                pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeString(schema).cast()),
                pg_sys::makeString(pg_sys::pstrdup(bound.name().as_ptr())).cast(),
            );
            let function = pg_sys::LookupFuncName(qualified, 1, &pg_sys::TIMESTAMPTZOID, true);
            if !runs(function, bound.entry_point()) {
                return None;
            }
            functions[bound as usize] = function;
        }
        let sno_type = pg_sys::get_func_rettype(functions[0]);
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
            functions,
            less: operator(pg_sys::BTLessStrategyNumber)?,
            less_equal: operator(pg_sys::BTLessEqualStrategyNumber)?,
            equal: operator(pg_sys::BTEqualStrategyNumber)?,
            greater_equal: operator(pg_sys::BTGreaterEqualStrategyNumber)?,
            greater: operator(pg_sys::BTGreaterStrategyNumber)?,
        })
    }
}

/// Whether the current role may execute the function: a call the rewrite adds must not fail
/// where the written query would not.
///
/// # Safety
/// Called in a transaction.
pub(super) unsafe fn may_execute(function: Oid) -> bool {
    let mode = pg_sys::ACL_EXECUTE as pg_sys::AclMode;
    // SAFETY: a catalog lookup in a transaction.
    unsafe {
        #[cfg(not(pg16_or_later))]
        let result = pg_sys::pg_proc_aclcheck(function, pg_sys::GetUserId(), mode);
        #[cfg(pg16_or_later)]
        let result = pg_sys::object_aclcheck(
            pg_sys::ProcedureRelationId,
            function,
            pg_sys::GetUserId(),
            mode,
        );
        result == pg_sys::AclResult::ACLCHECK_OK
    }
}
