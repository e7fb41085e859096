
-- Generation (requires shared_preload_libraries = 'sno') --------------------------------------

CREATE FUNCTION sno_generate(meta integer DEFAULT 0) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_generate_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
-- PARALLEL RESTRICTED: a backfill numbers its IDs in the order of its calls, which parallel
-- workers would interleave.
CREATE FUNCTION sno_generate_at(meta integer, at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_generate_at_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
CREATE FUNCTION sno_generator_stats(
    OUT "partition" integer, OUT sequence_min integer, OUT sequence_max integer,
    OUT tick_tock integer, OUT last_time timestamptz, OUT generated bigint,
    OUT backfilled bigint, OUT overflow_stalls bigint, OUT clock_regressions bigint,
    OUT regression_waits bigint, OUT persisted_through timestamptz,
    OUT state_file_failures bigint, OUT waiting_until timestamptz, OUT generating boolean)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_generator_stats_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE
    ROWS 1;
CREATE FUNCTION sno_backfill_cursors(
    OUT meta integer, OUT tick_tock integer, OUT last_time timestamptz,
    OUT other_last_time timestamptz, OUT clock_regressions bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_backfill_cursors_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sno_generate(integer) IS
    'a new ID from the server''s shared generator, stamped with meta (0..255); never repeats';
COMMENT ON FUNCTION sno_generate_at(integer, timestamptz) IS
    'an ID for the given time (backfills), in sno.backfill_partition: never repeats an ID this '
    'server returned; calls go forward in time per meta (ORDER BY the time), and a third pass '
    'over the same times raises 55000 instead of repeating';
COMMENT ON FUNCTION sno_generator_stats() IS
    'the shared generator''s settings, state and counters; generating is false while '
    'sno_generate and sno_generate_at are off (the state file or the settings: they say why)';
COMMENT ON FUNCTION sno_backfill_cursors() IS
    'for each meta sno_generate_at has used: its timeline, the last time it reached, the last '
    'time the other timeline reached, and how often a call for an earlier time turned it';

-- Backfills: for the roles an administrator grants them to (issue 22). sno_generate_at moves
-- the server's durable backfill cursors, which only a superuser can retire.
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
