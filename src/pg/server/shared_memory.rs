//! The server's one generator, in shared memory, and the one owner of everything kept there.
//!
//! Shared memory exists only with `shared_preload_libraries = 'sno'`: the postmaster reserves it
//! while loading the library and fills it in once (and again after a crash restart, when
//! PostgreSQL re-creates shared memory); every backend inherits the pointer when it is forked.
//! [`Shared`]'s fields are private: the layers above call its methods, and each part keeps its
//! own rules (`persistence` the reservation, `backfills` the cursors), with a lock of its own.

use crate::clock::Clock;
use crate::generator::Config;
use crate::generator::{BackfillCursor, GenerateError, Generator, Lease, Snapshot};
use crate::id::Sno;
use crate::persisted::STATE_FILE;
use crate::pg::server::backfills::{Backfills, Cursors};
use crate::pg::server::generated_count;
use crate::pg::server::lwlock::{Guard, LwLocked};
use crate::pg::server::partition_lease::{Admission, Grant, PartitionLease};
use crate::pg::server::partition_watch_findings::Watch;
use crate::pg::server::persistence::{self, Persistence};
use crate::pg::server::state_file::{self, HighWater, State};
use crate::pg::server::wait_reports::{ReportingClock, WaitReports};
use crate::pg::support::errors;
use crate::pg::support::server_clock::{monotonic_millis, ServerClock};
use crate::pg::support::settings;
use crate::pg::support::timestamps::format_unix_millis;
use crate::time::Units;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

const SHMEM_NAME: &std::ffi::CStr = c"sno generator";
const TRANCHE_NAME: &std::ffi::CStr = c"sno";
/// The tranche's locks, in the order [`Shared::attach_locks`] hands them out.
const LOCKS: usize = 5;

#[repr(C)]
pub(crate) struct Shared {
    generator: Generator,
    persistence: Persistence,
    backfills: Backfills,
    waits: WaitReports,
    /// What the partition watch found on a Citus coordinator.
    partition_watch: LwLocked<Watch>,
    /// The lease of the partition from the registry, with `sno.partition_source = 'registry'`.
    partition_lease: PartitionLease,
}

static SHARED: AtomicPtr<Shared> = AtomicPtr::new(ptr::null_mut());

static mut PREVIOUS_REQUEST_HOOK: pg_sys::shmem_request_hook_type = None;
static mut PREVIOUS_STARTUP_HOOK: pg_sys::shmem_startup_hook_type = None;

/// The shared generator, or `None` when sno was not preloaded.
pub(crate) fn shared() -> Option<&'static Shared> {
    // SAFETY: set once per shared-memory lifetime in the postmaster, before any backend forks.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

