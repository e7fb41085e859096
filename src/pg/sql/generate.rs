//! `sno_generate`, `sno_generate_at`, `sno_generator_stats`, `sno_backfill_cursors` and
//! `sno_retire_backfill_cursor`: SQL over the shared generator.

use crate::clock::Clock;
use crate::generator::{GenerateError, Lease};
use crate::id::Sno;
use crate::pg::server::generated_count;
use crate::pg::server::shared_memory::{shared, Shared};
use crate::pg::sql::parts::unix_millis;
use crate::pg::support::backend_local::BackendLocal;
use crate::pg::support::errors::{self, time_out_of_range};
use crate::pg::support::server_clock::ServerClock;
use crate::pg::support::settings;
use crate::pg::support::timestamps::timestamptz;
use crate::time::Units;
use pgrx::prelude::*;
use pgrx::IntoDatum;
use std::sync::atomic::{AtomicBool, Ordering};

/// The shared generator, ready to issue IDs here: preloaded, its state file read, not a
/// standby, settings current.
#[inline(always)]
fn generator_for_writing(function: &str) -> &'static Shared {
    let Some(shared) = shared() else {
        errors::not_preloaded(function)
    };
    // A standby generates nothing, whatever its state file: it says so before anything else
    // (recovering generation takes the generator's locks and reads the file).
    if in_recovery() {
        errors::on_standby();
    }
    // Before any claim: a generator not yet restored from its file could repeat IDs.
    if shared.generation_off() {
        shared.recover_generation();
    }
    // A parallel worker runs with its leader's settings but the postmaster's reload time, so it
    // could mistake older settings for newer ones; only backends apply reloads.
    if settings::reloaded_since_last_look() && !is_parallel_worker() {
        shared.apply_reloaded_settings();
    }
    shared
}

/// Whether this server is a standby. A backend that has seen recovery end never sees it again,
/// so after the first "no" the check is a load instead of a call into PostgreSQL.
#[inline(always)]
fn in_recovery() -> bool {
    !RECOVERY_OVER.load(Ordering::Relaxed) && still_in_recovery()
}

static RECOVERY_OVER: AtomicBool = AtomicBool::new(false);

#[cold]
fn still_in_recovery() -> bool {
    // SAFETY: a plain check of this process's recovery state.
    let in_recovery = unsafe { pg_sys::RecoveryInProgress() };
    RECOVERY_OVER.store(!in_recovery, Ordering::Relaxed);
    in_recovery
}

fn is_parallel_worker() -> bool {
    // SAFETY: a plain read of a process-local global (-1 outside parallel workers).
    unsafe { pg_sys::ParallelWorkerNumber >= 0 }
}

fn meta_byte(meta: i32) -> u8 {
    u8::try_from(meta).unwrap_or_else(|_| errors::meta_out_of_range(meta))
}

fn issued(result: Result<Sno, GenerateError>) -> Sno {
    result.unwrap_or_else(|GenerateError::TimeOutOfRange(_)| time_out_of_range())
}

/// The V1 call-convention record PostgreSQL looks up for `sno_generate_wrapper`.
#[no_mangle]
pub extern "C" fn pg_finfo_sno_generate_wrapper() -> &'static pg_sys::Pg_finfo_record {
    static V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// `sno_generate(meta)`, which every insert with a generated key calls, as a plain V1 entry
/// point rather than through `#[pg_extern]`: the generic wrapper (argument iteration, memory
/// context switching, return-type dispatch) was a measurable part of the call. `#[pg_guard]`
/// still turns every Rust panic and error raised below into a PostgreSQL error.
///
/// # Safety
/// Called by PostgreSQL's function manager for the SQL function, which is STRICT and takes one
/// integer, so that argument is present and not null.
#[no_mangle]
#[pg_guard]
pub unsafe extern "C-unwind" fn sno_generate_wrapper(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    let meta = unsafe { (*fcinfo).args.as_slice(1)[0].value.value() as i32 };
    sno_generate(meta)
        .into_datum()
        .expect("a sno datum is never null")
}

