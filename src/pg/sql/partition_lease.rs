//! `sno_partition_lease()`: the partition lease this server holds from the registry
//! (`sno.partition_source = 'registry'`), as the lease holder last left it, for monitoring.
//! `holding` is whether the lease is in force now, so that an alert on it fires once the lease
//! has run out, whatever the holder is doing. The last failure's text (libpq's, which names
//! the registry's host and user) is shown only to roles that may read sno.partition_registry.

use crate::clock::Clock;
use crate::pg::server::shared_memory::shared;
use crate::pg::support::errors;
use crate::pg::support::server_clock::ServerClock;
use crate::pg::support::settings;
use crate::pg::support::timestamps::timestamptz;
use pgrx::prelude::*;

#[allow(clippy::type_complexity)]
#[pg_extern(sql = false)]
fn sno_partition_lease() -> TableIterator<
    'static,
    (
        name!(from_registry, bool),
        name!(partition, Option<i32>),
        name!(holding, bool),
        name!(renewed_at, Option<TimestampWithTimeZone>),
        name!(valid_until, Option<TimestampWithTimeZone>),
        name!(start_after, Option<TimestampWithTimeZone>),
        name!(failures, i64),
        name!(problem, Option<String>),
    ),
> {
    let Some(shared) = shared() else {
        errors::not_preloaded("sno_partition_lease")
    };
    let held = *shared.partition_lease().held();
    let problem = held.problem.text().map(|text| {
        if may_read_registry_setting() {
            text
        } else {
            "(hidden: only roles that may read sno.partition_registry see it)".into()
        }
    });
    TableIterator::once((
        settings::partition_from_registry(),
        held.partition.map(i32::from),
        held.in_force(ServerClock.unix_millis()),
        (held.renewed_at_ms > 0).then(|| timestamptz(held.renewed_at_ms)),
        held.holding.then(|| timestamptz(held.valid_until_ms)),
        held.start_after_ms.map(timestamptz),
        held.failures,
        problem,
    ))
}

/// Whether the current role may read sno.partition_registry (a superuser-only setting): a
/// superuser, or a member of pg_read_all_settings.
fn may_read_registry_setting() -> bool {
    // SAFETY: plain catalog lookups for the current role, in a transaction.
    unsafe {
        pg_sys::superuser()
            || pg_sys::has_privs_of_role(
                pg_sys::GetUserId(),
                pg_sys::Oid::from(pg_sys::ROLE_PG_READ_ALL_SETTINGS),
            )
    }
}
