-- sno: compact, sortable, unique 10-byte IDs.

-- Complain if the script is sourced in psql rather than run by CREATE EXTENSION (which drops
-- this line).
\echo Use "CREATE EXTENSION sno" to load this file. \quit

--
-- Every object of the extension is declared here. Functions written in Rust are C functions
-- whose symbol is the Rust name plus "_wrapper".

-- The type -------------------------------------------------------------------------------------

CREATE TYPE sno;

CREATE FUNCTION sno_in(cstring) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_in_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_out(sno) RETURNS cstring
    AS 'MODULE_PATHNAME', 'sno_out_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_recv(internal) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_recv_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_send(sno) RETURNS bytea
    AS 'MODULE_PATHNAME', 'sno_send_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE sno (
    INTERNALLENGTH = 10,
    INPUT = sno_in,
    OUTPUT = sno_out,
    RECEIVE = sno_recv,
    SEND = sno_send,
    ALIGNMENT = char,
    STORAGE = plain,
    CATEGORY = 'U'
);

COMMENT ON TYPE sno IS
    'sno ID: 10 bytes (4 ms time, tick-tock bit, meta, partition, sequence), k-sortable; text form is 16 base32 characters';
COMMENT ON FUNCTION sno_in(cstring) IS 'text input of sno: 16 characters of 2-9 and a-x (A-X accepted)';
COMMENT ON FUNCTION sno_out(sno) IS 'text output of sno: 16 lowercase characters';
COMMENT ON FUNCTION sno_recv(internal) IS 'binary input of sno: the 10 raw bytes';
COMMENT ON FUNCTION sno_send(sno) IS 'binary output of sno: the 10 raw bytes';

-- Comparison -----------------------------------------------------------------------------------