/// This backend's run of sequences (see `Lease`): most IDs come from it without a write to
/// shared memory. Dropped with the process; its unused sequences are then never issued.
static LEASE: BackendLocal<Lease> = BackendLocal::new(Lease::new());

fn sno_generate(meta: i32) -> Sno {
    let meta = meta_byte(meta);
    let shared = generator_for_writing("sno_generate");
    // An error raised while the lease waits (a cancel) leaves it whole: it changes only after
    // a claim succeeds, and at worst a claimed run goes unused.
    let id = issued(LEASE.update(|lease| shared.generate(lease, meta)));
    generated_count::count_one();
    id
}

#[pg_extern(sql = false)]
fn sno_generate_at(meta: i32, at: TimestampWithTimeZone) -> Sno {
    let meta = meta_byte(meta);
    let unix_ms = unix_millis(at);
    generator_for_writing("sno_generate_at").generate_at(meta, unix_ms)
}

#[allow(clippy::type_complexity)]
#[pg_extern(sql = false)]
fn sno_generator_stats() -> TableIterator<
    'static,
    (
        name!(partition, i32),
        name!(sequence_min, i32),
        name!(sequence_max, i32),
        name!(tick_tock, i32),
        name!(last_time, TimestampWithTimeZone),
        name!(generated, i64),
        name!(backfilled, i64),
        name!(overflow_stalls, i64),
        name!(clock_regressions, i64),
        name!(regression_waits, i64),
        name!(persisted_through, TimestampWithTimeZone),
        name!(state_file_failures, i64),
        name!(waiting_until, Option<TimestampWithTimeZone>),
        name!(generating, bool),
    ),
> {
    let Some(shared) = shared() else {
        errors::not_preloaded("sno_generator_stats")
    };
    let stats = shared.generator().stats();
    TableIterator::once((
        stats.config.partition.into(),
        stats.config.sequence_min.into(),
        stats.config.sequence_max.into(),
        stats.tick_tock as i32,
        timestamptz(stats.last_unit.to_unix_millis()),
        generated_count::total() as i64,
        shared.backfilled() as i64,
        stats.overflow_stalls as i64,
        stats.clock_regressions as i64,
        stats.regression_waits as i64,
        timestamptz(shared.persisted_through().to_unix_millis()),
        shared.state_file_failures() as i64,
        waiting_until(stats.regression_wait_until),
        !shared.generation_off(),
    ))
}

/// The unit a regression wait waits for, while the clock is still behind it.
fn waiting_until(until: Units) -> Option<TimestampWithTimeZone> {
    let until_ms = until.to_unix_millis();
    (until != Units::MIN && ServerClock.unix_millis() < until_ms).then(|| timestamptz(until_ms))
}

#[allow(clippy::type_complexity)]
#[pg_extern(sql = false)]
fn sno_backfill_cursors() -> TableIterator<
    'static,
    (
        name!(meta, i32),
        name!(tick_tock, i32),
        name!(last_time, TimestampWithTimeZone),
        name!(other_last_time, Option<TimestampWithTimeZone>),
        name!(clock_regressions, i64),
    ),
> {
    let Some(shared) = shared() else {
        errors::not_preloaded("sno_backfill_cursors")
    };
    let rows = shared.backfill_cursors().into_iter().map(|(meta, cursor)| {
        let time = |unit: u64| timestamptz(Units::saturating(unit).to_unix_millis());
        (
            meta.into(),
            cursor.tick_tock() as i32,
            time(cursor.last_unit()),
            cursor.other_last_unit().map(time),
            cursor.clock_regressions() as i64,
        )
    });
    TableIterator::new(rows.collect::<Vec<_>>())
}

#[pg_extern(sql = false)]
fn sno_retire_backfill_cursor(meta: i32) -> bool {
    let meta = meta_byte(meta);
    generator_for_writing("sno_retire_backfill_cursor").retire_backfill_cursor(meta)
}
