//! The lease holder: with `sno.partition_source = 'registry'`, a background worker that claims a
//! partition from the registry (`sno.partition_registry`) and renews it every third of
//! `sno.partition_lease`, so that every server sharing the registry writes IDs with a partition
//! no other server holds (docs/generator.md, "The partition registry").
//!
//! Each claim or renewal is one short connection (libpq, `support::libpq`), with a deadline of
//! a third of the lease (10 s at most): a registry that hangs holds nothing up, and one that is
//! down leaves the server up, with generation refused once the lease has run out on this side
//! (`partition_lease`'s fence). A claim or renewal that fails is tried again every second.
//!
//! A server is known to the registry by its instance (`instance`): a token its postmaster made
//! at start, which no clone, copy or promoted standby shares, sent with every claim, renewal
//! and release; its system identifier, timeline, port and address are recorded for people,
//! never compared. A restart of the lease holder alone keeps the lease; a clean restart of the
//! server takes its partition back at once with the resume secret its shutdown left. Started
//! once recovery is over, on a primary only, and never in pg_upgrade's binary-upgrade mode.
//!
//! The registry is another database, where any role may have created objects: every call names
//! its function by schema and its arguments' types, the session's `search_path` is
//! `pg_catalog` only, and the registry is sent plain numbers to store, nothing to compute.
//!
//! A caller whose ID went past the lease's cap (the wall clock stepped forward) wakes the holder
//! for a renewal at once. At a shutdown the holder gives the lease back, so that the registry
//! shows the partition free; after `pg_terminate_backend` it is back within a second and keeps it.

use crate::clock::Clock;
use crate::pg::server::instance;
use crate::pg::server::partition_lease::{Grant, Held, PartitionLease};
use crate::pg::server::shared_memory::{shared, Shared};
use crate::pg::support::libpq::{Connection, Failure, Rows};
use crate::pg::support::server_clock::{monotonic_millis, ServerClock};
use crate::pg::support::{background_worker, settings};
use crate::time::Units;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::CString;
use std::time::{Duration, Instant};

/// How soon a failed claim or renewal is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// The longest a claim or renewal may take.
const MOST_PER_REQUEST: Duration = Duration::from_secs(10);
/// The least time from one request to a renewal that a caller asked for.
const LEAST_BETWEEN_REQUESTS: Duration = Duration::from_millis(100);
/// The longest giving the lease back may hold up a shutdown.
const MOST_AT_SHUTDOWN: Duration = Duration::from_secs(2);

/// Registers the lease holder when the partition comes from the registry; call from `_PG_init`
/// while preloading.
pub(crate) fn register() {
    // SAFETY: a plain read of a flag set from the postmaster's options before preloading.
    let binary_upgrade = unsafe { pg_sys::IsBinaryUpgrade };
    if settings::partition_from_registry() && !binary_upgrade {
        background_worker::register("sno partition lease holder", "sno_lease_holder_main");
    }
}

#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn sno_lease_holder_main(_argument: pg_sys::Datum) {
    background_worker::start();
    background_worker::before_ending(give_back_at_shutdown);
    let Some(shared) = shared() else {
        return;
    };
    // SAFETY: this process's latch, in its PGPROC in shared memory.
    shared
        .partition_lease()
        .set_holder_latch(unsafe { pg_sys::MyLatch });
    let mut last_logged: Option<(String, Instant)> = None;
    loop {
        let started = Instant::now();
        shared.partition_lease().clear_renewal_request();
        let lease = settings::partition_lease();
        let (next, may_hurry) = match keep_lease(shared, lease) {
            Ok(()) => {
                last_logged = None;
                (started + lease / 3, true)
            }
            Err(why) => {
                log_failure(&why, &mut last_logged);
                (started + RETRY_AFTER, false)
            }
        };
        wait_until(
            shared.partition_lease(),
            next,
            may_hurry.then_some(started + LEAST_BETWEEN_REQUESTS),
        );
    }
}

/// Waits until `next`, on a schedule of its own: a latch set by anything else (every DROP
/// DATABASE sets every process's) sends no extra request. A caller's request for a renewal
/// does, from `hurry_from` on (none after a failure: the next try is a second away at most).
fn wait_until(lease: &PartitionLease, next: Instant, hurry_from: Option<Instant>) {
    while let Some(left) = next.checked_duration_since(Instant::now()) {
        match hurry_from.filter(|_| lease.renewal_requested()) {
            Some(from) => match from.checked_duration_since(Instant::now()) {
                Some(until_then) => background_worker::wait(until_then.min(left)),
                None => return,
            },
            None => background_worker::wait(left),
        }
    }
}

