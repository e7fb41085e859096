//! Every error and warning sno reports, by SQLSTATE, as the README's error table lists them.
//! One place, so that a message is written once and the table can be checked against it;
//! `ereport` does the reporting.

use crate::generator::Config;
use crate::id::{LengthError, PartsError, Sno};
use crate::persisted::STATE_FILE;
use crate::pg::support::ereport::{fatal, raise, raise_or_save, raise_with_hint, warn};
use crate::pg::support::timestamps::format_unix_millis;
use crate::time::Units;
use pgrx::{pg_sys, PgSqlErrorCode};
use std::ffi::CStr;
use std::io;

/// 22P02: text that is not a sno; a soft error where the caller asked for one (PostgreSQL 16+),
/// then this returns.
#[track_caller]
pub(crate) fn invalid_text(error_context: *mut pg_sys::Node, input: &CStr, detail: String) {
    raise_or_save(
        error_context,
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!(
            "invalid input syntax for type sno: \"{}\"",
            input.to_string_lossy()
        ),
        detail,
    )
}

/// 22P02: a bytea cast to sno that is not 10 bytes.
pub(crate) fn invalid_bytea(error: LengthError) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!("invalid bytea for type sno: {error}"),
        None,
    )
}

/// 22P03: a binary field (COPY BINARY, a driver's binary parameter) that is not 10 bytes.
pub(crate) fn invalid_binary_length(bytes: usize) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        format!("invalid binary sno: {bytes} bytes, a sno is 10"),
        None,
    )
}

/// 22003: a meta outside a byte.
pub(crate) fn meta_out_of_range(meta: i32) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        format!("sno meta {meta} is out of range 0..255"),
        None,
    )
}

/// 22003 naming the part, or 22008 for the time.
pub(crate) fn part_out_of_range(error: PartsError) -> ! {
    match error {
        PartsError::Time(_) => time_out_of_range(),
        _ => raise(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("sno {error}"),
            None,
        ),
    }
}

/// 22008: a time the format cannot hold.
pub(crate) fn time_out_of_range() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        "timestamp out of range for sno".into(),
        Some("A sno holds times from 2010-01-01 00:00:00+00 to 2079-09-07 15:47:35.548+00.".into()),
    )
}

/// 55000: a function of the shared generator (named) called without it.
#[cold]
pub(crate) fn not_preloaded(function: &str) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("{function} requires sno to be loaded via shared_preload_libraries"),
        None,
        "Add sno to the libraries listed in shared_preload_libraries (postgresql.conf), keeping \
         those already there, and restart the server.",
    )
}

/// 55000: `sno_generate_at` without `sno.backfill_partition`.
pub(crate) fn backfill_partition_unset() -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        "sno_generate_at requires sno.backfill_partition to be set".into(),
        Some(
            "Backfill IDs carry a partition of their own, so that they cannot repeat an ID from \
             sno_generate."
                .into(),
        ),
        "Set sno.backfill_partition in postgresql.conf to a partition that no server uses for \
         sno.partition or sno.backfill_partition, then reload.",
    )
}

/// 55000: `sno.backfill_partition` equal to `sno.partition`.
pub(crate) fn backfill_partition_is_live(partition: u16) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("sno.backfill_partition ({partition}) is this server's sno.partition"),
        Some("Backfill IDs in the live generator's partition could repeat its IDs.".into()),
        "Set sno.backfill_partition to a partition that no server uses for sno.partition or \
         sno.backfill_partition, then reload.",
    )
}

/// 55000: sno_generate_at on a server whose partition comes from the registry, with a backfill
/// partition the registry does not reserve (it could lease it to another server).
pub(crate) fn backfill_partition_not_reserved(partition: u16) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("sno.backfill_partition ({partition}) is not reserved in the partition registry"),
        Some(
            "With sno.partition_source = 'registry', a backfill partition the registry does not \
             reserve could be leased to another server, whose IDs its backfill IDs would repeat."
                .into(),
        ),
        "In the registry's database: SELECT sno_partition_reserve(PARTITION, 'backfill of \
         SERVER'); the lease holder learns it at its next renewal (sno_partition_lease() shows \
         it).",
    )
}

