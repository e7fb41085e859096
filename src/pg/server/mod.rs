//! The generator's server state: the one generator in shared memory, and how its position is
//! kept ahead of every ID returned, on disk (`persistence`, `state_file`) and in the WAL for
//! standbys (`replication`). `shared_memory` owns the state; the other modules keep it through
//! its methods. Imports only `support`.

pub(crate) mod backfills;
pub(crate) mod generated_count;
pub(crate) mod instance;
pub(crate) mod lease_holder;
pub(crate) mod lwlock;
pub(crate) mod partition_lease;
pub(crate) mod partition_watch_findings;
pub(crate) mod persistence;
pub(crate) mod renewer;
pub(crate) mod replication;
pub(crate) mod shared_memory;
pub(crate) mod state_file;
pub(crate) mod wait_reports;
