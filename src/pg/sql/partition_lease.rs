//! `sno_partition_lease()`: the partition lease this server holds from the registry
//! (`sno.partition_source = 'registry'`), as the lease holder last left it, for monitoring.

use crate::pg::server::shared_memory::shared;
use crate::pg::support::errors;
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
    TableIterator::once((
        settings::partition_from_registry(),
        held.partition.map(i32::from),
        held.holding,
        (held.renewed_at_ms > 0).then(|| timestamptz(held.renewed_at_ms)),
        held.holding.then(|| timestamptz(held.valid_until_ms)),
        held.start_after_ms.map(timestamptz),
        held.failures,
        held.problem.text(),
    ))
}
