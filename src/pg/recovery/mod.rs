//! What runs when a server starts from another's data or history: WAL replay on standbys and in
//! crash recovery (`replay`), the carry of the generator's state across pg_upgrade
//! (`pg_upgrade_carry`), and the warnings for the mistake of two servers sharing a partition
//! (`partition_mistakes`). Imports `server` and `support`.

pub(crate) mod partition_mistakes;
pub(crate) mod pg_upgrade_carry;
pub(crate) mod replay;