/// 55000: a third pass of `sno_generate_at` over times one meta's cursor has passed in both
/// tick-tock timelines.
pub(crate) fn backfill_timelines_used(meta: u8, at: Units, current: Units, other: Units) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "sno_generate_at cannot make another ID for meta {meta} at {}",
            format_units(at)
        ),
        Some(format!(
            "Backfill IDs of meta {meta} already reach {} in one tick-tock timeline and {} in the \
             other, so an ID for this time could repeat one of them.",
            format_units(current),
            format_units(other)
        )),
        "Make a meta's IDs in time order, in one session at a time: for rows already in a table, \
         UPDATE t SET id = b.id FROM (SELECT ctid AS row, sno_generate_at(meta, created) AS id \
         FROM t ORDER BY created) AS b WHERE t.ctid = b.row (an UPDATE alone goes in the table's \
         order). Sessions backfilling at once need a meta each, and a further pass over the same \
         times another meta. sno_backfill_cursors() shows how far each meta reaches. If no ID of \
         this meta was kept anywhere (every statement that made one failed, as an UPDATE in the \
         table's order that stopped here did, none was returned to a client by a SELECT or \
         RETURNING, and no key migration's work table, sno_migration_ and a number, holds a \
         claim of it), a superuser may retire its cursor, SELECT sno_retire_backfill_cursor(meta), \
         and run the sorted form with the same meta; otherwise use another meta. To move a \
         table's key to sno, run the statements of sno_migration_steps(table, meta, time_column).",
    )
}

/// 55000: `sno_check_partitions()` in a database without Citus.
pub(crate) fn citus_missing() -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        "sno_check_partitions requires the citus extension in this database".into(),
        None,
        "Run it on the Citus coordinator, in the database of the distributed tables.",
    )
}

/// 55000: a Citus node that `sno_check_partitions()` could not ask (down, or without sno).
pub(crate) fn node_did_not_answer(node: &str, answer: &str) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("sno_check_partitions could not read the partitions of {node}"),
        Some(format!("The node answered: {answer}")),
        "Every node must be up and have the sno extension; then run the check again.",
    )
}

/// 54000: every backfill sequence of one meta's 4 ms unit is used.
pub(crate) fn backfill_unit_spent(meta: u8, at: Units) -> ! {
    let at = format_units(at);
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
        format!("sno_generate_at cannot make another ID for meta {meta} at {at}"),
        Some(format!(
            "All backfill sequences of meta {meta} in the 4 ms unit at {at} are used."
        )),
        "Spread the rows over more than one 4 ms unit, or use another meta.",
    )
}

/// 25006: generating on a standby.
pub(crate) fn on_standby() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
        "sno_generate cannot run on a standby server".into(),
        Some("A standby shares its primary's partition; generate IDs on the primary.".into()),
    )
}

/// XX001 if the state file's contents are damaged (or mark a failed carry across pg_upgrade),
/// 58030 if it cannot be read at all: generating is off until it is restored or removed. The
/// hint says where the state is: a backup of this data directory, the old cluster's, or the
/// file itself, intact but unreadable (never remove that one).
pub(crate) fn state_file_unusable(error: &io::Error, carry_failed: bool) -> ! {
    let damaged = error.kind() == io::ErrorKind::InvalidData;
    let code = if damaged {
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED
    } else {
        PgSqlErrorCode::ERRCODE_IO_ERROR
    };
    let hint = if carry_failed {
        "Copy sno_generator.state from the old cluster's data directory (the one pg_upgrade \
         upgraded from) over this one; or, if no clock on this server is behind the old \
         cluster's newest ID, remove the file. The next call reads it again."
    } else if damaged {
        "Restore sno_generator.state from a backup of this data directory; or, if no clock on \
         this server has gone back since its newest ID was made, remove the file. The next call \
         reads it again."
    } else {
        "Let the server's operating-system user read sno_generator.state (its owner and \
         permissions, or the disk under it); do not remove it, it may be intact. The next call \
         reads it again."
    };
    raise_with_hint(
        code,
        format!(
            "sno cannot generate IDs: could not read {}: {error}",
            STATE_FILE
        ),
        Some(
            "The file records how far this server's generator went, so that no ID repeats after \
             a restart with the clock set back. Without it, sno_generate and sno_generate_at \
             are off; everything else works."
                .into(),
        ),
        hint,
    )
}

