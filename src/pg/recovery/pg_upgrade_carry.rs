//! Carrying the generator's state file across `pg_upgrade`.
//!
//! pg_upgrade moves relations to the new cluster, not the other files of the data directory, so
//! the new cluster would start without `sno_generator.state`: with its clock behind IDs the old
//! cluster made (an NTP step, a new machine's clock), it could make them again. No operator step
//! is needed instead: pg_upgrade starts the new server in binary-upgrade mode with sno loaded,
//! and that server reads the old data directory's state file itself, by path, and records a state
//! that covers both its own (if any) and the old cluster's before its generator starts.
//!
//! # Where the old data directory comes from
//!
//! Not from anything a server logs: pg_upgrade's server log
//! (`pg_upgrade_output.d/<run>/log/pg_upgrade_server.log` in the new data directory, PostgreSQL
//! 15+) also receives every message of the old server during the upgrade, including text that
//! database roles choose (a database's settings echoed in a FATAL, a WARNING). What the new
//! server takes is pg_upgrade's own record of the command that started the old server, which
//! pg_upgrade writes before it runs it (`exec_prog`): the first command line of the run's log,
//! written before any server ran. The run is the one whose log is this server's standard error
//! (pg_ctl's `-l`): so the old server, whose standard error is also that log but which has none
//! of it in its own data directory, carries nothing (even where an upgrade of its own left a
//! `pg_upgrade_output.d` behind), and neither do the logs of earlier runs kept with `--retain`
//! or after a failure. The state itself comes from the old data directory's file, which only
//! the server's OS user writes.
//!
//! # When the carry fails
//!
//! No start line of another directory first (a format this build does not know, or the new
//! server started first, as pg_upgrade does when the new cluster has a stale
//! `postmaster.pid`), a directory that is neither a data directory nor a configuration directory
//! naming one, a relative path it cannot resolve, an old state file it cannot read or use, or
//! one that reaches implausibly far past the clock ([`PLAUSIBLE_AHEAD_MS`]): the new cluster
//! cannot know how far the old cluster's IDs went, so it does not guess. It writes a state file
//! that says why, and `sno_generate` and `sno_generate_at` raise an error naming the reason, at
//! every call and after every restart (the server log says it at every start too), until an
//! operator copies the old data directory's file over it or removes it. A log line alone would
//! be lost with pg_upgrade's log, which pg_upgrade deletes when it succeeds; generating anyway
//! could repeat old IDs. No database role can bring this about: every input is pg_upgrade's or
//! the OS user's.
//!
//! What an operator does, before and after: docs/upgrading.md.

use crate::clock::Clock;
use crate::persisted::STATE_FILE;
use crate::persisted::{first_server_start, ServerStart};
use crate::pg::server::state_file::{self, State};
use crate::pg::support::errors;
use crate::pg::support::server_clock::ServerClock;
use crate::pg::support::timestamps::format_unix_millis;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::{CStr, OsStr};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Component, Path, PathBuf};

/// pg_upgrade's output in the new data directory: one subdirectory per run.
const OUTPUT_DIR: &str = "pg_upgrade_output.d";
/// Within a run's directory: where pg_upgrade logs its server commands and both servers' output.
const SERVER_LOG: &str = "log/pg_upgrade_server.log";
/// Within a run's directory: where pg_upgrade dumps the old cluster's schema, and the first dump
/// it writes there. An upgrade writes it before it starts the new server; `pg_upgrade --check`
/// creates the directory and dumps nothing.
const DUMP_DIR: &str = "dump";
const GLOBALS_DUMP: &str = "pg_upgrade_dump_globals.sql";

/// How far past this server's clock a carried state may reach: one day. pg_upgrade runs the old
/// server on this machine minutes before the new one, and the old server writes its file at
/// most a 10 s look-ahead past its clock; a state further ahead means the clock was set back
/// by that much while the old cluster ran. Hours are plausible (a hardware clock read in the
/// wrong time zone is up to 14 h off); a state a day or more ahead is a damaged or forged file,
/// and taking it would leave the generator waiting until then.
const PLAUSIBLE_AHEAD_MS: i64 = 24 * 60 * 60 * 1000;

