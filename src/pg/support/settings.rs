//! The `sno.*` settings: which partition and sequences the server's generator uses.
//!
//! They decide uniqueness for every session, so they are `PGC_SIGHUP`: set in postgresql.conf
//! (or with ALTER SYSTEM) and applied by a reload, never by `SET` in a session. Where the
//! partition comes from (`sno.partition_source`, with `sno.partition_offset`) is decided at
//! start-up (`PGC_POSTMASTER`): a partition that changed source under running sessions could
//! meet another server's.
//!
//! Each backend applies a reload on its next `sno_generate` call. A backend that has not yet
//! processed the latest reload must not undo it: one with a reload signal still pending holds
//! older values, and leaves the shared settings alone until it has read the files again. (An
//! earlier version ordered reloads by `pg_conf_load_time()`, a wall-clock time, and so dropped
//! every reload made after the clock stepped back, until the clock caught up.)

use crate::generator::{Config, PoolTooSmall};
use crate::pg::support::backend_local::BackendLocal;
use crate::pg::support::errors;
use pgrx::{pg_sys, GucCheckError, GucContext, GucFlags, GucRegistry, GucSetting, PostgresGucEnum};
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
static PARTITION_SOURCE: GucSetting<PartitionSource> =
    GucSetting::<PartitionSource>::new(PartitionSource::Setting);
/// Added to the Citus group to make the partition (`sno.partition_source = 'citus'`).
static PARTITION_OFFSET: GucSetting<i32> = GucSetting::<i32>::new(0);
/// The libpq connection string of the partition registry (`sno.partition_source = 'registry'`).
static PARTITION_REGISTRY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
/// Seconds a partition lease from the registry lasts.
static PARTITION_LEASE: GucSetting<i32> = GucSetting::<i32>::new(60);

/// Where the live generator's partition comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PostgresGucEnum)]
pub(crate) enum PartitionSource {
    /// `sno.partition`, or derived from the system identifier when it is not set.
    #[name = c"setting"]
    Setting,
    /// The node's Citus group (`pg_dist_local_group`) plus `sno.partition_offset`: no two nodes
    /// of one Citus cluster share it, and a standby shares its primary's.
    #[name = c"citus"]
    Citus,
    /// A lease from the partition registry (`sno.partition_registry`), claimed and renewed by a
    /// background worker; none is used past its lease.
    #[name = c"registry"]
    Registry,
}

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
    GucRegistry::define_enum_guc(
        c"sno.partition_source",
        c"Where the partition of sno_generate's IDs comes from: setting, citus or registry.",
        c"setting: sno.partition (derived from the system identifier when not set). citus: the \
          node's Citus group plus sno.partition_offset, recorded in the state file; until the \
          group is known, sno_generate refuses. registry: a lease from the registry that \
          sno.partition_registry names; without one, sno_generate refuses. Needs a restart.",
        &PARTITION_SOURCE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"sno.partition_offset",
        c"Added to the Citus group to make the partition, with sno.partition_source = 'citus'.",
        c"Group ids are unique within one Citus cluster only: give each cluster whose IDs meet \
          an offset of its own. Needs a restart.",
        &PARTITION_OFFSET,
        0,
        65535,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    // SAFETY: the check hook is guarded and only reads the new value.
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"sno.partition_registry",
            c"libpq connection string of the partition registry, with sno.partition_source = 'registry'.",
            c"Any database in which the sno extension is created, as a role granted EXECUTE on \
              sno_lease_claim and sno_lease_renew. It may not hold a password, since PostgreSQL \
              logs a reloaded setting's value: use a password file (passfile=).",
            &PARTITION_REGISTRY,
            GucContext::Sighup,
            GucFlags::SUPERUSER_ONLY,
            Some(check_partition_registry),
            None,
            None,
        );
    }
    GucRegistry::define_int_guc(
        c"sno.partition_lease",
        c"How long a partition lease from the registry lasts; it is renewed every third of it.",
        c"A server that cannot renew stops generating before its lease ends, and a partition \
          whose lease ended may go to another server.",
        &PARTITION_LEASE,
        2,
        3600,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    FROM_REGISTRY.store(
        partition_source() == PartitionSource::Registry,
        Ordering::Relaxed,
    );
    test_only::define();
    // SAFETY: a plain call during preload; reserves the "sno." prefix for these settings.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"sno".as_ptr()) };
}

