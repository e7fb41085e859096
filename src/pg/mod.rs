//! The PostgreSQL extension: a thin mapping of the core onto SQL.
//!
//! All SQL objects are declared in the install script assembled from `sql/parts/` (`sql/sno.parts`
//! lists them), which reads like any hand-written extension script; the Rust functions here are
//! the C entry points it names (`<function>_wrapper`). Each is `#[pg_extern(sql = false)]`: pgrx
//! makes the entry point and no SQL, so a function's volatility, strictness and parallel safety
//! are written once, in those parts (the SQL test `markings` checks them against the README).

// Four layers, each importing only from those below it: `sql` (what SQL calls), `recovery`
// (replay, pg_upgrade, partition mistakes), `server` (the generator's state in shared memory, on
// disk and in the WAL) and `support` (errors, settings, the clock, conversions).
mod recovery;
mod server;
mod sql;
mod support;

use recovery::{partition_mistakes, pg_upgrade_carry, replay};
use sql::{partition_watch, time_predicates};
use support::settings;

// Shared memory is requested through shmem_request_hook and sorts use ssup_datum_unsigned_cmp,
// both new in PostgreSQL 15.
#[cfg(any(feature = "pg13", feature = "pg14"))]
compile_error!("sno needs PostgreSQL 15 or later");

pgrx::pg_module_magic!();

/// Runs when the library is loaded. Only when it is preloaded (shared_preload_libraries) can it
/// reserve shared memory and define server-wide settings; loaded later, by CREATE EXTENSION,
/// the type works and sno_generate explains what is missing.
#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    pg_upgrade_carry::carry_state_across_pg_upgrade();
    time_predicates::install();
    // SAFETY: a plain read of a flag PostgreSQL sets while preloading libraries.
    if unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress } {
        settings::define();
        partition_mistakes::warn_if_copy_starts_as_primary();
        server::shared_memory::install_hooks();
        replay::register_resource_manager();
        partition_watch::register();
        server::renewer::register();
        server::instance::make();
        server::lease_holder::register();
        // Calibrates the counter here in the postmaster, so that backends inherit the rate
        // instead of each spending 2 ms on it at its first ID.
        log_how_runs_are_timed();
    }
}

/// Says at start-up whether sessions time their runs of sequences with the CPU's counter or read
/// the clock for every ID (docs/generator.md, "Clock reads").
fn log_how_runs_are_timed() {
    match crate::clock::RealtimeClock::timer_ticks_per_ns() {
        Some(rate) => pgrx::log!(
            "sno: timing runs of sequences with the CPU's time-stamp counter ({rate:.3} GHz)"
        ),
        None => pgrx::log!(
            "sno: no usable time-stamp counter (x86_64 with an invariant TSC that the kernel uses \
             as its clocksource); every ID reads the clock"
        ),
    }
}

// pgrx's record of the SQL that creates the type (read only by cargo-pgrx's schema generation,
// which sno does not use: scripts/sql-scripts.sh assembles the scripts).
pgrx::extension_sql_file!(
    "../../sql/parts/type.sql",
    name = "sno_sql",
    creates = [Type(crate::id::Sno)]
);
