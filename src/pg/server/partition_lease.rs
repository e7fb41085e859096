//! The partition lease this server holds from the registry (`sno.partition_source =
//! 'registry'`), in shared memory: the lease holder (`lease_holder`) writes it, and every
//! `sno_generate` checks the ID it made against its fence.
//!
//! The fence is three numbers, read without a lock:
//! - `cap_unit`: the last unit an ID may carry, by this server's clock: the clock when the last
//!   renewal was sent, plus the lease, less a margin. The registry keeps the clock plus the lease
//!   as the partition's `used_through`, and whoever takes the partition after this lease ends
//!   starts past it, so no ID this server makes can meet theirs, whatever either clock does.
//! - `deadline_ms`: when the lease ends on this side, on `CLOCK_MONOTONIC`: the renewal's send
//!   time plus the lease, less the margin. The registry's lease runs from when the renewal
//!   arrived, later, so this side stops first, even while the wall clock is stepped back.
//! - `floor_unit`: the unit IDs must stay after, when the partition came from another server
//!   whose lease expired (the registry's `start_after`).
//! - `partition`: the partition leased. An ID of another one (the generator still on a lost
//!   partition, through a reload racing a renewal) never passes.
//!
//! Before the first claim, and after a renewal that found the partition taken, nothing passes.
//!
//! An ID past the cap while the deadline is still ahead means the wall clock was stepped
//! forward since the last renewal: its caller asks the lease holder to renew at once, by the new
//! clock, instead of being refused until the next renewal on schedule.

use crate::pg::server::lwlock::{Guard, LwLocked};
use crate::pg::server::partition_watch_findings::Note;
use crate::pg::support::server_clock::monotonic_millis;
use crate::time::Units;
use pgrx::pg_sys;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// `partition` when no lease is in force: no partition is this.
const NO_PARTITION: u32 = u32::MAX;

#[repr(C)]
pub(crate) struct PartitionLease {
    cap_unit: AtomicU64,
    deadline_ms: AtomicI64,
    floor_unit: AtomicU64,
    partition: AtomicU32,
    /// Set by a caller whose ID went past the cap within the deadline; the holder renews.
    renewal_asked: AtomicBool,
    /// The lease holder's latch, which a caller sets with `renewal_asked`; null until it starts.
    holder_latch: AtomicPtr<pg_sys::Latch>,
    held: LwLocked<Held>,
}

/// What the lease holder last learned, for errors and `sno_partition_lease()`.
#[derive(Clone, Copy)]
pub(crate) struct Held {
    /// The partition leased, or the last one, after it was lost.
    pub partition: Option<u16>,
    /// Whether the lease is in force (claimed or renewed, and not found taken since).
    pub holding: bool,
    /// When the holder last claimed or renewed it (Unix ms, this server's clock); 0: never.
    pub renewed_at_ms: i64,
    /// The last time (Unix ms, this server's clock) an ID may carry.
    pub valid_until_ms: i64,
    /// The time IDs stay after (Unix ms), when the partition was another server's.
    pub start_after_ms: Option<i64>,
    /// Claims and renewals that failed since the server started.
    pub failures: i64,
    /// Why the last claim or renewal failed, until one succeeds.
    pub problem: Note,
    /// The greatest `may_use_until` (Unix ms) sent for the partition: renewals send it again,
    /// so that a registry that lost the row writes it back without moving it back.
    pub used_through_ms: i64,
    /// The backfill partition (sno.backfill_partition) the registry said at the last claim or
    /// renewal that it reserves: sno_generate_at uses a backfill partition only then.
    pub backfill_reserved: Option<u16>,
}

impl Held {
    /// Whether the lease is in force now: held, and its cap not passed by this server's clock.
    pub(crate) fn in_force(&self, now_ms: i64) -> bool {
        self.holding && now_ms <= self.valid_until_ms
    }
}