/// In the new server that pg_upgrade started (binary-upgrade mode, its standard error a run's
/// log in this data directory): takes in the old cluster's state. Elsewhere, the old server
/// included, nothing. Call from `_PG_init`.
pub(crate) fn carry_state_across_pg_upgrade() {
    // SAFETY: plain reads of globals set from the command line before any library loads.
    let (binary_upgrade, data_dir) = unsafe { (pg_sys::IsBinaryUpgrade, pg_sys::DataDir) };
    if !binary_upgrade || data_dir.is_null() {
        return;
    }
    let Some(run_log) = this_runs_log() else {
        return;
    };
    if is_check_only(&run_log) {
        // A check changes nothing in the new cluster, and the upgrade then carries (and logs)
        // the state of the old cluster as it is by then.
        log!(
            "sno: pg_upgrade --check: the old cluster's generator state is carried by the \
             upgrade itself, not by the check"
        );
        return;
    }
    // Where sno is not preloaded in the new cluster, each backend that loads it (pg_restore's
    // CREATE EXTENSION, one per database, in parallel with --jobs) carries too: one at a time.
    let Some(_one_at_a_time) = lock_exclusively(&run_log) else {
        return;
    };
    // SAFETY: DataDir is a NUL-terminated absolute path once set.
    let own = PathBuf::from(OsStr::from_bytes(
        unsafe { CStr::from_ptr(data_dir) }.to_bytes(),
    ));
    let own_state = match state_file::read_own_state_for_upgrade() {
        Ok(own_state) => own_state,
        Err(error) => {
            // Generation is off already, with this error, until the file is fixed.
            warning!(
                "sno: pg_upgrade: the old cluster's generator state was not added to {}: {error}",
                STATE_FILE
            );
            return;
        }
    };
    let old = old_data_dir(&own, &run_log)
        .and_then(|named| data_dir_of(&named))
        .and_then(|dir| read_old_state(&dir).map(|state| (dir, state)));
    match old {
        Ok((dir, state)) => record(own_state.as_ref(), &dir, state.as_ref()),
        Err(reason) => refuse(own_state.as_ref(), &reason),
    }
}

/// The server log of the pg_upgrade run in this data directory that started this server: the
/// run's log that is also this process's standard error, where pg_ctl's `-l` sent it (the
/// logging collector, if any, takes it over only after the libraries are loaded).
fn this_runs_log() -> Option<PathBuf> {
    // SAFETY: fstat of a descriptor number into a zeroed struct; failure is handled.
    let stderr = unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        (libc::fstat(2, &mut stat) == 0).then_some(stat)
    }?;
    fs::read_dir(OUTPUT_DIR)
        .ok()?
        .flatten()
        .map(|run| run.path().join(SERVER_LOG))
        .find(|log| {
            fs::metadata(log).is_ok_and(|meta| {
                meta.dev() == stderr.st_dev as u64 && meta.ino() == stderr.st_ino as u64
            })
        })
}

/// Whether the run is a `pg_upgrade --check`: its dump directory is there, without the dump
/// that an upgrade writes before it starts this server. A layout this build does not know
/// (no dump directory) counts as an upgrade, which carries.
fn is_check_only(run_log: &Path) -> bool {
    let Some(run_dir) = run_log.ancestors().nth(2) else {
        return false;
    };
    let dump_dir = run_dir.join(DUMP_DIR);
    dump_dir.is_dir() && !dump_dir.join(GLOBALS_DUMP).exists()
}

/// The run's log, open and locked (`flock`) until dropped; pg_upgrade's appends do not lock.
fn lock_exclusively(run_log: &Path) -> Option<fs::File> {
    let file = fs::File::open(run_log).ok()?;
    // SAFETY: flock on a descriptor this function owns; released when the file is closed.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0;
    locked.then_some(file)
}

