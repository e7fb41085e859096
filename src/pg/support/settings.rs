//! The `sno.*` settings: which partition and sequences the server's generator uses.
//!
//! They decide uniqueness for every session, so they are `PGC_SIGHUP`: set in postgresql.conf
//! (or with ALTER SYSTEM) and applied by a reload, never by `SET` in a session.
//!
//! Each backend applies a reload on its next `sno_generate` call. A backend that has not yet
//! processed the latest reload must not undo it: one with a reload signal still pending holds
//! older values, and leaves the shared settings alone until it has read the files again. (An
//! earlier version ordered reloads by `pg_conf_load_time()`, a wall-clock time, and so dropped
//! every reload made after the clock stepped back, until the clock caught up.)

use crate::generator::{Config, PoolTooSmall};
use crate::pg::support::backend_local::BackendLocal;
use crate::pg::support::errors;
use pgrx::{pg_sys, GucContext, GucFlags, GucRegistry, GucSetting};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// -1: not set; the partition is derived from the cluster's system identifier.
static PARTITION: GucSetting<i32> = GucSetting::<i32>::new(-1);
static SEQUENCE_MIN: GucSetting<i32> = GucSetting::<i32>::new(0);
static SEQUENCE_MAX: GucSetting<i32> = GucSetting::<i32>::new(65535);
/// -1: not set; sno_generate_at refuses to run.
static BACKFILL_PARTITION: GucSetting<i32> = GucSetting::<i32>::new(-1);
/// Seconds between the partition watch's checks of a Citus cluster (`partition_watch`); 0: off.
static CITUS_WATCH_INTERVAL: GucSetting<i32> = GucSetting::<i32>::new(60);

/// Registers the settings; only while shared_preload_libraries is being processed.
pub(crate) fn define() {
    let configured = configured_text(c"sno.partition");
    GucRegistry::define_int_guc(
        c"sno.partition",
        c"Partition stamped into every ID sno_generate makes (-1: derived from the system identifier).",
        c"Servers that generate IDs for the same data must use different partitions, or share one \
          with disjoint sequence ranges. Clones made with pg_basebackup share the system \
          identifier, so multi-writer set-ups must set this.",
        &PARTITION,
        -1,
        65535,
        GucContext::Sighup,
        GucFlags::default(),
    );
    note_if_refused(c"sno.partition", configured, &PARTITION);
    let configured = configured_text(c"sno.sequence_min");
    GucRegistry::define_int_guc(
        c"sno.sequence_min",
        c"Lowest sequence sno_generate uses in each 4 ms unit.",
        c"With sno.sequence_max, lets several servers share one partition by splitting the \
          65,536 sequences of a unit (sequence sharding). The pool must hold at least 4.",
        &SEQUENCE_MIN,
        0,
        65535,
        GucContext::Sighup,
        GucFlags::default(),
    );
    note_if_refused(c"sno.sequence_min", configured, &SEQUENCE_MIN);
    let configured = configured_text(c"sno.sequence_max");
    GucRegistry::define_int_guc(
        c"sno.sequence_max",
        c"Highest sequence sno_generate uses in each 4 ms unit.",
        c"See sno.sequence_min. When a unit's pool is spent, sno_generate waits for the next unit.",
        &SEQUENCE_MAX,
        0,
        65535,
        GucContext::Sighup,
        GucFlags::default(),
    );
    note_if_refused(c"sno.sequence_max", configured, &SEQUENCE_MAX);
    GucRegistry::define_int_guc(
        c"sno.backfill_partition",
        c"Partition stamped into the IDs sno_generate_at makes (-1: not set, sno_generate_at refuses).",
        c"Backfill IDs must not meet live IDs, so they carry a partition that no server uses for \
          sno.partition, nor another server for sno.backfill_partition.",
        &BACKFILL_PARTITION,
        -1,
        65535,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"sno.citus_watch_interval",
        c"How often a Citus coordinator compares the partitions of its nodes on its own (0: never).",
        c"Only with citus in shared_preload_libraries. Two nodes that could make the same ID are \
          reported by a WARNING in the log at every check and in sno_partition_watch().",
        &CITUS_WATCH_INTERVAL,
        0,
        86_400,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    test_only::define();
    // SAFETY: a plain call during preload; reserves the "sno." prefix for these settings.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"sno".as_ptr()) };
}

/// The text the configuration files give a setting before it is defined (PostgreSQL keeps it in
/// a placeholder until then), if they give one.
fn configured_text(name: &CStr) -> Option<String> {
    // SAFETY: a plain lookup; missing_ok, so NULL when nothing set it.
    let text = unsafe { pg_sys::GetConfigOption(name.as_ptr(), true, false) };
    // SAFETY: a NUL-terminated string owned by the GUC machinery, copied at once.
    (!text.is_null()).then(|| {
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    })
}

/// Remembers a setting whose configured text PostgreSQL refused when sno defined it (a value out
/// of range, or not a number): PostgreSQL then only warns and uses the default, but the generator
/// must not make IDs with a partition or a range the operator did not choose.
fn note_if_refused(name: &CStr, configured: Option<String>, setting: &GucSetting<i32>) {
    let Some(text) = configured else {
        return;
    };
    let Ok(c_text) = CString::new(text.as_str()) else {
        return;
    };
    let mut value = 0;
    // SAFETY: parse_int reads the string and writes the int; no hint is asked for.
    let parsed = unsafe { pg_sys::parse_int(c_text.as_ptr(), &mut value, 0, std::ptr::null_mut()) };
    if parsed && value == setting.get() {
        return;
    }
    let reason = format!(
        "{} = '{text}' in the configuration files is not a valid value, so PostgreSQL uses {} \
         instead",
        name.to_string_lossy(),
        setting.get()
    );
    let _ = REFUSED_AT_START.set(reason);
}

/// The first sno setting PostgreSQL refused at start-up (`note_if_refused`). Set in the
/// postmaster while sno is loaded, inherited by every backend; a reload does not clear it, since
/// PostgreSQL does not say whether a later value came from the files.
static REFUSED_AT_START: OnceLock<String> = OnceLock::new();

/// Why the settings cannot be used until a restart, if PostgreSQL refused one at start-up.
pub(crate) fn refused_at_start() -> Option<&'static str> {
    REFUSED_AT_START.get().map(String::as_str)
}