/// A lease the registry granted or renewed: IDs of `partition` may go through `cap` (this
/// server's clock) until `deadline_ms` (monotonic), and stay after `floor` when the partition
/// was another server's.
pub(crate) struct Grant {
    pub partition: u16,
    pub floor: Option<Units>,
    pub cap: Units,
    pub deadline_ms: i64,
    /// When the claim or renewal was sent (Unix ms, this server's clock).
    pub renewed_at_ms: i64,
    /// The `may_use_until` it sent (Unix ms, this server's clock).
    pub used_through_ms: i64,
    pub backfill_reserved: Option<u16>,
}

/// Whether an ID may be returned.
pub(crate) enum Admission {
    Yes,
    /// Its unit is at or before the floor: wait until the clock passes it.
    TooEarly(Units),
    /// Past the cap but within the deadline: the wall clock stepped forward since the last
    /// renewal, which a renewal now would take in.
    PastCap,
    /// Past the deadline, or no lease.
    No,
}

impl PartitionLease {
    pub(crate) const fn new() -> PartitionLease {
        PartitionLease {
            cap_unit: AtomicU64::new(0),
            deadline_ms: AtomicI64::new(i64::MIN),
            floor_unit: AtomicU64::new(0),
            partition: AtomicU32::new(NO_PARTITION),
            renewal_asked: AtomicBool::new(false),
            holder_latch: AtomicPtr::new(std::ptr::null_mut()),
            held: LwLocked::new(Held {
                partition: None,
                holding: false,
                renewed_at_ms: 0,
                valid_until_ms: 0,
                start_after_ms: None,
                failures: 0,
                problem: Note::empty(),
                used_through_ms: 0,
                backfill_reserved: None,
            }),
        }
    }

    pub(crate) fn attach(&self, lock: *mut pgrx::pg_sys::LWLock) {
        self.held.attach(lock);
    }

    /// Whether an ID of `partition` and `unit` may be returned now.
    #[inline]
    pub(crate) fn admits(&self, partition: u16, unit: Units) -> Admission {
        let unit = unit.get();
        if monotonic_millis() > self.deadline_ms.load(Ordering::Acquire)
            || u32::from(partition) != self.partition.load(Ordering::Acquire)
        {
            return Admission::No;
        }
        if unit > self.cap_unit.load(Ordering::Acquire) {
            return Admission::PastCap;
        }
        let floor = self.floor_unit.load(Ordering::Acquire);
        if unit <= floor {
            return Admission::TooEarly(Units::saturating(floor));
        }
        Admission::Yes
    }

    /// Called by the lease holder as it starts: callers may wake it from now on.
    pub(crate) fn set_holder_latch(&self, latch: *mut pg_sys::Latch) {
        self.holder_latch.store(latch, Ordering::Release);
    }

    /// Asks the lease holder to renew now (see [`Admission::PastCap`]).
    pub(crate) fn ask_for_renewal(&self) {
        self.renewal_asked.store(true, Ordering::Release);
        let latch = self.holder_latch.load(Ordering::Acquire);
        if !latch.is_null() {
            // SAFETY: a latch in shared memory (a PGPROC's); setting one whose process ended
            // wakes at most whichever process has that PGPROC now, which tolerates it.
            unsafe { pg_sys::SetLatch(latch) };
        }
    }

    /// A renewal begins: the requests so far are answered by it.
    pub(crate) fn clear_renewal_request(&self) {
        self.renewal_asked.store(false, Ordering::Release);
    }

    /// Whether sno_generate_at may use `partition` as its backfill partition: the registry
    /// reserves it and gives this instance the permission, as it said at the last claim or
    /// renewal, while the lease is in force.
    pub(crate) fn backfill_reserved(&self, partition: u16) -> bool {
        let held = self.held.lock();
        held.holding
            && held.backfill_reserved == Some(partition)
            && monotonic_millis() <= self.deadline_ms.load(Ordering::Acquire)
    }

    /// The partition in force, if a lease is held.
    pub(crate) fn partition(&self) -> Option<u16> {
        let held = self.held.lock();
        held.partition.filter(|_| held.holding)
    }

