//! Catching the one mistake that makes sno repeat IDs: two servers generating with one partition.
//!
//! One server cannot see another's IDs as they are made, so this module watches the places where
//! the mistake shows: logical replication bringing in an ID this server could have made (this
//! server's own partition, a sequence in its own range, a time at or before how far its generator
//! went in that tick-tock timeline), a copy of another server's data directory starting as a
//! primary (a `backup_label` but no `standby.signal`), and the end of recovery (the partition the
//! server continues with). All of them log; none refuses, because each refusal would do harm
//! without undoing the mistake (a stopped subscription, a restored backup that cannot start).
//!
//! Citus nodes are not checked on apply: Citus moves shards by logical replication, and a shard
//! holds rows the receiving node generated itself (inserted there, routed to a shard elsewhere),
//! so its own IDs do come back; `sno_check_partitions()` catches partition mistakes there (see
//! `sql::partitions`).
//!
//! What each message says and what to do: docs/replication.md, "Partition mistakes".

use crate::id::Sno;
use crate::pg::server::shared_memory::shared;
use crate::pg::support::errors;
use crate::pg::support::log_spacing::first_this_second;
use crate::pg::support::settings;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering};

/// Whether this process is a logical replication worker whose input is checked: [`UNKNOWN`]
/// until first asked (a process never becomes one later, and PostgreSQL sets one up before it
/// reads any row).
static IN_APPLY_WORKER: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const NO: u8 = 1;
const YES: u8 = 2;

/// IDs this worker brought in that look like this server's own, and when it last said so.
static OWN_LOOKING_IDS: AtomicU64 = AtomicU64::new(0);
static WARNED_AT_MS: AtomicI64 = AtomicI64::new(i64::MIN / 2);

/// For every `sno` value read as input: in a logical replication worker, warns if `id` could be
/// one this server made. Elsewhere one check of a cached flag.
#[inline(always)]
pub(crate) fn check_replicated(id: &Sno) {
    match IN_APPLY_WORKER.load(Ordering::Relaxed) {
        NO => {}
        YES => warn_if_own_looking(id),
        _ => {
            // SAFETY: reads a process-local pointer set when a logical worker attaches.
            let checked = unsafe { pg_sys::IsLogicalWorker() } && !citus_loaded();
            IN_APPLY_WORKER.store(if checked { YES } else { NO }, Ordering::Relaxed);
            check_replicated(id);
        }
    }
}

/// Whether Citus is loaded in this server (it defines its settings when preloaded).
fn citus_loaded() -> bool {
    // SAFETY: a lookup by a NUL-terminated name; missing_ok, so no error.
    !unsafe { pg_sys::GetConfigOption(c"citus.shard_count".as_ptr(), true, false) }.is_null()
}

#[cold]
fn warn_if_own_looking(id: &Sno) {
    let Some(shared) = shared() else {
        return;
    };
    let config = shared.generator().config();
    if id.partition() != config.partition
        || !(config.sequence_min..=config.sequence_max).contains(&id.sequence())
    {
        return;
    }
    let Some(generated_through) = shared.generated_through(id.tick_tock()) else {
        return; // a clock regression is being handled; the next such ID is checked
    };
    if id.time() > generated_through || generated_through.get() == 0 {
        return;
    }
    let count = OWN_LOOKING_IDS.fetch_add(1, Ordering::Relaxed) + 1;
    if first_this_second(&WARNED_AT_MS) {
        errors::replicated_id_with_own_partition(id, generated_through, count);
    }
}

/// At start-up (postmaster): warns if this data directory is a copy of another server's that
/// starts as a primary, generating with the partition of the server it was copied from.
pub(crate) fn warn_if_copy_starts_as_primary() {
    // The working directory is the data directory. recovery.signal or neither: a primary once
    // the backup's WAL is replayed; standby.signal: a standby, which cannot generate.
    let from_backup = Path::new("backup_label").exists();
    if from_backup && !Path::new("standby.signal").exists() {
        let partition = if settings::partition_from_citus() {
            "the partition of the Citus group it was copied with".to_string()
        } else {
            format!(
                "partition {} ({})",
                settings::set_partition(),
                partition_origin()
            )
        };
        errors::copy_starts_with_source_partition(&partition);
    }
}

/// At the end of archive recovery (a standby's promotion, a point-in-time recovery): says which
/// partition this server now generates with.
pub(crate) fn log_partition_after_archive_recovery() {
    // SAFETY: a plain read of a flag of the startup process, set before replay begins.
    if !unsafe { pg_sys::ArchiveRecoveryRequested } {
        return; // crash recovery: the same server goes on
    }
    log!(
        "sno: recovery has ended; this server generates IDs with partition {} ({}), as the \
         server whose WAL it replayed did: right after a failover, since it continues past that \
         server's IDs; if that server still generates IDs (a copy split off a running server), \
         give this one its own sno.partition",
        partition_in_use(),
        partition_origin()
    );
}

/// The generator's partition, where shared memory has one, else the one `sno.partition` asks for.
fn partition_in_use() -> u16 {
    shared().map_or_else(settings::set_partition, |shared| {
        shared.generator().config().partition
    })
}

fn partition_origin() -> &'static str {
    if settings::partition_from_citus() {
        "from its Citus group"
    } else if settings::partition_is_set() {
        "set by sno.partition"
    } else {
        "derived from the system identifier"
    }
}