CREATE FUNCTION sno_eq(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_eq_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_ne(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_ne_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_lt(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_lt_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_le(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_le_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_gt(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_gt_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_ge(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_ge_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_cmp(sno, sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_cmp_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_sortsupport(internal) RETURNS void
    AS 'MODULE_PATHNAME', 'sno_sortsupport_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_hash(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_hash_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_hash_extended(sno, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME', 'sno_hash_extended_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION sno_eq(sno, sno) IS 'implementation of = for sno';
COMMENT ON FUNCTION sno_ne(sno, sno) IS 'implementation of <> for sno';
COMMENT ON FUNCTION sno_lt(sno, sno) IS 'implementation of < for sno';
COMMENT ON FUNCTION sno_le(sno, sno) IS 'implementation of <= for sno';
COMMENT ON FUNCTION sno_gt(sno, sno) IS 'implementation of > for sno';
COMMENT ON FUNCTION sno_ge(sno, sno) IS 'implementation of >= for sno';
COMMENT ON FUNCTION sno_cmp(sno, sno) IS 'btree comparison of sno: byte order, which is time order';
COMMENT ON FUNCTION sno_sortsupport(internal) IS 'btree sort support for sno, with abbreviated keys';
COMMENT ON FUNCTION sno_hash(sno) IS 'hash of sno';
COMMENT ON FUNCTION sno_hash_extended(sno, bigint) IS 'seeded 64-bit hash of sno';

CREATE OPERATOR = (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR = (sno, sno) IS 'equal';
COMMENT ON OPERATOR <> (sno, sno) IS 'not equal';
COMMENT ON OPERATOR < (sno, sno) IS 'less than (earlier, for IDs of different 4 ms units)';
COMMENT ON OPERATOR <= (sno, sno) IS 'less than or equal';
COMMENT ON OPERATOR > (sno, sno) IS 'greater than (later, for IDs of different 4 ms units)';
COMMENT ON OPERATOR >= (sno, sno) IS 'greater than or equal';

-- Aggregates ------------------------------------------------------------------------------------

CREATE FUNCTION sno_smaller(sno, sno) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_smaller_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_larger(sno, sno) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_larger_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE min(sno) (
    SFUNC = sno_smaller, STYPE = sno, COMBINEFUNC = sno_smaller, SORTOP = <, PARALLEL = SAFE
);
CREATE AGGREGATE max(sno) (
    SFUNC = sno_larger, STYPE = sno, COMBINEFUNC = sno_larger, SORTOP = >, PARALLEL = SAFE
);

COMMENT ON FUNCTION sno_smaller(sno, sno) IS 'the smaller of two IDs';
COMMENT ON FUNCTION sno_larger(sno, sno) IS 'the larger of two IDs';
COMMENT ON AGGREGATE min(sno) IS 'the smallest (earliest) ID; uses a btree index when there is one';
COMMENT ON AGGREGATE max(sno) IS 'the largest (latest) ID; uses a btree index when there is one';

-- Index support --------------------------------------------------------------------------------

CREATE OPERATOR CLASS sno_ops DEFAULT FOR TYPE sno USING btree AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 sno_cmp(sno, sno),
    FUNCTION 2 sno_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS sno_ops DEFAULT FOR TYPE sno USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 sno_hash(sno),
    FUNCTION 2 sno_hash_extended(sno, bigint);

CREATE OPERATOR CLASS sno_minmax_ops DEFAULT FOR TYPE sno USING brin AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 brin_minmax_opcinfo(internal),
    FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
    FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
    FUNCTION 4 brin_minmax_union(internal, internal, internal);

COMMENT ON OPERATOR CLASS sno_ops USING btree IS
    'default btree operator class for sno: byte order, sort support, deduplication';
COMMENT ON OPERATOR FAMILY sno_ops USING btree IS 'btree operators for sno';
COMMENT ON OPERATOR CLASS sno_ops USING hash IS 'default hash operator class for sno';
COMMENT ON OPERATOR FAMILY sno_ops USING hash IS 'hash operators for sno';
COMMENT ON OPERATOR CLASS sno_minmax_ops USING brin IS
    'default BRIN operator class for sno: min/max ranges, small for time-ordered IDs';
COMMENT ON OPERATOR FAMILY sno_minmax_ops USING brin IS 'BRIN min/max operators for sno';

-- Decoding -------------------------------------------------------------------------------------

CREATE FUNCTION sno_time(sno) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'sno_time_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_tick_tock(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_tick_tock_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_meta(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_meta_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_partition(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_partition_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_sequence(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_sequence_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_decode(id sno,
    OUT "time" timestamptz, OUT tick_tock integer, OUT meta integer,
    OUT "partition" integer, OUT "sequence" integer)
    RETURNS record
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT @extschema@.sno_time(id), @extschema@.sno_tick_tock(id), @extschema@.sno_meta(id),
                 @extschema@.sno_partition(id), @extschema@.sno_sequence(id) $$;

COMMENT ON FUNCTION sno_time(sno) IS 'the start of the 4 ms unit the ID was made in';
COMMENT ON FUNCTION sno_tick_tock(sno) IS
    'the tick-tock bit (0 or 1): flips when the generator handles a clock regression';
COMMENT ON FUNCTION sno_meta(sno) IS 'the metabyte (0..255): the caller''s, e.g. which table';
COMMENT ON FUNCTION sno_partition(sno) IS 'the partition (0..65535): which generator made the ID';
COMMENT ON FUNCTION sno_sequence(sno) IS 'the sequence (0..65535) within the 4 ms unit';
COMMENT ON FUNCTION sno_decode(sno) IS 'all parts of the ID as one record';

-- Construction ---------------------------------------------------------------------------------

CREATE FUNCTION sno_from_parts(at timestamptz, meta integer, "partition" integer,
    "sequence" integer, tick_tock integer DEFAULT 0) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_from_parts_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_min(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_min_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_max(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_max_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sno_from_parts(timestamptz, integer, integer, integer, integer) IS
    'the ID made of these parts; the time is truncated to its 4 ms unit';
COMMENT ON FUNCTION sno_min(timestamptz) IS
    'the smallest ID of the 4 ms unit containing the time: use as an inclusive lower bound';
COMMENT ON FUNCTION sno_max(timestamptz) IS
    'the largest ID of the 4 ms unit containing the time: use as an inclusive upper bound';

-- Time predicates ------------------------------------------------------------------------------
-- The exact ID bounds of a time comparison, NULL where no ID qualifies; never an error. With sno
-- loaded, the planner rewrites sno_time(id) OP t (and id::timestamptz OP t) into id OP these
-- (src/pg/sql/time_predicates.rs), so an index on id answers it and partitions by range of id
-- prune.

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

-- Casts ----------------------------------------------------------------------------------------

CREATE FUNCTION sno_to_bytea(sno) RETURNS bytea
    AS 'MODULE_PATHNAME', 'sno_send_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_from_bytea(bytea) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_from_bytea_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sno_to_bytea(sno) IS 'the 10 bytes of the ID';
COMMENT ON FUNCTION sno_from_bytea(bytea) IS 'the ID of exactly 10 bytes';

CREATE CAST (sno AS bytea) WITH FUNCTION sno_to_bytea(sno);
-- AS ASSIGNMENT: INSERT and UPDATE take the 10 bytes that drivers send for a byte string
-- (psycopg, asyncpg, pgJDBC); expressions still need the explicit cast, so nothing that
-- resolved before becomes ambiguous.
CREATE CAST (bytea AS sno) WITH FUNCTION sno_from_bytea(bytea) AS ASSIGNMENT;
CREATE CAST (sno AS timestamptz) WITH FUNCTION sno_time(sno);

COMMENT ON CAST (sno AS bytea) IS 'the 10 bytes of the ID';
COMMENT ON CAST (bytea AS sno) IS 'the ID of exactly 10 bytes; also applied on assignment';
COMMENT ON CAST (sno AS timestamptz) IS 'the start of the ID''s 4 ms unit';

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
