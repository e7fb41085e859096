//! How a [`Sno`] crosses the function-call boundary: a pointer to its 10 bytes, with no varlena
//! header (the type is `INTERNALLENGTH = 10`, passed by reference, never toasted).

use crate::id::Sno;
use crate::pg::support::errors;
use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::datum::{Datum, FromDatum, IntoDatum, UnboxDatum};
use pgrx::pg_sys;
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};

// SAFETY: `sno` in SQL is exactly the 10 bytes of `Sno`, created by sql/parts/type.sql.
unsafe impl SqlTranslatable for Sno {
    const TYPE_IDENT: &'static str = "sno::id::Sno";
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::ThisExtension;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("sno"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("sno")));
}

/// Reads the 10 bytes a `sno` datum points to.
///
/// # Safety
/// `datum` must be a non-null `sno` datum.
unsafe fn read(datum: pg_sys::Datum) -> Sno {
    // SAFETY: the caller promises a pointer to 10 readable bytes; [u8; 10] has alignment 1.
    Sno::from_bytes(unsafe { datum.cast_mut_ptr::<[u8; Sno::SIZE]>().read() })
}

impl FromDatum for Sno {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<Sno> {
        // SAFETY: PostgreSQL hands us a valid sno datum whenever it is not null.
        (!is_null).then(|| unsafe { read(datum) })
    }
}

// Declared here rather than through pgrx's bindings, which wrap every call in a sigsetjmp
// guard in case it raises an error. With MCXT_ALLOC_NO_OOM and a valid size it never does: it
// returns NULL instead, so it is called directly on this hot path (every returned ID).
unsafe extern "C" {
    #[link_name = "MemoryContextAllocExtended"]
    fn alloc_without_raising(
        context: pg_sys::MemoryContext,
        size: pg_sys::Size,
        flags: std::ffi::c_int,
    ) -> *mut std::ffi::c_void;
}

impl IntoDatum for Sno {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // SAFETY: a 10-byte allocation in the caller's current memory context, as a by-reference
        // result must be; NULL only when out of memory, which is then raised through pgrx.
        unsafe {
            let bytes = alloc_without_raising(
                pg_sys::CurrentMemoryContext,
                Sno::SIZE,
                pg_sys::MCXT_ALLOC_NO_OOM as std::ffi::c_int,
            )
            .cast::<[u8; Sno::SIZE]>();
            if bytes.is_null() {
                errors::out_of_memory();
            }
            bytes.write(self.to_bytes());
            Some(pg_sys::Datum::from(bytes))
        }
    }

    fn type_oid() -> pg_sys::Oid {
        pgrx::wrappers::regtypein("sno")
    }
}

// SAFETY: unboxing reads the 10 bytes the datum points to, as FromDatum does.
unsafe impl UnboxDatum for Sno {
    type As<'src> = Sno;

    unsafe fn unbox<'src>(datum: Datum<'src>) -> Sno
    where
        Self: 'src,
    {
        unsafe { read(datum.sans_lifetime()) }
    }
}

// SAFETY: every function taking a `sno` is STRICT, so the argument is never null.
unsafe impl<'fcx> ArgAbi<'fcx> for Sno {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Sno {
        let index = arg.index();
        unsafe { arg.unbox_arg_using_from_datum() }
            .unwrap_or_else(|| panic!("sno argument {index} must not be null"))
    }
}

// SAFETY: the returned datum points to palloc'd bytes that outlive the call.
unsafe impl BoxRet for Sno {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        match self.into_datum() {
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}
