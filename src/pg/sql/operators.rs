//! Comparison, hashing and sort support. Order is byte order (memcmp), as in the format.

use crate::id::Sno;
use core::ffi::c_int;
use pgrx::datum::Internal;
use pgrx::prelude::*;

#[pg_extern(sql = false)]
fn sno_eq(a: Sno, b: Sno) -> bool {
    a == b
}

#[pg_extern(sql = false)]
fn sno_ne(a: Sno, b: Sno) -> bool {
    a != b
}

#[pg_extern(sql = false)]
fn sno_lt(a: Sno, b: Sno) -> bool {
    a < b
}

#[pg_extern(sql = false)]
fn sno_le(a: Sno, b: Sno) -> bool {
    a <= b
}

#[pg_extern(sql = false)]
fn sno_gt(a: Sno, b: Sno) -> bool {
    a > b
}

#[pg_extern(sql = false)]
fn sno_ge(a: Sno, b: Sno) -> bool {
    a >= b
}

#[pg_extern(sql = false)]
fn sno_cmp(a: Sno, b: Sno) -> i32 {
    a.cmp(&b) as i32
}

/// The transition function of `min(sno)`.
#[pg_extern(sql = false)]
fn sno_smaller(a: Sno, b: Sno) -> Sno {
    a.min(b)
}

/// The transition function of `max(sno)`.
#[pg_extern(sql = false)]
fn sno_larger(a: Sno, b: Sno) -> Sno {
    a.max(b)
}

// PostgreSQL's own byte hashes (common/hashfn.h), as uuid and bytea use; not in pgrx's bindings.
unsafe extern "C-unwind" {
    fn hash_bytes(k: *const u8, keylen: c_int) -> u32;
    fn hash_bytes_extended(k: *const u8, keylen: c_int, seed: u64) -> u64;
}

#[pg_extern(sql = false)]
fn sno_hash(id: Sno) -> i32 {
    // SAFETY: hashes the 10 bytes of `id`.
    unsafe { hash_bytes(id.as_bytes().as_ptr(), Sno::SIZE as c_int) as i32 }
}

#[pg_extern(sql = false)]
fn sno_hash_extended(id: Sno, seed: i64) -> i64 {
    // SAFETY: hashes the 10 bytes of `id`.
    unsafe { hash_bytes_extended(id.as_bytes().as_ptr(), Sno::SIZE as c_int, seed as u64) as i64 }
}

/// Sorts compare raw datums through these callbacks, skipping the function-call machinery.
/// With abbreviation, each datum is first reduced to its first 8 bytes as a big-endian integer:
/// unsigned order of those equals byte order of the prefix, so only ties (IDs from the same
/// unit, meta and partition) need the full comparison.
#[pg_extern(sql = false)]
fn sno_sortsupport(mut sort: Internal) {
    // SAFETY: PostgreSQL passes its SortSupportData.
    let sort = unsafe { sort.get_mut::<pg_sys::SortSupportData>() }
        .expect("sno_sortsupport needs a SortSupport");
    sort.comparator = Some(compare_full);
    if sort.abbreviate && size_of::<pg_sys::Datum>() == 8 {
        sort.abbrev_full_comparator = Some(compare_full);
        sort.comparator = Some(compare_abbreviated);
        sort.abbrev_converter = Some(abbreviate);
        sort.abbrev_abort = Some(never_abort);
    }
}

/// # Safety
/// Both datums point to sno values.
unsafe extern "C-unwind" fn compare_full(
    a: pg_sys::Datum,
    b: pg_sys::Datum,
    _sort: pg_sys::SortSupport,
) -> c_int {
    let (a, b) = unsafe {
        (
            &*a.cast_mut_ptr::<[u8; 10]>(),
            &*b.cast_mut_ptr::<[u8; 10]>(),
        )
    };
    a.cmp(b) as c_int
}

/// # Safety
/// The datum points to a sno value.
unsafe extern "C-unwind" fn abbreviate(
    original: pg_sys::Datum,
    _sort: pg_sys::SortSupport,
) -> pg_sys::Datum {
    let id = unsafe { &*original.cast_mut_ptr::<[u8; 10]>() };
    let prefix: [u8; 8] = id[..8].try_into().expect("8 of 10 bytes");
    pg_sys::Datum::from(u64::from_be_bytes(prefix))
}

/// The prefix is cheap to make and the full comparison is a 10-byte memcmp, so abbreviation
/// never costs enough to be worth abandoning.
unsafe extern "C-unwind" fn never_abort(_tuples: c_int, _sort: pg_sys::SortSupport) -> bool {
    false
}

unsafe extern "C-unwind" {
    /// PostgreSQL's comparator for unsigned abbreviated keys; tuplesort has a specialised,
    /// inlined quicksort for it (PostgreSQL 15+).
    #[link_name = "ssup_datum_unsigned_cmp"]
    fn compare_abbreviated(a: pg_sys::Datum, b: pg_sys::Datum, sort: pg_sys::SortSupport) -> c_int;
}
