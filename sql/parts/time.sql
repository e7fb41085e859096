
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