/// Logs a failure when it is new, and again every 30 s while it lasts.
fn log_failure(why: &str, last_logged: &mut Option<(String, Instant)>) {
    let repeat = last_logged
        .as_ref()
        .is_some_and(|(text, at)| text == why && at.elapsed() < Duration::from_secs(30));
    if !repeat {
        log!("sno: partition registry: {why}");
        *last_logged = Some((why.to_string(), Instant::now()));
    }
}

/// Renews the lease in force, or claims one; says what went wrong otherwise.
fn keep_lease(shared: &Shared, lease: Duration) -> Result<(), String> {
    let request = Request::now(lease);
    let held = *shared.partition_lease().held();
    let outcome = Registry::open(&request).and_then(|registry| match held.partition {
        Some(partition) if held.holding => registry.renew(&request, partition, &held),
        wanted => registry.claim(&request, wanted),
    });
    match outcome {
        Ok(granted) => {
            shared.hold_partition_lease(&Grant {
                partition: granted.partition,
                floor: granted.start_after,
                cap: request.cap(),
                deadline_ms: request.deadline_ms(),
                renewed_at_ms: request.sent_wall_ms,
                used_through_ms: request.may_use_until_ms(),
                backfill_reserved: granted.backfill_reserved,
            });
            Ok(())
        }
        Err(Refusal::Taken(why)) => {
            shared.partition_lease().lose(&why);
            Err(why)
        }
        Err(Refusal::Failed(why)) => {
            shared.partition_lease().note_failure(&why);
            Err(why)
        }
    }
}

/// At a shutdown, gives the lease back: no ID of this server passes from now on, and the
/// registry shows the partition free at once instead of when the lease would have ended. The
/// registry keeps its `used_through`, after which the partition's next holder starts.
fn give_back_at_shutdown() {
    let Some(shared) = shared().filter(|_| background_worker::shutting_down()) else {
        return;
    };
    let Some(partition) = shared.partition_lease().partition() else {
        return;
    };
    shared.partition_lease().give_up();
    let mut request = Request::now(settings::partition_lease());
    request.deadline = request.deadline.min(Instant::now() + MOST_AT_SHUTDOWN);
    let resume = instance::write_resume_secret().map_err(|error| {
        failed(&format!(
            "could not write {} in the data directory: {error}",
            instance::RESUME_FILE
        ))
    });
    let released = resume.and_then(|resume| {
        Registry::open(&request).and_then(|registry| registry.release(partition, &resume))
    });
    match released {
        Ok(()) => log!("sno: gave partition {partition} back to the registry"),
        Err(Refusal::Taken(why) | Refusal::Failed(why)) => log!(
            "sno: partition registry: could not give partition {partition} back ({why}); its \
             lease expires instead"
        ),
    }
}

/// One claim or renewal, timed from before it is sent.
struct Request {
    sent_wall_ms: i64,
    sent_monotonic_ms: i64,
    lease_ms: i64,
    deadline: Instant,
}

impl Request {
    fn now(lease: Duration) -> Request {
        Request {
            sent_wall_ms: ServerClock.unix_millis(),
            sent_monotonic_ms: monotonic_millis(),
            lease_ms: lease.as_millis() as i64,
            deadline: Instant::now() + (lease / 3).min(MOST_PER_REQUEST),
        }
    }

    /// What the holder may stay short of its lease by, for clocks that run at slightly
    /// different rates: a tenth of the lease, at least half a second.
    fn margin_ms(&self) -> i64 {
        (self.lease_ms / 10).max(500)
    }

    /// The latest time this server's IDs may carry: what it sends, as `may_use_until`.
    fn may_use_until_ms(&self) -> i64 {
        self.sent_wall_ms + self.lease_ms
    }

    /// The last unit an ID may carry, short of `may_use_until` by the margin.
    fn cap(&self) -> Units {
        Units::from_unix_millis(self.may_use_until_ms() - self.margin_ms()).unwrap_or(Units::MIN)
    }

    /// When the lease ends on this side (monotonic): before the registry's, which runs from
    /// when the request arrived.
    fn deadline_ms(&self) -> i64 {
        self.sent_monotonic_ms + self.lease_ms - self.margin_ms()
    }
}

