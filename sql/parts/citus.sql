
-- Citus (needs nothing from Citus to be created) ------------------------------------------------

CREATE FUNCTION sno_partitions(
    OUT generator text, OUT "partition" integer, OUT sequence_min integer,
    OUT sequence_max integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_partitions_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE
    ROWS 2;
-- PARALLEL UNSAFE: it opens connections to the other nodes through Citus.
CREATE FUNCTION sno_check_partitions(
    OUT nodeid integer, OUT nodename text, OUT nodeport integer, OUT generator text,
    OUT "partition" integer, OUT sequence_min integer, OUT sequence_max integer)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_check_partitions_wrapper' LANGUAGE C VOLATILE STRICT
    PARALLEL UNSAFE
    -- The queries it runs resolve no name through the caller's search_path.
    SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION sno_partitions() IS
    'the partitions and sequence ranges this server generates IDs in: sno_generate''s, and '
    'sno_generate_at''s when sno.backfill_partition is set; none without preloading';
COMMENT ON FUNCTION sno_check_partitions() IS
    'on a Citus coordinator: every node''s sno_partitions(); raises F0000 naming the nodes if '
    'two of them could make the same ID';

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
