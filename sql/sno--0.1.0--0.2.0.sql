-- sno 0.1.0 -> 0.2.0: ALTER EXTENSION sno UPDATE runs this. sql/sno.sql is the whole 0.2.0 script;
-- every change made there since 0.1.0 is made here too, in the same words where it can be.

-- Complain if the script is sourced in psql rather than run by ALTER EXTENSION.
\echo Use "ALTER EXTENSION sno UPDATE TO '0.2.0'" to load this file. \quit

-- sno_check_partitions() with a fixed search_path (issue 22): the queries it runs resolve no name
-- through the caller's search_path.
ALTER FUNCTION sno_check_partitions() SET search_path = pg_catalog, pg_temp;

-- sno_partition_watch() (issue 22): what a Citus coordinator's partition watch found.
-- Filled in by a background worker on a server that preloads citus as well as sno.
CREATE FUNCTION sno_partition_watch(
    OUT watching boolean, OUT checked_at timestamptz, OUT databases integer, OUT nodes integer,
    OUT clashes integer, OUT unanswered integer, OUT detail text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_partition_watch_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION sno_partition_watch() IS
    'on a Citus coordinator: what the partition watch found at its last check '
    '(sno.citus_watch_interval): clashes > 0 means two nodes can make the same ID';