/// 58030: the state file could not be written, so the ID cannot be guaranteed unique after a
/// crash and is not returned.
pub(crate) fn state_file_not_written(error: &io::Error, sync_failed: bool) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!("sno: could not write {}: {error}", STATE_FILE),
        None,
        if sync_failed {
            SYNC_FAILED_HINT
        } else {
            "The file in the data directory keeps IDs unique across restarts; make it writable \
             (disk space, permissions) and call again."
        },
    )
}

/// 58030: generation is off after an fsync of the state file failed in this session, which
/// cannot prove by a later sync that the data reached the disk.
pub(crate) fn state_sync_failed_in_this_session() -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!("sno cannot generate IDs: an fsync of {STATE_FILE} failed in this session"),
        Some(
            "After a failed fsync the kernel may report a later one as successful without the \
             data on disk; PostgreSQL stops the server there (data_sync_retry = off). sno only \
             stops generating, until another session has written and synced the whole file again."
                .into(),
        ),
        "Call sno_generate from another session: it writes the file again. If that fails too, \
         check the storage of the data directory.",
    )
}

/// After a failed fsync: what happens next, and what to do.
const SYNC_FAILED_HINT: &str = "sno_generate and sno_generate_at are off until another session \
    writes and syncs the whole file again, which its next call does; check the storage of the \
    data directory.";

/// WARNING 58030: the next reservation could not be written while the current one still
/// covers the callers.
pub(crate) fn reservation_not_extended(
    error: &io::Error,
    sync_failed: bool,
    covered_through: Units,
    failures: u64,
) {
    let next = if sync_failed {
        SYNC_FAILED_HINT.to_string()
    } else {
        format!(
            "IDs are covered through {}; after that sno_generate fails until the file can be \
             written.",
            format_units(covered_through)
        )
    };
    warn(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!(
            "sno: could not extend the reservation in {}: {error}",
            STATE_FILE
        ),
        format!(
            "{next} Failed attempts so far: {failures} (sno_generator_stats().\
             state_file_failures)."
        ),
    );
}

/// WARNING 58030 in WAL replay: the state file could not be written for a replayed record;
/// replay waits and retries.
pub(crate) fn replayed_state_not_written(error: &io::Error, attempts: u64) {
    warn(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!(
            "sno: could not write {} while replaying the primary's generator state: {error}",
            STATE_FILE
        ),
        format!(
            "Replay waits at this record and tries again each second (attempts so far: \
             {attempts}): going past it with the file stale could let this server, once \
             promoted, repeat the primary's IDs. Make the file writable (disk space, \
             permissions)."
        ),
    );
}

/// 53200: PostgreSQL could not allocate an ID's 10 bytes.
#[cold]
pub(crate) fn out_of_memory() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY,
        "out of memory".into(),
        None,
    )
}

/// F0000: the server started with sno settings that cannot work (a pool of fewer than 4
/// sequences), and they still cannot.
pub(crate) fn settings_unusable(reason: &str, hint: &str) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!("sno cannot generate IDs: {reason}"),
        Some(
            "The server started with these settings; sno_generate and sno_generate_at are off \
             until they can work. Everything else works."
                .into(),
        ),
        hint,
    )
}

/// F0000: the server started with a sno setting that PostgreSQL refused (and replaced by its
/// default); only a restart with a valid value takes it back.
pub(crate) fn settings_refused_at_start(reason: &str) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!("sno cannot generate IDs: {reason}"),
        Some(
            "The server started with this setting; sno_generate and sno_generate_at are off, so \
             that no ID is made with a partition or sequence range that was not chosen. \
             Everything else works."
                .into(),
        ),
        "Correct it in postgresql.conf and restart the server (a reload cannot show that the \
         value now comes from the configuration files).",
    )
}

/// WARNING F0000 at start-up: the server starts with sno settings that cannot work, and
/// generation is off until they are fixed.
pub(crate) fn settings_unusable_at_start(reason: &str, hint: &str) {
    warn(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!("sno: {reason}; sno_generate and sno_generate_at are off"),
        format!("Everything else works. {hint}"),
    );
}