/// Asks for shared memory; call from `_PG_init` while preloading.
pub(crate) fn install_hooks() {
    // SAFETY: _PG_init runs single-threaded in the postmaster; hooks are chained as usual.
    unsafe {
        PREVIOUS_REQUEST_HOOK = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(request_shared_memory);
        PREVIOUS_STARTUP_HOOK = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(start_up_shared_memory);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn request_shared_memory() {
    unsafe {
        if let Some(previous) = PREVIOUS_REQUEST_HOOK {
            previous();
        }
        pg_sys::RequestAddinShmemSpace(size_of::<Shared>());
        pg_sys::RequestAddinShmemSpace(generated_count::shared_memory_size());
        pg_sys::RequestNamedLWLockTranche(TRANCHE_NAME.as_ptr(), LOCKS as c_int);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn start_up_shared_memory() {
    unsafe {
        if let Some(previous) = PREVIOUS_STARTUP_HOOK {
            previous();
        }
        let init_lock = addin_shmem_init_lock();
        pg_sys::LWLockAcquire(init_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let memory = pg_sys::ShmemInitStruct(SHMEM_NAME.as_ptr(), size_of::<Shared>(), &mut found)
            .cast::<Shared>();
        if !found {
            if memory.align_offset(align_of::<Shared>()) != 0 {
                errors::misaligned_shared_memory();
            }
            // Read first: the Citus group it records decides the partition.
            let at_start = persistence::read_at_start();
            let (recorded_group, leased_partition) = match &at_start {
                Ok(Some(state)) => (state.citus_group, state.leased_partition),
                _ => (None, None),
            };
            memory.write(new_shared(recorded_group));
            let shared = &*memory;
            shared.attach_locks(pg_sys::GetNamedLWLockTranche(TRANCHE_NAME.as_ptr()));
            if let Some(partition) = leased_partition {
                // What the lease holder asks the registry for; the postmaster, before any
                // backend exists.
                shared.partition_lease.remember_at_start(partition);
            }
            if let (true, Some(group)) = (settings::partition_from_citus(), recorded_group) {
                // Even with settings that cannot work: the group is what the file records.
                shared
                    .persistence
                    .use_citus_group(shared.persistence.recorded_unlocked(), group);
            }
            // With settings that cannot work, the file is read again once they can.
            if !shared.persistence.settings_unusable() {
                shared.load_at_start(at_start);
            }
        }
        generated_count::attach();
        pg_sys::LWLockRelease(init_lock);
        SHARED.store(memory, Ordering::Release);
        if !pg_sys::IsUnderPostmaster {
            // Runs when the postmaster exits, and also (with a non-zero code) when it re-creates
            // shared memory after a crash; re-registered here each time shared memory is made.
            pg_sys::on_shmem_exit(Some(save_on_shutdown), pg_sys::Datum::from(0));
        }
    }
}

/// PostgreSQL's `AddinShmemInitLock`, which the bindings lack: slot 21 of the main LWLock
/// array (lwlocknames.txt), as pgrx's own shared-memory code uses.
unsafe fn addin_shmem_init_lock() -> *mut pg_sys::LWLock {
    unsafe { &raw mut (*pg_sys::MainLWLockArray.add(21)).lock }
}

/// A generator with the settings in postgresql.conf (and the Citus group the state file
/// records) that has issued nothing; with settings that cannot work, one that issues nothing
/// until they can (see `settings::for_new_shared_memory`).
fn new_shared(recorded_group: Option<u32>) -> Shared {
    let (config, unusable) = match settings::for_new_shared_memory(recorded_group) {
        Ok(config) => (config, false),
        Err(unusable) if unusable.waiting_for_lease => {
            log!("sno: sno_generate waits for a partition lease from the registry, which the lease holder claims once the server is up");
            (unusable.placeholder, true)
        }
        Err(unusable) => {
            errors::settings_unusable_at_start(&unusable.reason, unusable.hint);
            (unusable.placeholder, true)
        }
    };
    // With settings that cannot work, the placeholder's partition is used by nothing: naming it
    // would read as if generation went on with it.
    if !unusable && settings::partition_from_citus() {
        log!(
            "sno: using partition {} from Citus group {}, as {STATE_FILE} records",
            config.partition,
            recorded_group.expect("a usable Citus partition comes from a group")
        );
    } else if !unusable && !settings::partition_is_set() {
        log!(
            "sno: sno.partition is not set; using partition {} derived from the system identifier",
            config.partition
        );
    }
    Shared {
        generator: Generator::new(config),
        persistence: Persistence::new(unusable),
        backfills: Backfills::new(),
        waits: WaitReports::new(),
        partition_watch: LwLocked::new(Watch::new()),
        partition_lease: PartitionLease::new(),
    }
}

/// When the postmaster exits normally (a smart or fast shutdown, and also an immediate one, by
/// which time every backend is gone), the exact state replaces the look-ahead, so that a restart
/// with a clock that did not go back needs no tick-tock. When it re-creates shared memory after a
/// crash (code 1) nothing is written: the look-ahead already on disk covers every ID issued. If
/// a backend died while handling a clock regression, its lock is never released; then the
/// look-ahead stays too, rather than the postmaster waiting forever. A file that could not be
/// read is left as it is, for the operator to restore.
#[pg_guard]
unsafe extern "C-unwind" fn save_on_shutdown(code: c_int, _arg: pg_sys::Datum) {
    let Some(shared) = shared() else {
        return;
    };
    if code != 0 && !shared.persistence.settings_unusable() {
        // A crash restart: the next shared memory keeps these if the settings reloaded since
        // cannot work (`settings::for_new_shared_memory`).
        settings::remember_working(shared.generator.config());
    }
    if code != 0 || shared.persistence.generation_off() {
        return;
    }
    let Some(snapshot) = shared.generator.try_snapshot(&ServerClock) else {
        log!("sno: keeping the look-ahead in {STATE_FILE}: a clock regression was being handled");
        return;
    };
    // SAFETY: every backend has exited.
    let (cursors, recorded) = unsafe {
        (
            shared.backfills.cursors_unlocked(),
            shared.persistence.recorded_unlocked(),
        )
    };
    let state = State {
        live: HighWater::of(&snapshot),
        backfills: cursors.exact_marks(),
        citus_group: recorded.citus_group(),
        leased_partition: recorded.leased_partition(),
    };
    if let Err(error) = state_file::write(&state) {
        log!("sno: could not write {STATE_FILE}: {error}");
    }
}

impl Shared {
    fn attach_locks(&self, tranche: *mut pg_sys::LWLockPadded) {
        // SAFETY: the tranche holds LOCKS locks, for the server's life.
        let lock = |index: usize| unsafe { &raw mut (*tranche.add(index)).lock };
        self.persistence.attach(lock(0), lock(1));
        self.backfills.attach(lock(2));
        self.partition_watch.attach(lock(3));
        self.partition_lease.attach(lock(4));
    }

    /// The generator: its settings, statistics and snapshots.
    pub(crate) fn generator(&self) -> &Generator {
        &self.generator
    }

    /// Fills in the generator from the state file at start-up (and after a crash restart), as
    /// `persistence::read_at_start` read it. Never stops the server: an unreadable file leaves
    /// generation off until it is fixed.
    fn load_at_start(&self, at_start: std::io::Result<Option<State>>) {
        match at_start {
            Ok(Some(state)) => {
                // SAFETY: the postmaster, before any backend exists.
                let (recorded, cursors) = unsafe {
                    (
                        self.persistence.recorded_unlocked(),
                        self.backfills.cursors_unlocked(),
                    )
                };
                self.restore(recorded, cursors, &state);
            }
            Ok(None) => {}
            Err(error) => {
                self.persistence.turn_off();
                log!(
                    "sno: could not read {STATE_FILE}: {error}; sno_generate and sno_generate_at \
                     raise an error until the file is restored or removed (docs/persistence.md, \
                     \"The state file\")"
                );
            }
        }
    }

    /// Makes the generator and the backfill cursors continue after what `state` records.
    fn restore(&self, recorded: &mut persistence::Recorded, cursors: &mut Cursors, state: &State) {
        let config = self.generator.config();
        let snapshot = Snapshot {
            config,
            sequence: config.sequence_max as u32 + 1,
            now: None,
            last_unit: state.live.through,
            other_last_unit: state.live.other_through,
            clock_regressions: state.live.clock_regressions,
        };
        self.generator
            .restore_in_place(&snapshot)
            .expect("the bounds in force were validated");
        self.persistence.restored(recorded, state);
        cursors.restore(&state.backfills);
    }

    /// Whether generation is off: the settings could not work at start-up, or the state file
    /// could not be read. One load, on every call.
    #[inline(always)]
    pub(crate) fn generation_off(&self) -> bool {
        self.persistence.generation_off()
    }

    /// Raises the error that keeps generation off, unless its cause is gone: settings that could
    /// not work at start-up are read again (this backend's, as of its last reload), then the
    /// state file, so that fixed settings, or a restored (or removed) file, take effect at the
    /// next call, without a restart.
    #[cold]
    pub(crate) fn recover_generation(&self) {
        if let Some(failed_in) = self.persistence.sync_failed_in() {
            self.write_again_after_failed_sync(failed_in);
        }
        let _writer = self.persistence.live_writer();
        let mut cursors = self.backfills.cursors();
        let mut recorded = self.persistence.recorded();
        if !self.persistence.generation_off() {
            return;
        }
        if self.persistence.settings_unusable() {
            if let Some(reason) = settings::refused_at_start() {
                errors::settings_refused_at_start(reason);
            }
            let config = self
                .requested_settings_with(&recorded)
                .unwrap_or_else(|error| errors::settings_unusable(&error.message(), error.hint()));
            self.generator.reconfigure(config);
            self.persistence.settings_usable();
            log!(
                "sno: the settings can work now: partition {}, sequences {}..{}",
                config.partition,
                config.sequence_min,
                config.sequence_max
            );
        }
        match state_file::read() {
            Ok(Some(state)) => {
                self.restore(&mut recorded, &mut cursors, &state);
                log!("sno: read {STATE_FILE} again; generating IDs");
            }
            Ok(None) => persistence::log_new_history(),
            Err(error) => errors::state_file_unusable(&error, state_file::is_carry_failure(&error)),
        }
        self.persistence.turn_on();
    }

    /// After a failed fsync, writes and syncs the whole state file again, from this process if it
    /// is not the one whose sync failed (where a later sync proves nothing), and turns generation
    /// back on; raises the error that keeps it off otherwise.
    #[cold]
    fn write_again_after_failed_sync(&self, failed_in: i32) {
        let _writer = self.persistence.live_writer();
        if self.persistence.sync_failed_in().is_none() {
            return; // another session wrote it meanwhile
        }
        // SAFETY: a plain read of this process's ID.
        if failed_in == unsafe { pg_sys::MyProcPid } {
            errors::state_sync_failed_in_this_session();
        }
        match self.persistence.write(&self.generator, |_| {}) {
            // The callers it covers wait for the synchronous standbys themselves.
            Ok(written) => self.persistence.publish_if_confirmed(written),
            Err(error) => {
                errors::state_file_not_written(&error, state_file::is_sync_failure(&error))
            }
        }
        self.persistence.sync_recovered();
        log!(
            "sno: wrote and synced {STATE_FILE} whole again after a failed sync (in process \
             {failed_in}); generating IDs"
        );
    }

    /// The next ID of this backend's `lease` (see `Lease`), covered by the state file before it
    /// is returned.
    #[inline]
    pub(crate) fn generate(&self, lease: &mut Lease, meta: u8) -> Result<Sno, GenerateError> {
        let id = loop {
            let id = lease.generate(
                &self.generator,
                meta,
                &ReportingClock(&self.waits, &self.generator),
            )?;
            if !settings::partition_from_registry() || self.within_partition_lease(&id) {
                break id;
            }
        };
        self.persistence.ensure_covers(&self.generator, &id);
        self.waits.log_overflow_at_most_each_second(&self.generator);
        Ok(id)
    }

    /// Whether the partition lease lets `id` through its fence; false, after waiting for the
    /// clock, when `id` is at or before the floor (the caller makes another). Out of line, and
    /// `Lease::generate` called from one place only, so that the path of every ID without a
    /// registry stays as it was (inlined whole).
    #[cold]
    #[inline(never)]
    fn within_partition_lease(&self, id: &Sno) -> bool {
        match self.partition_lease.admits(id.partition(), id.time()) {
            Admission::Yes => true,
            Admission::TooEarly(floor) => {
                self.wait_past(floor);
                false
            }
            Admission::PastCap => {
                self.wait_for_renewal(id.partition(), id.time());
                false
            }
            Admission::No => self.partition_lease_ended(),
        }
    }

    /// The wall clock stepped forward past the lease's cap since its last renewal: asks the
    /// lease holder to renew now, by the new clock, and waits for it (a second at most; a
    /// registry that takes longer leaves the caller refused, as before). An ID still past the
    /// cap of a renewal was not made by the clock: refused at once.
    #[cold]
    fn wait_for_renewal(&self, partition: u16, unit: Units) {
        const MOST_MS: i64 = 1000;
        const ASK_EVERY_MS: i64 = 100;
        const EACH_MS: i64 = 5;
        let lease = &self.partition_lease;
        let cap_before = lease.cap();
        let until_ms = monotonic_millis() + MOST_MS;
        let mut ask_at_ms = i64::MIN;
        loop {
            let now_ms = monotonic_millis();
            match lease.admits(partition, unit) {
                Admission::Yes | Admission::TooEarly(_) => return,
                Admission::PastCap if lease.cap() == cap_before && now_ms < until_ms => {
                    if now_ms >= ask_at_ms {
                        lease.ask_for_renewal();
                        ask_at_ms = now_ms + ASK_EVERY_MS;
                    }
                    ServerClock.wait_millis(EACH_MS);
                }
                Admission::PastCap | Admission::No => self.partition_lease_ended(),
            }
        }
    }

    /// Waits, interruptibly, until the clock is past `floor`: the last unit the partition's
    /// previous holder could have used. Only after the partition came from a lease that expired,
    /// and only as long as this server's clock is behind that holder's was.
    #[cold]
    fn wait_past(&self, floor: Units) {
        let after_ms = floor.to_unix_millis() + crate::time::UNIT_MS;
        let now_ms = ServerClock.unix_millis();
        if after_ms - now_ms > settings::partition_lease().as_millis() as i64 {
            errors::partition_lease_floor_ahead(floor, now_ms);
        }
        ServerClock.wait_millis(after_ms - now_ms);
    }

    /// Raises the error that says the lease in force ended, and why.
    #[cold]
    fn partition_lease_ended(&self) -> ! {
        let held = *self.partition_lease.held();
        errors::partition_lease_ended(
            held.partition,
            held.valid_until_ms,
            held.problem.text().as_deref(),
        )
    }

    /// The partition lease, as the lease holder last left it.
    pub(crate) fn partition_lease(&self) -> &PartitionLease {
        &self.partition_lease
    }

    /// A lease was claimed or renewed (`lease_holder`): makes its partition that of the IDs,
    /// then lets them through its fence (in that order: the partition in use before may be
    /// another server's now).
    pub(crate) fn hold_partition_lease(&self, grant: &Grant) {
        let _writer = self.persistence.live_writer();
        let changed = self.partition_lease.hold(grant);
        self.persistence
            .use_leased_partition(&mut self.persistence.recorded(), grant.partition);
        // While generation is off, its next call applies it (`recover_generation`).
        if changed && !self.persistence.settings_unusable() {
            self.generator
                .reconfigure(self.config_with_partition(grant.partition));
        }
        self.partition_lease.open(grant);
        if changed {
            log!(
                "sno: using partition {} from the registry's lease{}",
                grant.partition,
                grant.floor.map_or(String::new(), |floor| format!(
                    ", after {} (its previous holder's last time)",
                    format_unix_millis(floor.to_unix_millis())
                ))
            );
        }
    }

    /// The settings as requested, with a sequence range reloaded that cannot work kept as it is
    /// in use (as everywhere), but never the partition: `partition` must be applied.
    fn config_with_partition(&self, partition: u16) -> Config {
        self.requested_settings()
            .ok()
            .filter(|config| config.partition == partition)
            .unwrap_or_else(|| {
                let in_use = self.generator.config();
                Config::new(partition)
                    .with_sequence_bounds(in_use.sequence_min, in_use.sequence_max)
                    .expect("the sequence range in use works")
            })
    }

    /// Sequences claimed so far: it changes whenever IDs are made (the renewer's sign of use).
    pub(crate) fn claimed(&self) -> u64 {
        self.generator.stats().claimed
    }

    /// Extends the reservation ahead of the callers (the renewer), while generation is on.
    pub(crate) fn renew_ahead(&self) {
        if !self.generation_off() {
            self.persistence.renew_ahead(&self.generator);
        }
    }

    /// The next backfill ID of `meta` for the Unix millisecond `unix_ms`.
    pub(crate) fn generate_at(&self, meta: u8, unix_ms: i64) -> Sno {
        if settings::partition_from_registry() {
            if let Some(partition) = settings::backfill_partition() {
                if !self.partition_lease.backfill_reserved(partition) {
                    errors::backfill_partition_not_reserved(partition);
                }
            }
        }
        self.backfills
            .generate_at(&self.persistence, &self.generator, meta, unix_ms)
    }

    /// Forgets `meta`'s backfill cursor: `sno_retire_backfill_cursor`.
    pub(crate) fn retire_backfill_cursor(&self, meta: u8) -> bool {
        self.backfills
            .retire(&self.persistence, &self.generator, meta)
    }

    /// The backfill cursors in use.
    pub(crate) fn backfill_cursors(&self) -> Vec<(u8, BackfillCursor)> {
        self.backfills.in_use()
    }

    /// Backfill IDs made since the server started.
    pub(crate) fn backfilled(&self) -> u64 {
        self.backfills.issued()
    }

    /// The unit through which the state file covers issued IDs.
    pub(crate) fn persisted_through(&self) -> Units {
        self.persistence.persisted_through()
    }

    /// Reservations that could not be written while the previous one still covered callers.
    pub(crate) fn state_file_failures(&self) -> u64 {
        self.persistence.refresh_failures()
    }

    /// What the partition watch found, for a moment.
    pub(crate) fn partition_watch(&self) -> Guard<'_, Watch> {
        self.partition_watch.lock()
    }

    /// Applies this backend's settings after it read its configuration files again, unless a
    /// further reload is already pending here (another backend may have applied newer ones).
    pub(crate) fn apply_reloaded_settings(&self) {
        if settings::reload_pending() {
            return;
        }
        let config = match self.requested_settings() {
            Ok(config) => config,
            Err(error) => {
                let current = self.generator.config();
                warning!(
                    "sno: ignoring new settings: {}; keeping partition {} and sequences {}..{}",
                    error.message(),
                    current.partition,
                    current.sequence_min,
                    current.sequence_max
                );
                return;
            }
        };
        if config != self.generator.config() {
            let _serialized = self.persistence.live_writer();
            self.generator.reconfigure(config);
        }
    }

    /// The configuration the settings of this process ask for, with the Citus group or the
    /// leased partition in use.
    pub(crate) fn requested_settings(&self) -> Result<Config, settings::NotWorking> {
        self.requested_settings_with(&self.persistence.recorded())
    }

    /// The Citus group the partition comes from, where it comes from one.
    pub(crate) fn citus_group_in_use(&self) -> Option<u32> {
        self.persistence.recorded().citus_group()
    }

    fn requested_settings_with(
        &self,
        recorded: &persistence::Recorded,
    ) -> Result<Config, settings::NotWorking> {
        settings::requested(
            || {
                recorded
                    .citus_group()
                    .ok_or_else(|| self.why_no_citus_group())
            },
            || self.leased_partition(),
        )
    }

    /// The partition of the lease in force, or why there is none.
    fn leased_partition(&self) -> Result<u16, settings::NotWorking> {
        self.partition_lease.partition().ok_or_else(|| {
            let held = *self.partition_lease.held();
            settings::NotWorking::NoLease(held.problem.text().unwrap_or_else(|| {
                if held.partition.is_some() {
                    "the registry gave its partition to another server".into()
                } else {
                    "it has not claimed one yet (the lease holder starts once recovery has ended)"
                        .into()
                }
            }))
        })
    }

    /// What the partition watch last found in the way of a Citus group: a group that makes no
    /// partition, or what keeps the group unknown.
    fn why_no_citus_group(&self) -> settings::NotWorking {
        let watch = self.partition_watch.lock();
        if let Some(group) = watch.group_refused {
            if let Err(refused) = settings::citus_group_partition(group) {
                return refused;
            }
        }
        settings::NotWorking::CitusGroupUnknown(watch.group_unknown.text().unwrap_or_else(|| {
            "the partition watch has not read this server's databases yet (it starts once \
             recovery has ended)"
                .into()
        }))
    }

    /// With `sno.partition_source = 'citus'`: makes `group`, which Citus confirmed in
    /// `database`, the one the partition comes from. Recorded in the state file (and the WAL)
    /// before any ID with it is returned. A group that cannot make a partition changes nothing.
    pub(crate) fn use_citus_group(
        &self,
        group: u32,
        database: &str,
    ) -> Result<(), settings::NotWorking> {
        let _writer = self.persistence.live_writer();
        let mut recorded = self.persistence.recorded();
        if recorded.citus_group() == Some(group) {
            return Ok(());
        }
        let config = settings::requested(|| Ok(group), || self.leased_partition())?;
        let before = recorded.citus_group();
        self.persistence.use_citus_group(&mut recorded, group);
        // While generation is off, the next call applies it (`recover_generation`).
        if !self.persistence.settings_unusable() {
            self.generator.reconfigure(config);
        }
        drop(recorded);
        match before {
            None => log!(
                "sno: using partition {} from Citus group {group} (database \"{database}\")",
                config.partition
            ),
            Some(before) => log!(
                "sno: Citus group {before} became {group} (database \"{database}\"): using \
                 partition {} from now on",
                config.partition
            ),
        }
        Ok(())
    }

    /// On a server replaying WAL: makes the generator and the state file cover `state`, a state
    /// the primary recorded (see `replication`), joined with what this server already knew. The
    /// file is written durably before replay goes on, since a restartpoint after this record
    /// means it is never replayed again: a write that fails is retried, and replay waits
    /// meanwhile (`persistence::write_replayed`).
    pub(crate) fn cover_replayed(&self, state: &State) {
        let covering = {
            let recorded = self.persistence.recorded();
            // A file not read at start-up (settings that could not work) is joined too: the
            // record may be older than what the file covers.
            let known = recorded
                .known()
                .or_else(|| state_file::read().ok().flatten());
            let covering = match &known {
                Some(known) => known.covering(state),
                None => state.clone(),
            };
            if known.as_ref() == Some(&covering) {
                return; // replayed again after a restart, or older than what the file says
            }
            covering
        };
        // Without the locks: a retry may take long, and backends must not block on it. Only this
        // process writes the file while the server replays WAL (nothing generates).
        persistence::write_replayed(&covering);
        let mut cursors = self.backfills.cursors();
        let mut recorded = self.persistence.recorded();
        let mut group_made_usable = false;
        if let Some(partition) = covering.leased_partition {
            // The primary's: a promotion asks the registry for it.
            self.persistence
                .use_leased_partition(&mut recorded, partition);
            self.partition_lease.remember(partition);
        }
        if let (true, Some(group)) = (settings::partition_from_citus(), covering.citus_group) {
            // The primary's group: a promotion continues with it.
            self.persistence.use_citus_group(&mut recorded, group);
            group_made_usable = self.apply_replayed_group(&recorded, group);
        }
        // With settings that cannot work, generation stays off; it reads this file once they can.
        if !self.persistence.settings_unusable() && self.persistence.generation_off() {
            self.persistence.turn_on();
            if !group_made_usable {
                log!(
                    "sno: the primary's generator state from the WAL replaces the unreadable \
                     {STATE_FILE}"
                );
            }
        }
        self.restore(&mut recorded, &mut cursors, &covering);
    }

    /// Takes the partition of the Citus group a replayed record brings, so that a promotion
    /// generates with it at once. Returns whether that made settings usable that were waiting
    /// for a group.
    fn apply_replayed_group(&self, recorded: &persistence::Recorded, group: u32) -> bool {
        let waiting = self.persistence.settings_unusable();
        if waiting && settings::refused_at_start().is_some() {
            return false;
        }
        let Ok(config) = self.requested_settings_with(recorded) else {
            return false;
        };
        if config != self.generator.config() {
            self.generator.reconfigure(config);
        }
        if waiting {
            self.persistence.settings_usable();
            log!(
                "sno: using partition {} from Citus group {group}, as the primary's WAL records",
                config.partition
            );
        }
        waiting
    }

    /// At the end of WAL replay: says how far the replayed records carried the generator.
    pub(crate) fn log_end_of_replay(&self, records: u64) {
        if records > 0 {
            log!(
                "sno: replayed {records} generator state record(s) from the WAL; {STATE_FILE} \
                 covers IDs through {} (a clock behind that continues in the other tick-tock \
                 timeline)",
                format_unix_millis(self.persisted_through().to_unix_millis())
            );
        }
    }

    /// How far the generator went in the timeline of this tick-tock bit (for telling whether a
    /// replicated ID could be one this server made); `None` while a clock regression is being
    /// handled, rather than waiting for it.
    pub(crate) fn generated_through(&self, tick_tock: bool) -> Option<Units> {
        let snapshot = self.generator.try_snapshot(&ServerClock)?;
        Some(HighWater::of(&snapshot).bound_in(tick_tock))
    }
}