/// What the registry records of this server for people: system identifier, timeline and port.
fn this_server() -> [String; 3] {
    // SAFETY: plain reads of values set at start-up, and of the WAL insertion timeline of a
    // server out of recovery (the holder starts only then).
    let (system_identifier, timeline, port) = unsafe {
        (
            pg_sys::GetSystemIdentifier() as i64,
            pg_sys::GetWALInsertionTimeLine(),
            pg_sys::PostPortNumber,
        )
    };
    [
        system_identifier.to_string(),
        timeline.to_string(),
        port.to_string(),
    ]
}

struct Granted {
    partition: u16,
    start_after: Option<Units>,
    /// This server's backfill partition (sno.backfill_partition), if the registry reserves it.
    backfill_reserved: Option<u16>,
}

enum Refusal {
    /// Another server holds the partition now.
    Taken(String),
    Failed(String),
}

/// A connection to the registry, and the schema its sno is in.
struct Registry {
    connection: Connection,
    schema: String,
}

impl Registry {
    fn open(request: &Request) -> Result<Registry, Refusal> {
        let conninfo = settings::partition_registry().ok_or_else(|| {
            failed("sno.partition_registry is not set (or was refused: the server log says why)")
        })?;
        let connection =
            Connection::open(&conninfo, request.deadline).map_err(|failure| refused(&failure))?;
        // Names below are all qualified; this keeps any left out of a role's objects too.
        connection
            .query(
                c"SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false)",
                &[],
            )
            .map_err(|failure| refused(&failure))?;
        let schema = registry_schema(&connection)?;
        Ok(Registry { connection, schema })
    }

    /// Runs `sql`, in which `@extschema@` stands for the schema of the registry's sno, with
    /// `parameters` ($1, $2, ...; `None` for NULL).
    fn query(&self, sql: &str, parameters: &[Option<&str>]) -> Result<Rows, Refusal> {
        let sql = CString::new(sql.replace("@extschema@", &self.schema))
            .expect("no NUL in a quoted identifier");
        self.connection
            .query(&sql, parameters)
            .map_err(|failure| refused(&failure))
    }

    fn claim(&self, request: &Request, wanted: Option<u16>) -> Result<Granted, Refusal> {
        let [system_identifier, timeline, port] = this_server();
        let (instance, resume) = (instance::instance(), instance::resume_secret());
        let wanted = wanted.map(|partition| partition.to_string());
        let backfill_partition = settings::backfill_partition();
        let backfill = backfill_partition.map(|partition| partition.to_string());
        let rows = self.query(
            "SELECT \"partition\", start_after_ms, backfill_reserved \
             FROM @extschema@.sno_lease_claim($1::pg_catalog.uuid, $2::pg_catalog.bytea, \
                 $3::pg_catalog.int4, $4::pg_catalog.int8, $5::pg_catalog.int8, \
                 $6::pg_catalog.int8, $7::pg_catalog.int4, $8::pg_catalog.int4, \
                 $9::pg_catalog.int4)",
            &[
                Some(&instance),
                resume.as_deref(),
                wanted.as_deref(),
                Some(&request.lease_ms.to_string()),
                Some(&request.may_use_until_ms().to_string()),
                Some(&system_identifier),
                Some(&timeline),
                Some(&port),
                backfill.as_deref(),
            ],
        )?;
        let [partition, start_after_ms, backfill_reserved] = first_row(&rows)?;
        let partition = partition
            .and_then(|text| text.parse::<u16>().ok())
            .ok_or_else(|| failed("the claim returned no partition"))?;
        Ok(Granted {
            partition,
            start_after: parse_start_after(start_after_ms),
            backfill_reserved: backfill_partition
                .filter(|_| backfill_reserved.as_deref() == Some("t")),
        })
    }