/// WARNING F0000 at a crash restart: settings reloaded since the last start cannot work, so the
/// generator keeps the last ones that did.
pub(crate) fn settings_kept_after_crash(reason: &str, kept: Config) {
    warn(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!(
            "sno: ignoring the settings after the crash restart: {reason}; keeping partition {} \
             and sequences {}..{}",
            kept.partition, kept.sequence_min, kept.sequence_max
        ),
        "These are the last settings the generator worked with. Fix sno.sequence_min and \
         sno.sequence_max in postgresql.conf and reload (SELECT pg_reload_conf())."
            .into(),
    );
}

/// F0000: nodes of a Citus cluster whose partitions and sequence ranges overlap, so that they
/// can make the same ID.
pub(crate) fn partitions_shared(clashes: &[String]) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        "sno: nodes of this Citus cluster share a partition, so they can make the same IDs".into(),
        Some(clashes.join("\n")),
        "Give each node its own sno.partition (and sno.backfill_partition) in its \
         postgresql.conf, then reload it. Nodes may share a partition only with disjoint \
         sno.sequence_min..sno.sequence_max ranges.",
    )
}

/// WARNING F0000 from the partition watch (`partition_watch`): nodes of the Citus cluster this
/// server coordinates could make the same ID. Said at every check until fixed.
pub(crate) fn partitions_shared_noticed(database: &str, clashes: &[String]) {
    warn(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!(
            "sno: nodes of the Citus cluster of database \"{database}\" share a partition, so \
             they can make the same IDs"
        ),
        format!(
            "{} Give each node its own sno.partition (and sno.backfill_partition) in its \
             postgresql.conf, then reload it; sno_check_partitions() names the nodes, \
             sno_partition_watch() counts the clashes.",
            clashes.join(" ")
        ),
    );
}

/// WARNING 01000 from the partition watch: a node of the Citus cluster did not answer, so the
/// partitions could not be compared.
pub(crate) fn partition_watch_unanswered(database: &str, node: &str, answer: &str) {
    warn(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!(
            "sno: could not compare the partitions of the Citus cluster of database \
             \"{database}\": {node} did not answer"
        ),
        format!("The node answered: {answer}"),
    );
}

/// WARNING 01000 from the partition watch: a database's check ended without a finding.
pub(crate) fn partition_watch_check_failed(database: &str, why: &str) {
    warn(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!("sno: the partition watch could not check database \"{database}\""),
        format!("The check failed: {why}. It is counted in sno_partition_watch().failed."),
    );
}

/// WARNING 01000 from the partition watch, with `sno.partition_source = 'citus'`: the Citus
/// metadata no longer gives a group to use, so the partition stays that of the group in use,
/// which no other node of its cluster can have been given since (group ids are never reused).
pub(crate) fn citus_group_kept(group: u32, why: &str) {
    warn(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!("sno: keeping the partition of Citus group {group}: {why}"),
        "Citus never gives a group id twice, so IDs stay unique meanwhile. Once the coordinator \
         adds this node again, its new group is used within a minute."
            .into(),
    );
}

/// WARNING 01000 in a logical replication worker: an incoming ID could be one this server made
/// (see `partition_mistakes`).
pub(crate) fn replicated_id_with_own_partition(id: &Sno, generated_through: Units, count: u64) {
    warn(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!(
            "sno: logical replication brought in ID {} with this server's own partition {}, \
             from a time this server may have generated IDs in",
            id,
            id.partition()
        ),
        format!(
            "Its time {} (tick-tock {}) is at or before {}, how far this server's generator \
             went in that timeline. Two servers generating IDs with one partition repeat each \
             other's IDs; give each its own sno.partition. IDs like this one brought in by this \
             worker so far: {count}.",
            format_units(id.time()),
            id.tick_tock() as u8,
            format_units(generated_through)
        ),
    );
}

