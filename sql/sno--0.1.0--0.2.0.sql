-- sno 0.1.0 -> 0.2.0: ALTER EXTENSION sno UPDATE runs this. sql/sno.sql is the whole 0.2.0 script;
-- every change made there since 0.1.0 is made here too, in the same words where it can be.

-- Complain if the script is sourced in psql rather than run by ALTER EXTENSION.
\echo Use "ALTER EXTENSION sno UPDATE TO '0.2.0'" to load this file. \quit

-- Time predicates (issue 25): the exact bounds the planner rewrites sno_time(id) comparisons
-- into, and sno_maintain_partitions.

CREATE FUNCTION sno_min_at_or_after(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_min_at_or_after_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_min_after(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_min_after_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_max_at_or_before(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_max_at_or_before_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_max_before(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_max_before_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sno_min_at_or_after(timestamptz) IS
    'the smallest ID whose time is at or after the given one (NULL if none): '
    'sno_time(id) >= at is id >= sno_min_at_or_after(at)';
COMMENT ON FUNCTION sno_min_after(timestamptz) IS
    'the smallest ID whose time is after the given one (NULL if none): '
    'sno_time(id) > at is id >= sno_min_after(at)';
COMMENT ON FUNCTION sno_max_at_or_before(timestamptz) IS
    'the largest ID whose time is at or before the given one (NULL if none): '
    'sno_time(id) <= at is id <= sno_max_at_or_before(at)';
COMMENT ON FUNCTION sno_max_before(timestamptz) IS
    'the largest ID whose time is before the given one (NULL if none): '
    'sno_time(id) < at is id <= sno_max_before(at)';

-- Keeps a table PARTITION BY RANGE (id) supplied with partitions of `span` (fixed, like
-- '1 day', or whole months), counted from 2010-01-04 00:00 UTC (a Monday) or from January 2010:
-- creates the partition of `at` and `ahead` more after it where missing, and detaches (does not
-- drop) those whose every ID is older than at - `keep`. Returns what it did. Run it from cron or
-- pg_cron well within one span (docs/time.md).
CREATE FUNCTION sno_maintain_partitions(parent regclass, span interval, ahead integer DEFAULT 3,
    keep interval DEFAULT NULL, at timestamptz DEFAULT now())
    RETURNS TABLE (action text, "partition" regclass, from_time timestamptz, to_time timestamptz)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    strategy "char";
    key_columns int2vector;
    key_type regtype;
    parent_schema name;
    parent_name name;
    whole_days boolean;
    first_start timestamptz;
    window_start timestamptz;
    window_end timestamptz;
    lower_id @extschema@.sno;
    upper_id @extschema@.sno;
    bound_text text;
    suffix text;
    child record;
BEGIN
    IF parent IS NULL OR span IS NULL OR ahead IS NULL OR at IS NULL THEN
        RAISE EXCEPTION 'sno_maintain_partitions: parent, span, ahead and at must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT p.partstrat, p.partattrs, a.atttypid::regtype INTO strategy, key_columns, key_type
    FROM pg_partitioned_table p
    LEFT JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
    WHERE p.partrelid = parent AND p.partnatts = 1;
    IF strategy IS DISTINCT FROM 'r' OR key_type IS DISTINCT FROM '@extschema@.sno'::regtype THEN
        RAISE EXCEPTION 'sno_maintain_partitions: % is not partitioned by range of one sno column',
            parent
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Create it with PARTITION BY RANGE (id), where id is of type sno.';
    END IF;
    IF ahead < 0 OR ahead > 1000 THEN
        RAISE EXCEPTION 'sno_maintain_partitions: ahead must be 0..1000, not %', ahead
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF span <= interval '0' OR (extract(month FROM span) <> 0 OR extract(year FROM span) <> 0)
            AND span <> date_trunc('month', span) THEN
        RAISE EXCEPTION 'sno_maintain_partitions: span % is neither positive and fixed nor whole months',
            span
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use a span such as ''1 hour'', ''1 day'', ''7 days'' or ''1 month''.';
    END IF;
    SELECT n.nspname, c.relname INTO parent_schema, parent_name
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent;

    -- The start of the span that holds `at`, in UTC.
    IF span = date_trunc('month', span) AND span >= interval '1 month' THEN
        first_start := (timestamp '2010-01-01'
            + floor(((extract(year FROM at AT TIME ZONE 'UTC') - 2010) * 12
                     + extract(month FROM at AT TIME ZONE 'UTC') - 1)
                    / (extract(year FROM span) * 12 + extract(month FROM span)))::integer
              * span) AT TIME ZONE 'UTC';
        whole_days := true;
    ELSE
        first_start := date_bin(span, at, timestamptz '2010-01-04 00:00:00+00');
        whole_days := extract(epoch FROM span)::numeric % 86400 = 0;
    END IF;

    FOR step IN 0..ahead LOOP
        window_start := ((first_start AT TIME ZONE 'UTC') + step * span) AT TIME ZONE 'UTC';
        window_end := ((first_start AT TIME ZONE 'UTC') + (step + 1) * span) AT TIME ZONE 'UTC';
        lower_id := @extschema@.sno_min_at_or_after(window_start);
        EXIT WHEN lower_id IS NULL;  -- past the last time an ID can hold
        upper_id := @extschema@.sno_min_at_or_after(window_end);
        CONTINUE WHEN upper_id OPERATOR(@extschema@.=) lower_id;  -- wholly before 2010
        bound_text := format('FOR VALUES FROM (%L) TO (%s)', lower_id,
            coalesce(quote_literal(upper_id::text), 'MAXVALUE'));
        CONTINUE WHEN EXISTS (
            SELECT FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = parent AND pg_get_expr(c.relpartbound, c.oid) = bound_text);
        suffix := '_p' || to_char(window_start AT TIME ZONE 'UTC',
            CASE WHEN whole_days THEN 'YYYYMMDD' ELSE 'YYYYMMDD"_"HH24MISS' END);
        EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s %s', parent_schema,
            left(parent_name, 63 - octet_length(suffix)) || suffix, parent, bound_text);
        action := 'created';
        partition := format('%I.%I', parent_schema,
            left(parent_name, 63 - octet_length(suffix)) || suffix)::regclass;
        from_time := window_start;
        to_time := window_end;
        RETURN NEXT;
    END LOOP;

    IF keep IS NOT NULL THEN
        FOR child IN
            SELECT c.oid::regclass AS child_table, m[1]::@extschema@.sno AS lower_bound,
                   m[2]::@extschema@.sno AS upper_bound
            FROM pg_inherits i
            JOIN pg_class c ON c.oid = i.inhrelid,
            LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
                '^FOR VALUES FROM \(''([2-9a-x]{16})''\) TO \(''([2-9a-x]{16})''\)$') AS m
            WHERE i.inhparent = parent
              AND @extschema@.sno_time(m[2]::@extschema@.sno) <= at - keep
            ORDER BY 2
        LOOP
            EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, child.child_table);
            action := 'detached';
            partition := child.child_table;
            from_time := @extschema@.sno_time(child.lower_bound);
            to_time := @extschema@.sno_time(child.upper_bound);
            RETURN NEXT;
        END LOOP;
    END IF;
END
$function$;

COMMENT ON FUNCTION sno_maintain_partitions(regclass, interval, integer, interval, timestamptz) IS
    'for a table partitioned by range of its sno key: creates the partition of at (default now()) '
    'and ahead more of span each where missing, detaches those older than at - keep; returns '
    'what it did';
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
