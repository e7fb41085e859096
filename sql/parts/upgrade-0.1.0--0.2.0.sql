-- Backfills (issue 22, item 4): for the roles an administrator grants them to. sno_generate_at
-- moves the server's durable backfill cursors, which only a superuser can retire.
REVOKE EXECUTE ON FUNCTION sno_generate_at(integer, timestamptz) FROM PUBLIC;
-- PARALLEL UNSAFE: it writes the state file and the WAL.
CREATE FUNCTION sno_retire_backfill_cursor(meta integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_retire_backfill_cursor_wrapper' LANGUAGE C VOLATILE STRICT
    PARALLEL UNSAFE;
REVOKE EXECUTE ON FUNCTION sno_retire_backfill_cursor(integer) FROM PUBLIC;
COMMENT ON FUNCTION sno_retire_backfill_cursor(integer) IS
    'superusers only: forgets meta''s backfill cursor (see sno_backfill_cursors()) so that its next '
    'backfill may start at any time; true if one was in use. RISK: sno_generate_at can then '
    'repeat IDs that meta''s backfills made before; retire only when none of them remains where '
    'new ones could meet them (their table emptied or dropped), or after sno.backfill_partition '
    'changed. Standbys keep the cursor they replayed.';
-- sno_check_partitions() with a fixed search_path (issue 22): the queries it runs resolve no name
-- through the caller's search_path.
ALTER FUNCTION sno_check_partitions() SET search_path = pg_catalog, pg_temp;

-- sno_partition_watch() (issue 22): what a Citus coordinator's partition watch found.
-- Filled in by a background worker on a server that preloads citus as well as sno.
CREATE FUNCTION sno_partition_watch(
    OUT watching boolean, OUT checked_at timestamptz, OUT databases integer, OUT nodes integer,
    OUT clashes integer, OUT unanswered integer, OUT failed integer, OUT detail text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_partition_watch_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION sno_partition_watch() IS
    'on a Citus coordinator: what the partition watch found at its last check '
    '(sno.citus_watch_interval): clashes > 0 means two nodes can make the same ID; '
    'unanswered or failed > 0, that a check could not be done (the log says why)';

-- One name per idea (issue 24): sno_generator_stats().generated_at, a count that read like a
-- time, is backfilled; sno_backfill_cursors() names its columns as sno_generator_stats() does.
-- Output columns cannot be renamed in place, so both functions are made again.
DROP FUNCTION sno_generator_stats();
CREATE FUNCTION sno_generator_stats(
    OUT "partition" integer, OUT sequence_min integer, OUT sequence_max integer,
    OUT tick_tock integer, OUT last_time timestamptz, OUT generated bigint,
    OUT backfilled bigint, OUT overflow_stalls bigint, OUT clock_regressions bigint,
    OUT regression_waits bigint, OUT persisted_through timestamptz,
    OUT state_file_failures bigint, OUT waiting_until timestamptz, OUT generating boolean)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_generator_stats_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION sno_generator_stats() IS
    'the shared generator''s settings, state and counters; generating is false while '
    'sno_generate and sno_generate_at are off (the state file or the settings: they say why)';
DROP FUNCTION sno_backfill_cursors();
CREATE FUNCTION sno_backfill_cursors(
    OUT meta integer, OUT tick_tock integer, OUT last_time timestamptz,
    OUT other_last_time timestamptz, OUT clock_regressions bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_backfill_cursors_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION sno_backfill_cursors() IS
    'for each meta sno_generate_at has used: its timeline, the last time it reached, the last '
    'time the other timeline reached, and how often a call for an earlier time turned it';

-- Moving existing tables to sno (issue 35): sno_migration_steps and the steps it lists.