    pub(crate) fn held(&self) -> Guard<'_, Held> {
        self.held.lock()
    }

    /// A lease was claimed or renewed: records it, and its floor when its partition is another
    /// than the one in force (returned: whether it is), or when a renewal raises it. The fence
    /// opens with [`PartitionLease::open`], once the generator uses the partition.
    pub(crate) fn hold(&self, grant: &Grant) -> bool {
        let mut held = self.held.lock();
        let changed = !held.holding || held.partition != Some(grant.partition);
        held.partition = Some(grant.partition);
        held.holding = true;
        held.renewed_at_ms = grant.renewed_at_ms;
        held.valid_until_ms = grant.cap.to_unix_millis();
        held.backfill_reserved = grant.backfill_reserved;
        if changed {
            held.used_through_ms = grant.used_through_ms;
            held.start_after_ms = grant.floor.map(Units::to_unix_millis);
            self.floor_unit
                .store(grant.floor.map_or(0, Units::get), Ordering::Release);
        } else {
            held.used_through_ms = held.used_through_ms.max(grant.used_through_ms);
            // A renewal the registry could not vouch for (it lost the row) raises the floor.
            if let Some(floor) = grant
                .floor
                .filter(|floor| floor.get() > self.floor_unit.load(Ordering::Acquire))
            {
                held.start_after_ms = Some(floor.to_unix_millis());
                self.floor_unit.store(floor.get(), Ordering::Release);
            }
        }
        held.problem.replace("");
        changed
    }

    /// Lets IDs through the fence of `grant`, which [`PartitionLease::hold`] recorded: after the
    /// floor, so that a caller that sees the new cap sees the floor too.
    pub(crate) fn open(&self, grant: &Grant) {
        self.partition
            .store(u32::from(grant.partition), Ordering::Release);
        self.cap_unit.store(grant.cap.get(), Ordering::Release);
        self.deadline_ms.store(grant.deadline_ms, Ordering::Release);
    }

    /// The cap in force: it changes with each renewal.
    pub(crate) fn cap(&self) -> u64 {
        self.cap_unit.load(Ordering::Acquire)
    }

    /// Whether a caller asked for a renewal that has not begun yet.
    pub(crate) fn renewal_requested(&self) -> bool {
        self.renewal_asked.load(Ordering::Acquire)
    }

    /// Remembers `partition` as the one to ask the registry for, while none is held: the state
    /// file's at start-up, the primary's on a standby.
    pub(crate) fn remember(&self, partition: u16) {
        let mut held = self.held.lock();
        if !held.holding {
            held.partition = Some(partition);
        }
    }

    /// [`PartitionLease::remember`] in the postmaster, at start-up.
    pub(crate) fn remember_at_start(&self, partition: u16) {
        // SAFETY: only the postmaster runs, before any backend or worker is started.
        unsafe { self.held.unlocked() }.partition = Some(partition);
    }

    /// The registry says another server holds the partition now: nothing passes until a claim.
    pub(crate) fn lose(&self, why: &str) {
        let mut held = self.end();
        held.failures += 1;
        held.problem.replace(why);
    }

    /// The server gives the lease back (a shutdown): nothing passes from now on.
    pub(crate) fn give_up(&self) {
        self.end()
            .problem
            .replace("the lease was given back to the registry (a shutdown)");
    }

    fn end(&self) -> Guard<'_, Held> {
        self.partition.store(NO_PARTITION, Ordering::Release);
        self.cap_unit.store(0, Ordering::Release);
        self.deadline_ms.store(i64::MIN, Ordering::Release);
        let mut held = self.held.lock();
        held.holding = false;
        held
    }

    /// A claim or renewal failed (the registry could not be reached, or refused): the fence
    /// stands as it was, and ends by itself.
    pub(crate) fn note_failure(&self, why: &str) {
        let mut held = self.held.lock();
        held.failures += 1;
        held.problem.replace(why);
    }
}
