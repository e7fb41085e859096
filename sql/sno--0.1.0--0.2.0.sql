-- sno 0.1.0 -> 0.2.0: ALTER EXTENSION sno UPDATE runs this. sql/sno.sql is the whole 0.2.0 script;
-- every change made there since 0.1.0 is made here too, in the same words where it can be.

-- Complain if the script is sourced in psql rather than run by ALTER EXTENSION.
\echo Use "ALTER EXTENSION sno UPDATE TO '0.2.0'" to load this file. \quit

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
