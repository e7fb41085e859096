//! How many IDs `sno_generate` returned, counted per process so that counting writes no memory
//! another process writes.
//!
//! Backends take IDs from leases (runs of sequences claimed at once), so the generator's own
//! count is of sequences claimed, including the unused ends of runs. Each process counts the IDs
//! it returns in its own slot instead, indexed by its PGPROC number, one cache line each and one
//! writer at a time, and `sno_generator_stats` adds the slots up.

use crate::pg::support::backend_local::BackendLocal;
use pgrx::pg_sys;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

const SHMEM_NAME: &std::ffi::CStr = c"sno generated counts";

#[repr(C, align(64))]
struct Slot(AtomicU64);

/// Slot 0 counts for any process without a slot of its own (none is expected: every process
/// that runs SQL has a PGPROC number below `MaxBackends`); process `n` counts in slot `n + 1`.
static SLOTS: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());
static SLOT_COUNT: AtomicUsize = AtomicUsize::new(0);

fn slot_count() -> usize {
    // SAFETY: MaxBackends is fixed before shared memory is requested, and never changes after.
    unsafe { pg_sys::MaxBackends as usize + 1 }
}

/// Shared memory the slots need; ask for it in the shared-memory request hook.
pub(crate) fn shared_memory_size() -> usize {
    slot_count() * size_of::<Slot>()
}

/// Finds (or, first time round, zeroes) the slots. Call from the shared-memory start-up hook
/// with `AddinShmemInitLock` held.
pub(crate) unsafe fn attach() {
    let count = slot_count();
    let mut found = false;
    let slots = unsafe {
        pg_sys::ShmemInitStruct(SHMEM_NAME.as_ptr(), count * size_of::<Slot>(), &mut found)
    }
    .cast::<Slot>();
    if !found {
        for index in 0..count {
            // SAFETY: the allocation holds `count` slots, and nobody uses them yet.
            unsafe { slots.add(index).write(Slot(AtomicU64::new(0))) };
        }
    }
    SLOT_COUNT.store(count, Ordering::Release);
    SLOTS.store(slots, Ordering::Release);
}

/// Where this process counts: its own slot, or the shared slot 0.
#[derive(Copy, Clone)]
enum Counter {
    Own(&'static AtomicU64),
    Shared(&'static AtomicU64),
}

/// This process's counter, found on its first count: the slot of a process never changes.
static MY_COUNTER: BackendLocal<Option<Counter>> = BackendLocal::new(None);

/// Counts one more ID returned by this process. Only after the slots are attached (sno was
/// preloaded).
pub(crate) fn count_one() {
    match MY_COUNTER.update(|counter| *counter.get_or_insert_with(find_counter)) {
        // Only this process writes its slot while it lives, so a load and a store cannot lose
        // a count.
        Counter::Own(own) => own.store(own.load(Ordering::Relaxed) + 1, Ordering::Relaxed),
        Counter::Shared(shared) => {
            shared.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn find_counter() -> Counter {
    let slots = SLOTS.load(Ordering::Acquire);
    assert!(!slots.is_null(), "sno counts IDs only once preloaded");
    let index = my_proc_number().map_or(0, |n| n + 1);
    if index == 0 || index >= SLOT_COUNT.load(Ordering::Acquire) {
        // SAFETY: slot 0 exists for the life of shared memory.
        return Counter::Shared(&unsafe { &*slots }.0);
    }
    // SAFETY: within the slots, which live as long as shared memory.
    Counter::Own(&unsafe { &*slots.add(index) }.0)
}

/// IDs returned since shared memory was set up, by every process.
pub(crate) fn total() -> u64 {
    let slots = SLOTS.load(Ordering::Acquire);
    if slots.is_null() {
        return 0;
    }
    (0..SLOT_COUNT.load(Ordering::Acquire))
        // SAFETY: within the slots.
        .map(|index| unsafe { &*slots.add(index) }.0.load(Ordering::Relaxed))
        .sum()
}

/// This process's PGPROC number, if it has one.
fn my_proc_number() -> Option<usize> {
    #[cfg(not(pg17_or_later))]
    // SAFETY: MyProc is this process's own PGPROC, or null before it has one.
    let number = unsafe { pg_sys::MyProc.as_ref().map(|proc_| proc_.pgprocno) };
    #[cfg(pg17_or_later)]
    // SAFETY: a plain read of a process-local global (-1 when there is none).
    let number = Some(unsafe { pg_sys::MyProcNumber });
    number.and_then(|n| usize::try_from(n).ok())
}