/// The partition when `sno.partition` is not set: 16 well-mixed bits of the system identifier,
/// stable for the life of the cluster.
pub(crate) fn derived_partition() -> u16 {
    // SAFETY: the control file is loaded before shared memory is set up, and in every backend.
    let identifier = unsafe { pg_sys::GetSystemIdentifier() };
    (identifier.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as u16
}

pub(crate) fn partition_is_set() -> bool {
    PARTITION.get() >= 0
}

/// The partition for backfill IDs, if one is set.
pub(crate) fn backfill_partition() -> Option<u16> {
    u16::try_from(BACKFILL_PARTITION.get()).ok()
}

/// How long the partition watch waits between checks; `None` when it is off.
pub(crate) fn citus_watch_interval() -> Option<std::time::Duration> {
    let seconds = CITUS_WATCH_INTERVAL.get();
    (seconds > 0).then(|| std::time::Duration::from_secs(seconds as u64))
}

/// The partition the settings of this process ask for: `sno.partition`, or the derived one.
pub(crate) fn requested_partition() -> u16 {
    u16::try_from(PARTITION.get()).unwrap_or_else(|_| derived_partition())
}

/// The configuration the settings of this process ask for.
pub(crate) fn requested() -> Result<Config, PoolTooSmall> {
    // The GUC ranges keep both within 0..=65535.
    Config::new(requested_partition())
        .with_sequence_bounds(SEQUENCE_MIN.get() as u16, SEQUENCE_MAX.get() as u16)
}

/// The configuration that shared memory starts with when the settings in force cannot work.
pub(crate) struct Unusable {
    /// What the generator holds meanwhile: it issues nothing while the settings are unusable.
    pub placeholder: Config,
    /// Why the settings cannot work, naming them.
    pub reason: String,
}

/// The last configuration the generator worked with, kept in the postmaster's own memory
/// (which a crash restart does not reset), packed as `1 << 48 | partition << 32 | min << 16 |
/// max`; 0 before the first one.
static LAST_WORKING: AtomicU64 = AtomicU64::new(0);

/// Remembers the configuration of a generator that worked, for a later crash restart.
/// Postmaster only: when shared memory is made, and when it is given up after a crash.
pub(crate) fn remember_working(config: Config) {
    let packed = 1 << 48
        | u64::from(config.partition) << 32
        | u64::from(config.sequence_min) << 16
        | u64::from(config.sequence_max);
    LAST_WORKING.store(packed, Ordering::Relaxed);
}

fn last_working() -> Option<Config> {
    let packed = LAST_WORKING.load(Ordering::Relaxed);
    let field = |shift: u32| (packed >> shift) as u16;
    (packed != 0).then(|| {
        Config::new(field(32))
            .with_sequence_bounds(field(16), field(0))
            .expect("only working configurations are remembered")
    })
}

/// The configuration for new shared memory, in the postmaster. No value stops the server, as
/// none of PostgreSQL's own does after a reload: at a crash restart, settings reloaded since
/// that cannot work give way to the last ones that did (with a WARNING); at the first start
/// there are none, so the generator is off until the settings are fixed and reloaded (see
/// `Shared::recover_generation`), and everything else works.
pub(crate) fn for_new_shared_memory() -> Result<Config, Unusable> {
    if let Some(reason) = refused_at_start() {
        return Err(Unusable {
            placeholder: Config::new(requested_partition()),
            reason: reason.to_string(),
        });
    }
    let error = match requested() {
        Ok(config) => {
            remember_working(config);
            return Ok(config);
        }
        Err(error) => error,
    };
    let reason = pool_message(&error);
    match last_working() {
        Some(kept) => {
            errors::settings_kept_after_crash(&reason, kept);
            Ok(kept)
        }
        None => Err(Unusable {
            placeholder: Config::new(requested_partition()),
            reason,
        }),
    }
}

/// When this process last read its configuration files: only compared for equality, never
/// for order, since it is a wall-clock time.
fn reload_time() -> i64 {
    // SAFETY: a plain read of a process-local global.
    unsafe { pg_sys::PgReloadTime }
}

/// Whether a reload signal reached this process that it has not acted on yet: its settings
/// may then be older than another process's.
pub(crate) fn reload_pending() -> bool {
    // SAFETY: a plain read of a flag the SIGHUP handler sets.
    unsafe { std::ptr::read_volatile(&raw const pg_sys::ConfigReloadPending) != 0 }
}

/// The reload this backend last applied or warned about.
static HANDLED_RELOAD: BackendLocal<i64> = BackendLocal::new(i64::MIN);

/// Whether this backend read its configuration again since it last looked.
pub(crate) fn reloaded_since_last_look() -> bool {
    let now = reload_time();
    HANDLED_RELOAD.replace(now) != now
}

pub(crate) fn pool_message(error: &PoolTooSmall) -> String {
    format!(
        "sno.sequence_min = {} and sno.sequence_max = {} leave a pool of {} sequences per 4 ms; \
         at least {} are needed",
        error.sequence_min,
        error.sequence_max,
        error.pool(),
        crate::generator::MIN_POOL
    )
}

/// Settings that only test builds have: a clock offset, to steer the generator's clock from
/// SQL, and a delay in writes of the state file, to stand for a slow disk.
#[cfg(feature = "test-clock")]
pub(crate) mod test_only {
    use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

    static OFFSET_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
    static STATE_WRITE_DELAY_MS: GucSetting<i32> = GucSetting::<i32>::new(0);

    pub fn define() {
        GucRegistry::define_int_guc(
            c"sno.test_clock_offset_ms",
            c"TEST BUILDS ONLY: milliseconds added to the clock sno_generate reads.",
            c"Lets tests move the generator's clock back and forth. Not in released builds.",
            &OFFSET_MS,
            i32::MIN,
            i32::MAX,
            GucContext::Suset,
            GucFlags::default(),
        );
        GucRegistry::define_int_guc(
            c"sno.test_state_write_delay_ms",
            c"TEST BUILDS ONLY: milliseconds this session sleeps in each write of the state file.",
            c"Lets tests show who waits for a slow disk. Not in released builds.",
            &STATE_WRITE_DELAY_MS,
            0,
            60_000,
            GucContext::Suset,
            GucFlags::default(),
        );
    }

    pub fn offset_ms() -> i64 {
        OFFSET_MS.get() as i64
    }

    /// Sleeps as long as `sno.test_state_write_delay_ms` says, as a slow disk would.
    pub fn delay_state_write() {
        let millis = STATE_WRITE_DELAY_MS.get();
        if millis > 0 {
            // SAFETY: a plain sleep.
            unsafe { pgrx::pg_sys::pg_usleep(i64::from(millis) * 1000) };
        }
    }
}

#[cfg(not(feature = "test-clock"))]
pub(crate) mod test_only {
    pub fn define() {}

    #[inline(always)]
    pub fn offset_ms() -> i64 {
        0
    }

    pub fn delay_state_write() {}
}
