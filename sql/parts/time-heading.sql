
-- Time predicates ------------------------------------------------------------------------------
-- The exact ID bounds of a time comparison, NULL where no ID qualifies; never an error. With sno
-- loaded, the planner rewrites sno_time(id) OP t (and id::timestamptz OP t) into id OP these
-- (src/pg/sql/time_predicates.rs), so an index on id answers it and partitions by range of id
-- prune.
