//! Small helpers over PostgreSQL's node lists.

use pgrx::is_a;
use pgrx::pg_sys::{self, Node, NodeTag, Oid};

/// The cells of a PostgreSQL list, as places that can be overwritten.
///
/// # Safety
/// `list` is NIL or a valid pointer list that outlives the returned places.
pub(super) unsafe fn cells<'a>(list: *mut pg_sys::List) -> impl Iterator<Item = &'a mut *mut Node> {
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

/// A list of the given nodes.
///
/// # Safety
/// Called in a memory context that lives as long as the query being planned.
pub(super) unsafe fn list_of(nodes: impl IntoIterator<Item = *mut Node>) -> *mut pg_sys::List {
    let mut list = std::ptr::null_mut();
    for node in nodes {
        // SAFETY: appending a node pointer to a pointer list (or NIL).
        list = unsafe { pg_sys::lappend(list, node.cast()) };
    }
    list
}

/// The constant of this type that `node` is, if it is one and not NULL.
///
/// # Safety
/// `node` is an expression of the query being planned.
pub(super) unsafe fn constant_of(node: *mut Node, type_oid: Oid) -> Option<*mut pg_sys::Const> {
    unsafe {
        if !is_a(node, NodeTag::T_Const) {
            return None;
        }
        let constant = node.cast::<pg_sys::Const>();
        (!(*constant).constisnull && (*constant).consttype == type_oid).then_some(constant)
    }
}

/// A `timestamptz` constant.
///
/// # Safety
/// Called while planning (the constant lives in the planner's memory).
pub(super) unsafe fn timestamptz_constant(value: pg_sys::Datum) -> *mut Node {
    unsafe {
        pg_sys::makeConst(
            pg_sys::TIMESTAMPTZOID,
            -1,
            Oid::INVALID,
            8,
            value,
            false,
            true,
        )
        .cast()
    }
}