    /// Renews the lease of `partition`. Sends the greatest `used_through` this server sent for
    /// it and the time it stays after, so that a registry that lost the row writes it again
    /// as it was.
    fn renew(&self, request: &Request, partition: u16, held: &Held) -> Result<Granted, Refusal> {
        let [system_identifier, timeline, port] = this_server();
        let used_through_ms = request.may_use_until_ms().max(held.used_through_ms);
        let started_after_ms = held.start_after_ms.map(|ms| ms.to_string());
        let backfill_partition = settings::backfill_partition();
        let backfill = backfill_partition.map(|partition| partition.to_string());
        let rows = self.query(
            "SELECT renewed_until, backfill_reserved, start_after_ms \
             FROM @extschema@.sno_lease_renew($1::pg_catalog.int4, $2::pg_catalog.uuid, \
                 $3::pg_catalog.int8, $4::pg_catalog.int8, $5::pg_catalog.int8, \
                 $6::pg_catalog.int8, $7::pg_catalog.int4, $8::pg_catalog.int4, \
                 $9::pg_catalog.int4)",
            &[
                Some(&partition.to_string()),
                Some(&instance::instance()),
                Some(&request.lease_ms.to_string()),
                Some(&used_through_ms.to_string()),
                started_after_ms.as_deref(),
                Some(&system_identifier),
                Some(&timeline),
                Some(&port),
                backfill.as_deref(),
            ],
        )?;
        let [_, backfill_reserved, start_after_ms] = first_row(&rows)?;
        Ok(Granted {
            partition,
            // Set when the registry cannot know that nobody else had the partition meanwhile.
            start_after: parse_start_after(start_after_ms),
            backfill_reserved: backfill_partition
                .filter(|_| backfill_reserved.as_deref() == Some("t")),
        })
    }

    /// Gives the lease back, leaving the SHA-256 of `resume` (bytea's text) with the registry.
    fn release(&self, partition: u16, resume: &str) -> Result<(), Refusal> {
        let rows = self.query(
            "SELECT @extschema@.sno_lease_release($1::pg_catalog.int4, $2::pg_catalog.uuid, \
                 $3::pg_catalog.bytea)",
            &[
                Some(&partition.to_string()),
                Some(&instance::instance()),
                Some(resume),
            ],
        )?;
        match first_row::<1>(&rows)? {
            [Some(held)] if held == "t" => Ok(()),
            _ => Err(failed("the registry has no lease of it for this server")),
        }
    }
}

/// A `start_after_ms` the registry returned, as the unit IDs stay after.
fn parse_start_after(start_after_ms: Option<String>) -> Option<Units> {
    start_after_ms
        .and_then(|text| text.parse::<i64>().ok())
        .map(|ms| Units::from_unix_millis(ms).unwrap_or(Units::MAX))
}

/// The first row's first `N` columns.
fn first_row<const N: usize>(rows: &Rows) -> Result<[Option<String>; N], Refusal> {
    let row = rows
        .first()
        .filter(|row| row.len() >= N)
        .ok_or_else(|| failed("the registry's answer has no row"))?;
    Ok(std::array::from_fn(|column| row[column].clone()))
}

/// The schema of the registry's sno, quoted; refuses a registry without sno, or with a sno
/// that has no registry.
fn registry_schema(connection: &Connection) -> Result<String, Refusal> {
    let rows = connection
        .query(
            c"SELECT pg_catalog.quote_ident(n.nspname), e.extversion, \
                     pg_catalog.to_regprocedure(pg_catalog.quote_ident(n.nspname) \
                         OPERATOR(pg_catalog.||) '.sno_lease_renew(integer, uuid, bigint, \
                         bigint, bigint, bigint, integer, integer, integer)') IS NOT NULL \
              FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n \
                  ON n.oid OPERATOR(pg_catalog.=) e.extnamespace \
              WHERE e.extname OPERATOR(pg_catalog.=) 'sno'",
            &[],
        )
        .map_err(|failure| refused(&failure))?;
    let no_sno =
        || failed("the registry's database has no sno extension (CREATE EXTENSION sno there)");
    let [Some(schema), Some(version), Some(has_registry)] =
        first_row(&rows).map_err(|_| no_sno())?
    else {
        return Err(no_sno());
    };
    if has_registry != "t" {
        return Err(failed(&format!(
            "the registry's database has sno {version}, without the partition registry this \
             server's sno {} uses (ALTER EXTENSION sno UPDATE there)",
            env!("CARGO_PKG_VERSION")
        )));
    }
    Ok(schema)
}

fn refused(failure: &Failure) -> Refusal {
    match failure {
        Failure::Sql { sqlstate, .. } if sqlstate == "55000" => Refusal::Taken(failure.message()),
        _ => failed(&failure.message()),
    }
}

fn failed(why: &str) -> Refusal {
    Refusal::Failed(why.into())
}