/// The data directory of the server that pg_upgrade started first in this run, if it is not
/// this one (see `first_server_start`), or why there is none.
fn old_data_dir(own: &Path, run_log: &Path) -> Result<PathBuf, String> {
    let log = head_of(run_log)
        .map_err(|error| format!("could not read {}: {error}", run_log.display()))?;
    let Some(start) = first_server_start(&log) else {
        return Err(format!(
            "the first command in {} is not a server start this build knows",
            run_log.display()
        ));
    };
    let dir = resolve(own, run_log, &start).ok_or_else(|| {
        format!(
            "{} names the old data directory as {:?}, a relative path this server cannot resolve",
            run_log.display(),
            OsStr::from_bytes(start.dir)
        )
    })?;
    if dir == own {
        return Err(format!(
            "pg_upgrade started this server before the old cluster's ({} names it first)",
            run_log.display()
        ));
    }
    Ok(dir)
}

/// How much of a run's log the carry reads: pg_upgrade's header and its first command line come
/// first, in well under a kilobyte; the rest (both servers' output, which may be long) is never
/// needed.
const LOG_HEAD_BYTES: u64 = 64 * 1024;

fn head_of(run_log: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::new();
    fs::File::open(run_log)?
        .take(LOG_HEAD_BYTES)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// The absolute path of the directory a server start names. A relative one is relative to
/// pg_upgrade's working directory: what remains of this data directory's path once the new data
/// directory as pg_upgrade spelled it (the start's log path, less `run_log`) is taken off its
/// end.
fn resolve(own: &Path, run_log: &Path, start: &ServerStart) -> Option<PathBuf> {
    let dir = Path::new(OsStr::from_bytes(start.dir));
    if dir.is_absolute() {
        return Some(normal(dir));
    }
    let log = normal(Path::new(OsStr::from_bytes(start.log)));
    if !log.ends_with(run_log) {
        return None;
    }
    let new_data_dir = log.ancestors().nth(run_log.components().count())?;
    if new_data_dir.is_absolute() {
        return None;
    }
    let mut working_dir = own.to_path_buf();
    for _ in new_data_dir.components() {
        working_dir.pop();
    }
    (working_dir.join(new_data_dir) == own).then(|| normal(&working_dir.join(dir)))
}

/// `path` without `.` components and repeated or trailing separators; `..` stays.
fn normal(path: &Path) -> PathBuf {
    path.components()
        .filter(|component| *component != Component::CurDir)
        .collect()
}

/// The data directory of the directory pg_upgrade was given, found as pg_upgrade finds it: that
/// directory, or where it holds the configuration only (Debian's `pg_upgradecluster` passes
/// `/etc/postgresql/MAJOR/CLUSTER`), the `data_directory` its `postgresql.conf` sets, read by
/// PostgreSQL's own parser with its includes, as `postgres -D DIR -C data_directory` (which
/// pg_upgrade runs) reads it. Those files are the OS user's, as the data directory is.
fn data_dir_of(named: &Path) -> Result<PathBuf, String> {
    if named.join("PG_VERSION").is_file() {
        return Ok(named.to_path_buf());
    }
    let conf = named.join("postgresql.conf");
    if !conf.is_file() {
        return Err(format!(
            "{} is neither a data directory nor a configuration directory",
            named.display()
        ));
    }
    let Some(setting) = data_directory_setting(&conf) else {
        return Err(format!(
            "{} sets no data_directory (or could not be read; the log says why)",
            conf.display()
        ));
    };
    let dir = Path::new(&setting);
    if !dir.is_absolute() {
        return Err(format!(
            "{} sets data_directory to {setting:?}, a relative path",
            conf.display()
        ));
    }
    let dir = normal(dir);
    if !dir.join("PG_VERSION").is_file() {
        return Err(format!(
            "{} sets data_directory to {}, which is not a data directory",
            conf.display(),
            dir.display()
        ));
    }
    Ok(dir)
}

/// The last value a configuration file and its includes give `data_directory`, if any.
fn data_directory_setting(conf: &Path) -> Option<String> {
    let path = std::ffi::CString::new(conf.as_os_str().as_bytes()).ok()?;
    let mut head = std::ptr::null_mut();
    let mut tail = std::ptr::null_mut();
    // SAFETY: PostgreSQL's parser of configuration files, with a NUL-terminated path; it reports
    // what it cannot read at LOG and returns false, and the list it builds is freed below.
    let parsed = unsafe {
        pg_sys::ParseConfigFile(
            path.as_ptr(),
            true,
            std::ptr::null(),
            0,
            0,
            pg_sys::LOG as i32,
            &mut head,
            &mut tail,
        )
    };
    let mut found = None;
    let mut item = head;
    while !item.is_null() {
        // SAFETY: a list the parser built: NUL-terminated names and values, ended by null.
        let variable = unsafe { &*item };
        let name = unsafe { CStr::from_ptr(variable.name) };
        if name.to_bytes().eq_ignore_ascii_case(b"data_directory") {
            let value = unsafe { CStr::from_ptr(variable.value) };
            found = Some(value.to_string_lossy().into_owned());
        }
        item = variable.next;
    }
    // SAFETY: the list built above, not used again.
    unsafe { pg_sys::FreeConfigVariables(head) };
    if parsed {
        found
    } else {
        None
    }
}

/// The old data directory's state, `None` if it has no state file.
fn read_old_state(old: &Path) -> Result<Option<State>, String> {
    let path = old.join(STATE_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("could not read {}: {error}", path.display())),
    };
    let state = crate::persisted::parse(&text)
        .ok_or_else(|| format!("{} is not a valid sno state file", path.display()))?;
    let now = ServerClock.unix_millis();
    let reach = state
        .live
        .through
        .max(state.live.other_through)
        .to_unix_millis();
    if reach > now.saturating_add(PLAUSIBLE_AHEAD_MS) {
        return Err(format!(
            "{} reaches {}, more than a day past this server's clock ({}): a damaged file, or a \
             clock that was that far ahead",
            path.display(),
            format_unix_millis(reach),
            format_unix_millis(now)
        ));
    }
    Ok(Some(state))
}