/// WARNING 01000 at start-up: a copy of another server's data directory starts as a primary,
/// with the partition of the server it was copied from.
pub(crate) fn copy_starts_with_source_partition(partition: &str) {
    warn(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!(
            "sno: this data directory is a copy of another server's (it starts from a base \
             backup) and will generate IDs with {partition}, as that server does"
        ),
        "If the server it was copied from still generates IDs that may meet this one's, give \
         this server its own sno.partition (with sno.partition_source = 'citus', add it to the \
         cluster as a node of its own) before it generates any; after the loss of that server, \
         nothing needs to be done."
            .into(),
    );
}

/// 55000 in WAL replay (FATAL there): a record from a newer sno, which this one cannot read;
/// replay stops at it rather than go on without the state it carries.
pub(crate) fn wal_record_from_newer_sno(what: &str, writer: Option<&str>) -> ! {
    let this = env!("CARGO_PKG_VERSION");
    let install = match writer {
        Some(writer) => format!("Install sno {writer} (or later) on this server"),
        None => "Install on this server the sno release that the server which wrote this WAL \
                 runs (or a later one)"
            .to_string(),
    };
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "sno {this} cannot replay a generator state record of {what}, written by {}",
            writer.map_or("a newer sno".to_string(), |writer| format!("sno {writer}"))
        ),
        Some(
            "The record carries how far the server that wrote the WAL generated IDs; replay \
             cannot go past it without that."
                .into(),
        ),
        &format!(
            "{install} and start it again; replay resumes at this record. Upgrade sno on \
             standbys before their primary."
        ),
    )
}

/// FATAL 58030 in the server pg_upgrade starts: the carry failed and not even the mark that
/// keeps generation off could be written.
pub(crate) fn carry_not_recorded(reason: &str, error: &io::Error) -> ! {
    fatal(
        PgSqlErrorCode::ERRCODE_IO_ERROR,
        format!(
            "sno: pg_upgrade: the old cluster's generator state was not carried ({reason}), and \
             {STATE_FILE}, which would keep this cluster from generating until that is fixed, \
             could not be written: {error}"
        ),
        &format!(
            "Make the new data directory writable, or copy the old data directory's {STATE_FILE} \
             into it, and run pg_upgrade again."
        ),
    )
}

/// FATAL XX000 at start-up: shared memory not aligned as PostgreSQL promises.
pub(crate) fn misaligned_shared_memory() -> ! {
    fatal(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        "sno: shared memory is not aligned to a cache line".into(),
        "PostgreSQL aligns shared memory to cache lines; report this as a bug.",
    )
}

fn format_units(units: Units) -> String {
    format_unix_millis(units.to_unix_millis())
}

/// F0000: with `sno.partition_source = 'registry'`, the lease of the partition ended on this
/// side (not renewed in time, or the registry gave the partition to another server).
#[cold]
pub(crate) fn partition_lease_ended(
    partition: Option<u16>,
    valid_until_ms: i64,
    problem: Option<&str>,
) -> ! {
    let what = match partition {
        Some(partition) => format!(
            "the lease of partition {partition} from the registry ended at {}",
            format_unix_millis(valid_until_ms)
        ),
        None => "this server holds no partition lease".into(),
    };
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!("sno cannot generate IDs: {what}"),
        problem.map(|problem| format!("The last claim or renewal failed: {problem}")),
        "Generation resumes by itself once the registry renews the lease (or grants another); \
         see sno_partition_lease() and the server log. docs/generator.md, \"The partition \
         registry\".",
    )
}

/// F0000: the leased partition's previous holder may have used times later than this server's
/// clock by more than a lease, so waiting for the clock is not an answer.
#[cold]
pub(crate) fn partition_lease_floor_ahead(floor: Units, now_ms: i64) -> ! {
    raise_with_hint(
        PgSqlErrorCode::ERRCODE_CONFIG_FILE_ERROR,
        format!(
            "sno cannot generate IDs yet: the leased partition's IDs must stay after {}, and \
             this server's clock reads {}",
            format_unix_millis(floor.to_unix_millis()),
            format_unix_millis(now_ms)
        ),
        Some(
            "The time is the last one its previous holder could have used, or the registry's \
             epoch floor after the registry may have lost leases (sno_registry_epoch there \
             says why)."
                .into(),
        ),
        "IDs are made once the clock passes that time. A clock far behind the previous \
         holder's is worth checking (NTP).",
    )
}
