//! What SQL calls: the type's input and output, its operators, decoding and building IDs,
//! generating them, predicates on their time, and the partition checks on Citus. Each file is
//! named as its test in `tests/sql`. Imports every layer below.

pub(crate) mod generate;
pub(crate) mod operators;
pub(crate) mod partition_lease;
pub(crate) mod partition_watch;
pub(crate) mod partitions;
pub(crate) mod parts;
pub(crate) mod time_predicates;
pub(crate) mod type_io;