/// Records the old cluster's state joined with this data directory's own.
fn record(own: Option<&State>, old_dir: &Path, old: Option<&State>) {
    let Some(old) = old else {
        log!(
            "sno: pg_upgrade: the old cluster ({}) recorded no generator state; none to carry",
            old_dir.display()
        );
        return match own {
            Some(own) => write(own, "this data directory"),
            None => clear_refusal(),
        };
    };
    let state = own.map_or_else(|| old.clone(), |own| own.covering(old));
    write(&state, &format!("\"{}\"", old_dir.display()));
}

/// Writes `state` unless the file already holds it (a later start of the same pg_upgrade run).
fn write(state: &State, covering: &str) {
    if state_file::read().is_ok_and(|recorded| recorded.as_ref() == Some(state)) {
        return;
    }
    match state_file::write(state) {
        Ok(()) => log!(
            "sno: pg_upgrade: {} now covers the IDs of {covering} (made through {})",
            STATE_FILE,
            format_unix_millis(state.live.through.to_unix_millis())
        ),
        Err(error) => refuse(
            Some(state),
            &format!("could not write {}: {error}", STATE_FILE),
        ),
    }
}

/// Where nothing was carried and this data directory has no state of its own: a file that an
/// earlier start of the run left refusing goes.
fn clear_refusal() {
    if state_file::read().is_err() {
        if let Err(error) = fs::remove_file(STATE_FILE) {
            warning!("sno: pg_upgrade: could not remove {}: {error}", STATE_FILE);
        }
    }
}

/// Turns generation off until an operator decides, saying why (see the module documentation).
fn refuse(own: Option<&State>, reason: &str) {
    warning!(
        "sno: pg_upgrade: the old cluster's generator state was not carried into this one: \
         {reason}; sno_generate and sno_generate_at raise an error until {} is replaced by the \
         old data directory's, or removed",
        STATE_FILE
    );
    if let Err(error) = state_file::write_carry_failed(own, reason) {
        // Nothing would keep the upgraded cluster from generating: this server does not start,
        // so pg_upgrade stops here, and says so.
        errors::carry_not_recorded(reason, &error);
    }
}
