//! Carrying the generator's state file across `pg_upgrade`.
//!
//! pg_upgrade moves relations to the new cluster, not the other files of the data directory, so
//! the new cluster would start without `sno_generator.state`: with its clock behind IDs the old
//! cluster made (an NTP step, a new machine's clock), it could make them again. No operator step
//! is needed instead, because pg_upgrade starts both servers in binary-upgrade mode with sno
//! loaded, and logs both into one file in the new data directory
//! (`pg_upgrade_output.d/<run>/log/pg_upgrade_server.log`, PostgreSQL 15+):
//!
//! - the old server, started first (and stopped cleanly, so its file is exact), writes its
//!   state into that log, on one line of its own;
//! - the new server, started after it, finds that line and records a state that covers both its
//!   own (if any) and the old cluster's, before its generator starts.
//!
//! Both run the same code: each reports its own state and takes what another data directory
//! reported. A rerun of pg_upgrade, or `pg_upgrade --check` first, only takes the same or a
//! newer state again. The line is written from `_PG_init` while the library is preloaded, before
//! the server's logging collector starts, so it reaches that log whatever the cluster's logging
//! settings.

use super::functions::format_unix_millis;
use super::state_file::{self, State};
use crate::persisted::{from_line, parse_report, to_line, REPORT_MARKER};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::CStr;
use std::fs;
use std::io;

/// pg_upgrade's output in the new data directory: one subdirectory per run.
const OUTPUT_DIR: &str = "pg_upgrade_output.d";
/// Within a run's directory: where both servers' output goes.
const SERVER_LOG: &str = "log/pg_upgrade_server.log";
/// What an operator does where the state could not be carried.
const COPY_BY_HAND: &str = "copy the old data directory's sno_generator.state into this one \
                            before this cluster generates any IDs";

/// In a server that pg_upgrade started (binary-upgrade mode): reports this data directory's state
/// and takes in the old cluster's. Elsewhere, nothing. Call from `_PG_init`.
pub(super) fn carry_state_across_pg_upgrade() {
    // SAFETY: plain reads of globals set from the command line before any library loads.
    let (binary_upgrade, data_dir) = unsafe { (pg_sys::IsBinaryUpgrade, pg_sys::DataDir) };
    if !binary_upgrade || data_dir.is_null() {
        return;
    }
    // SAFETY: DataDir is a NUL-terminated absolute path once set.
    let own = unsafe { CStr::from_ptr(data_dir) }
        .to_string_lossy()
        .into_owned();
    let own_state = state_file::read();
    report_own_state(&own, &own_state);
    take_state_reported_by_others(&own, &own_state);
}

fn report_own_state(own: &str, own_state: &io::Result<Option<State>>) {
    let state = match own_state {
        Ok(Some(state)) => to_line(state),
        Ok(None) => "none".into(),
        Err(error) => format!("unreadable ({error})"),
    };
    log!("{REPORT_MARKER}\"{own}\": {state}");
}

/// What other data directories reported, in the logs of every pg_upgrade run kept in this one.
fn reports_from_others(own: &str) -> Vec<(String, String)> {
    let Ok(runs) = fs::read_dir(OUTPUT_DIR) else {
        return Vec::new();
    };
    let mut reports = Vec::new();
    for run in runs.flatten() {
        let Ok(log) = fs::read_to_string(run.path().join(SERVER_LOG)) else {
            continue;
        };
        reports.extend(
            log.lines()
                .filter_map(parse_report)
                .filter(|(dir, _)| dir != own),
        );
    }
    reports
}

fn take_state_reported_by_others(own: &str, own_state: &io::Result<Option<State>>) {
    let reports = reports_from_others(own);
    if reports.is_empty() {
        if fs::metadata(OUTPUT_DIR).is_ok() {
            warning!(
                "sno: pg_upgrade: the old cluster's server reported no sno generator state; if \
                 it generated IDs, {COPY_BY_HAND}"
            );
        }
        return;
    }
    let mut carried: Option<State> = None;
    let mut carried_from = Vec::new();
    for (dir, report) in &reports {
        if report == "none" {
            continue;
        }
        match from_line(report) {
            Some(state) => {
                carried = Some(match carried {
                    Some(known) => known.covering(&state),
                    None => state,
                });
                carried_from.push(format!("\"{dir}\""));
            }
            None => warning!(
                "sno: pg_upgrade: could not use the generator state of \"{dir}\": {report}; \
                 {COPY_BY_HAND}"
            ),
        }
    }
    match carried {
        Some(state) => record(&state, own_state, &carried_from.join(", ")),
        None => log!("sno: pg_upgrade: the old cluster recorded no generator state; none to carry"),
    }
}

/// Records `carried` joined with this data directory's own state.
fn record(carried: &State, own_state: &io::Result<Option<State>>, old_dirs: &str) {
    let state = match own_state {
        Ok(Some(own)) => {
            let state = own.covering(carried);
            if state == *own {
                return; // a later start of the same pg_upgrade run: already recorded
            }
            state
        }
        Ok(None) => carried.clone(),
        Err(error) => {
            warning!(
                "sno: pg_upgrade: could not read {}, so the old cluster's generator state was \
                 not added to it: {error}",
                state_file::PATH
            );
            return;
        }
    };
    match state_file::write(&state) {
        Ok(()) => log!(
            "sno: pg_upgrade: {} now covers the IDs of {old_dirs} (made through {})",
            state_file::PATH,
            format_unix_millis(state.live.wall_hi.to_unix_millis())
        ),
        Err(error) => warning!(
            "sno: pg_upgrade: could not write {}: {error}; {COPY_BY_HAND}",
            state_file::PATH
        ),
    }
}
