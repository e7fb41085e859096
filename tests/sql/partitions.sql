-- sno_partitions(): what this server generates in (the runner sets sno.partition 4242 and
-- sno.backfill_partition 4243); sno_check_partitions() needs Citus, which this database lacks:
-- the extension itself was created without it.
SELECT * FROM sno_partitions() ORDER BY generator;
SELECT * FROM sno_check_partitions();
\echo :LAST_ERROR_SQLSTATE