/// Refuses a registry connection string that gives a password, or that libpq cannot read,
/// without quoting it (PostgreSQL's own message would).
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn check_partition_registry(
    value: *mut *mut std::ffi::c_char,
    _extra: *mut *mut std::ffi::c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes the proposed value, a NUL-terminated string or NULL.
    let value = unsafe { *value };
    if value.is_null() || unsafe { *value } == 0 {
        return true;
    }
    // SAFETY: as above.
    let refusal = match crate::pg::support::libpq::gives_password(unsafe { CStr::from_ptr(value) })
    {
        Ok(Some(false)) => return true,
        Ok(Some(true)) => GucCheckError::new("sno.partition_registry must not give a password")
            .with_hint(
                "PostgreSQL logs a reloaded setting's new value: put the password in a password \
                 file (passfile=..., or ~/.pgpass of the server's OS user).",
            ),
        Ok(None) => GucCheckError::new("sno.partition_registry is not a libpq connection string"),
        Err(failure) => GucCheckError::new(format!(
            "sno.partition_registry cannot be checked: {}",
            failure.message()
        )),
    };
    // SAFETY: a check hook's way to say why.
    unsafe { refusal.apply() };
    false
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

pub(crate) fn partition_source() -> PartitionSource {
    PARTITION_SOURCE.get()
}

/// Whether the partition comes from a lease of the registry: on every ID's path, so a copy of
/// the setting made when it was defined (it only changes with a restart), which backends
/// inherit, rather than `GucSetting::get`, whose check of the calling thread costs more than
/// the rest of the test.
#[inline(always)]
pub(crate) fn partition_from_registry() -> bool {
    FROM_REGISTRY.load(Ordering::Relaxed)
}

static FROM_REGISTRY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The registry's connection string, if one is set.
pub(crate) fn partition_registry() -> Option<CString> {
    PARTITION_REGISTRY
        .get()
        .filter(|conninfo| !conninfo.is_empty())
}

/// How long a lease lasts.
pub(crate) fn partition_lease() -> std::time::Duration {
    std::time::Duration::from_secs(PARTITION_LEASE.get().max(2) as u64)
}

/// Whether `citus` is in `shared_preload_libraries`.
pub(crate) fn citus_preloaded() -> bool {
    // SAFETY: a plain read of a setting that always exists; the string lives as long as it.
    let libraries = unsafe {
        CStr::from_ptr(pg_sys::GetConfigOption(
            c"shared_preload_libraries".as_ptr(),
            false,
            false,
        ))
    };
    libraries.to_string_lossy().split(',').any(|library| {
        let library = library.trim().trim_matches('"');
        let name = library.rsplit('/').next().unwrap_or(library);
        name.strip_suffix(".so").unwrap_or(name) == "citus"
    })
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

/// The partition `sno.partition` asks for, or the derived one.
pub(crate) fn set_partition() -> u16 {
    u16::try_from(PARTITION.get()).unwrap_or_else(|_| derived_partition())
}

/// Why the settings give the generator no configuration.
#[derive(Debug)]
pub(crate) enum NotWorking {
    Pool(PoolTooSmall),
    /// `sno.partition_source = 'citus'` without Citus preloaded: no group can ever be read.
    CitusNotPreloaded,
    /// The Citus group is not known yet; says what generation waits for.
    CitusGroupUnknown(String),
    CitusGroupBeyond {
        group: u32,
        offset: u16,
    },
    /// `sno.partition_source = 'registry'` and no lease is held; says why.
    NoLease(String),
}

impl NotWorking {
    pub(crate) fn message(&self) -> String {
        match self {
            NotWorking::Pool(error) => pool_message(error),
            NotWorking::CitusNotPreloaded => "sno.partition_source = 'citus' but citus is not in \
                 shared_preload_libraries, so no Citus group can be read"
                .to_string(),
            NotWorking::CitusGroupUnknown(why) => {
                format!("sno.partition_source = 'citus' and this node's Citus group is not known yet: {why}")
            }
            NotWorking::CitusGroupBeyond { group, offset } => format!(
                "Citus group {group} plus sno.partition_offset {offset} is beyond partition 65535"
            ),
            NotWorking::NoLease(why) => format!(
                "sno.partition_source = 'registry' and this server holds no partition lease: {why}"
            ),
        }
    }

    /// What to do about it.
    pub(crate) fn hint(&self) -> &'static str {
        match self {
            NotWorking::Pool(_) => {
                "Set sno.sequence_min and sno.sequence_max in postgresql.conf so that they leave \
                 at least 4 sequences, then reload (SELECT pg_reload_conf()); the next call \
                 applies them."
            }
            NotWorking::CitusNotPreloaded => {
                "Put citus first in shared_preload_libraries, or set sno.partition_source = \
                 'setting', and restart the server."
            }
            NotWorking::CitusGroupUnknown(_) => {
                "Generation starts by itself, within a second or two, once the group is known: on \
                 the coordinator, after SELECT citus_add_node(...) for this node, or, for the \
                 coordinator itself, SELECT citus_set_coordinator_host(...). \
                 docs/citus.md, \"The partition from the Citus group\"."
            }
            NotWorking::CitusGroupBeyond { .. } => {
                "Lower sno.partition_offset so that the group fits, and restart the server."
            }
            NotWorking::NoLease(_) => {
                "Generation starts by itself once the registry grants a lease; the server log \
                 says what the registry answered. docs/generator.md, \"The partition registry\"."
            }
        }
    }
}

/// The configuration the settings of this process ask for. With `sno.partition_source =
/// 'citus'`, `citus_group` says which group the partition comes from (or why there is none);
/// with `'registry'`, `leased` which partition the lease in force gives.
pub(crate) fn requested(
    citus_group: impl FnOnce() -> Result<u32, NotWorking>,
    leased: impl FnOnce() -> Result<u16, NotWorking>,
) -> Result<Config, NotWorking> {
    let partition = match partition_source() {
        PartitionSource::Setting => set_partition(),
        PartitionSource::Citus => citus_partition(citus_group)?,
        PartitionSource::Registry => leased()?,
    };
    // The GUC ranges keep both within 0..=65535.
    Config::new(partition)
        .with_sequence_bounds(SEQUENCE_MIN.get() as u16, SEQUENCE_MAX.get() as u16)
        .map_err(NotWorking::Pool)
}

fn citus_partition(group: impl FnOnce() -> Result<u32, NotWorking>) -> Result<u16, NotWorking> {
    if !citus_preloaded() {
        return Err(NotWorking::CitusNotPreloaded);
    }
    citus_group_partition(group()?)
}

/// The partition of a Citus group: the group plus `sno.partition_offset`, if that is a partition.
pub(crate) fn citus_group_partition(group: u32) -> Result<u16, NotWorking> {
    let offset = PARTITION_OFFSET.get() as u16;
    u16::try_from(u64::from(group) + u64::from(offset))
        .map_err(|_| NotWorking::CitusGroupBeyond { group, offset })
}

/// Whether the partition comes from the Citus group.
pub(crate) fn partition_from_citus() -> bool {
    partition_source() == PartitionSource::Citus
}

/// The configuration that shared memory starts with when the settings in force cannot work.
pub(crate) struct Unusable {
    /// What the generator holds meanwhile: it issues nothing while the settings are unusable.
    pub placeholder: Config,
    /// Why the settings cannot work, naming them.
    pub reason: String,
    /// What to do about it.
    pub hint: &'static str,
    /// The settings are right and the partition comes from the registry, which the lease
    /// holder has not asked yet: what every start of such a server goes through, no problem.
    pub waiting_for_lease: bool,
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
/// `recorded_group` is the Citus group the state file records, if it records one.
pub(crate) fn for_new_shared_memory(recorded_group: Option<u32>) -> Result<Config, Unusable> {
    let placeholder = Config::new(set_partition());
    if let Some(reason) = refused_at_start() {
        return Err(Unusable {
            placeholder,
            reason: reason.to_string(),
            hint: "Correct the setting in postgresql.conf and restart the server.",
            waiting_for_lease: false,
        });
    }
    let waiting = || {
        NotWorking::CitusGroupUnknown(
            "the state file records none, and no database has been read yet".into(),
        )
    };
    let no_lease_yet = || Err(NotWorking::NoLease("it has not claimed one yet".into()));
    let error = match requested(|| recorded_group.ok_or_else(waiting), no_lease_yet) {
        Ok(config) => {
            remember_working(config);
            return Ok(config);
        }
        Err(error) => error,
    };
    let reason = error.message();
    match (&error, last_working()) {
        (NotWorking::Pool(_), Some(kept)) => {
            errors::settings_kept_after_crash(&reason, kept);
            Ok(kept)
        }
        _ => Err(Unusable {
            placeholder,
            reason,
            hint: error.hint(),
            waiting_for_lease: matches!(error, NotWorking::NoLease(_)),
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
/// SQL, a delay in writes of the state file, to stand for a slow disk, fsyncs that fail, to
/// stand for a failing one, and the renewer turned off, to show what callers' renewals do.
#[cfg(feature = "test-clock")]
pub(crate) mod test_only {
    use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

    static OFFSET_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
    static STATE_WRITE_DELAY_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
    static MIGRATION_PAUSE_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
    static STATE_SYNC_FAILS: GucSetting<bool> = GucSetting::<bool>::new(false);
    static STATE_LOG_DELAY_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
    static RENEWER_OFF: GucSetting<bool> = GucSetting::<bool>::new(false);

    pub fn define() {
        GucRegistry::define_bool_guc(
            c"sno.test_renewer_off",
            c"TEST BUILDS ONLY: the renewer renews nothing; callers renew the reservation.",
            c"Lets tests show what a caller's renewal does. Not in released builds.",
            &RENEWER_OFF,
            GucContext::Sighup,
            GucFlags::default(),
        );
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
        GucRegistry::define_int_guc(
            c"sno.test_state_log_delay_ms",
            c"TEST BUILDS ONLY: milliseconds this session sleeps between composing a state and \
              inserting its WAL record.",
            c"Lets tests make two writers reach the WAL in another order than they composed \
              their states. Not in released builds.",
            &STATE_LOG_DELAY_MS,
            0,
            60_000,
            GucContext::Suset,
            GucFlags::default(),
        );
        GucRegistry::define_int_guc(
            c"sno.test_migration_pause_ms",
            c"TEST BUILDS ONLY: milliseconds sno_migration_fill sleeps once it has claimed its IDs.",
            c"Lets tests stop a fill between its claim and its IDs (read by the SQL of \
              sql/parts/migration.sql). Not in released builds.",
            &MIGRATION_PAUSE_MS,
            0,
            600_000,
            GucContext::Suset,
            GucFlags::default(),
        );
        GucRegistry::define_bool_guc(
            c"sno.test_state_sync_fails",
            c"TEST BUILDS ONLY: this session's fsyncs of the data directory fail with EIO.",
            c"Lets tests show what a failed fsync does. Not in released builds.",
            &STATE_SYNC_FAILS,
            GucContext::Suset,
            GucFlags::default(),
        );
    }

    /// Sleeps as long as `sno.test_state_log_delay_ms` says.
    pub fn delay_state_log() {
        sleep_ms(STATE_LOG_DELAY_MS.get());
    }

    fn sleep_ms(millis: i32) {
        if millis > 0 {
            // SAFETY: a plain sleep.
            unsafe { pgrx::pg_sys::pg_usleep(i64::from(millis) * 1000) };
        }
    }

    /// Whether `sno.test_state_sync_fails` makes this session's next sync fail, as a failing
    /// disk would.
    pub fn state_sync_fails() -> bool {
        STATE_SYNC_FAILS.get()
    }

    pub fn offset_ms() -> i64 {
        OFFSET_MS.get() as i64
    }

    /// Sleeps as long as `sno.test_state_write_delay_ms` says, as a slow disk would.
    pub fn delay_state_write() {
        sleep_ms(STATE_WRITE_DELAY_MS.get());
    }

    /// Whether `sno.test_renewer_off` leaves renewals to the callers.
    pub fn renewer_off() -> bool {
        RENEWER_OFF.get()
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

    pub fn delay_state_log() {}

    #[inline(always)]
    pub fn state_sync_fails() -> bool {
        false
    }

    pub fn renewer_off() -> bool {
        false
    }
}
