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

-- Moving existing tables to sno (issue 35): sno_migration_steps and the steps it lists.

-- Moving a table's key to sno (docs/migration.md) ----------------------------------------------
-- A table with a one-column bigint, integer, smallint or uuid primary key, and the tables whose
-- foreign keys point at it, move to an sno key in steps that each can be run again after a
-- failure: prepare (new columns beside the old), fill (IDs in time order, in batches), VACUUM,
-- indexes (CONCURRENTLY; these two from sno_migration_steps), validate (the constraints, without blocking writes),
-- switch (one short transaction: the new columns take the old names and the keys), and, when the
-- application no longer reads the old key, drop_old_key. Each runs as the caller (SECURITY
-- INVOKER): the caller must own the tables. Names: key column K becomes K_sno beside K until the
-- switch, then K, and the old one K_old; a referencing column F likewise (F_sno, then F and F_old).

-- Keeps a copied key in step with the key it follows, while both exist: on INSERT, or an UPDATE
-- of the following column, it looks the row's parent up and copies one of its columns.
-- Arguments: the parent table's oid (renames do not break it), the parent's column to match, the parent's column to copy,
-- this table's column that matches, this table's column that receives the copy.
-- The extension's schema is on the path for sno's = (the match is on sno after the switch).
CREATE FUNCTION sno_migration_copy_key() RETURNS trigger
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, @extschema@, pg_temp
    AS $function$
DECLARE
    copied text;
BEGIN
    EXECUTE format('SELECT p.%I::text FROM %s AS p WHERE p.%I = ($1).%I',
                   TG_ARGV[2], TG_ARGV[0]::oid::regclass, TG_ARGV[1], TG_ARGV[3])
        USING NEW INTO copied;
    NEW := jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[4], copied));
    RETURN NEW;
END
$function$;
COMMENT ON FUNCTION sno_migration_copy_key() IS
    'trigger of a key migration (sno_migration_steps): copies the parent''s new (or, after the '
    'switch, old) key into a referencing row; arguments: parent oid, parent match column, parent '
    'copied column, own match column, own receiving column';

-- The foreign keys that point at the table's column `key_column`, one row each.
CREATE FUNCTION sno_migration_references(tab regclass, key_column name)
    RETURNS TABLE (constraint_name name, referencing_table regclass, referencing_column name,
                   single_column boolean, column_not_null boolean, on_update "char",
                   on_delete "char")
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT c.conname, c.conrelid::regclass, a.attname, cardinality(c.conkey) = 1, a.attnotnull,
           c.confupdtype, c.confdeltype
    FROM pg_constraint c
    JOIN pg_attribute k ON k.attrelid = c.confrelid AND k.attnum = ANY (c.confkey)
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND c.confrelid = tab AND k.attname = key_column
      AND c.conparentid = 0
    ORDER BY c.conrelid::regclass::text, c.conname
$function$;
COMMENT ON FUNCTION sno_migration_references(regclass, name) IS
    'the foreign keys that point at the column of the table: their names, tables, columns and '
    'actions (as pg_constraint codes them)';

-- What stops a table from moving to sno as it is: one row per problem, with what to do. None:
-- sno_migration_prepare can start. time_column, when given, must be a timestamptz, timestamp or
-- date column of the table.
CREATE FUNCTION sno_migration_check(tab regclass, time_column name DEFAULT NULL)
    RETURNS TABLE (problem text, remedy text)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    key_column name;
    key_type regtype;
    key_count integer;
    tables regclass[];
    time_type regtype;
    ref record;
BEGIN
    IF tab IS NULL THEN
        RAISE EXCEPTION 'sno_migration_check: the table must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT count(*), min(a.attname), min(a.atttypid)::regtype INTO key_count, key_column, key_type
    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
    WHERE i.indrelid = tab AND i.indisprimary;
    IF key_count <> 1 OR key_type NOT IN ('bigint', 'integer', 'smallint', 'uuid', '@extschema@.sno') THEN
        RETURN QUERY SELECT format('%s has no one-column primary key of type bigint, integer, '
                                   'smallint or uuid', tab),
                            'Give it one (ALTER TABLE ... ADD PRIMARY KEY), or move it by hand.'::text;
        RETURN;
    END IF;
    IF key_type = '@extschema@.sno'::regtype THEN
        RETURN QUERY SELECT format('%s already has an sno primary key (%I)', tab, key_column),
                            'Nothing to move; sno_migration_steps(..., stage => ''drop_old_key'') '
                            'drops what a migration kept of the old key.'::text;
        RETURN;
    END IF;
    IF octet_length(key_column) > 59 THEN
        RETURN QUERY SELECT format('the key column''s name %I is too long for %I', key_column,
                                   key_column || '_sno'),
                            'Rename the column to at most 59 characters.'::text;
    END IF;
    IF time_column IS NOT NULL THEN
        SELECT a.atttypid::regtype INTO time_type FROM pg_attribute a
        WHERE a.attrelid = tab AND a.attname = time_column AND a.attnum > 0 AND NOT a.attisdropped;
        IF time_type IS NULL OR time_type NOT IN ('timestamptz', 'timestamp', 'date') THEN
            RETURN QUERY SELECT format('%s has no column %I of type timestamptz, timestamp or date',
                                       tab, time_column),
                                'Name the column that holds each row''s time, or none: the IDs '
                                'then take the time of the migration, in the order of the key.'::text;
        END IF;
    END IF;

    FOR ref IN SELECT * FROM @extschema@.sno_migration_references(tab, key_column) LOOP
        IF NOT ref.single_column THEN
            RETURN QUERY SELECT format('foreign key %I of %s points at %I with other columns',
                                       ref.constraint_name, ref.referencing_table, key_column),
                                'Move it by hand, or drop it for the migration.'::text;
        ELSIF ref.referencing_table = tab THEN
            RETURN QUERY SELECT format('foreign key %I of %s points at its own table',
                                       ref.constraint_name, tab),
                                'Drop it for the migration and add it again on the sno key.'::text;
        ELSIF octet_length(ref.referencing_column) > 59 THEN
            RETURN QUERY SELECT format('column %I of %s: its name is too long for %I',
                                       ref.referencing_column, ref.referencing_table,
                                       ref.referencing_column || '_sno'),
                                'Rename the column to at most 59 characters.'::text;
        END IF;
    END LOOP;
    -- The copy of a reference is made as its row is written: a deferred foreign key lets the
    -- row come before its parent, and a policy on the parent hides it from the writer.
    RETURN QUERY
    SELECT format('foreign key %I of %s is deferrable', c.conname, c.conrelid::regclass),
           'Make it NOT DEFERRABLE for the migration (ALTER TABLE ... ALTER CONSTRAINT ... NOT '
           'DEFERRABLE), and deferrable again after the switch.'::text
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.confrelid = tab AND c.condeferrable;
    RETURN QUERY
    SELECT format('%s has row-level security', tab),
           'The referencing rows'' trigger looks their parent up as the writing role: disable it '
           'for the migration (ALTER TABLE ... DISABLE ROW LEVEL SECURITY), or move by hand.'::text
    FROM pg_class c WHERE c.oid = tab AND c.relrowsecurity;
    RETURN QUERY
    SELECT format('foreign key %I of %s is not validated', c.conname, c.conrelid::regclass),
           'Validate it first (ALTER TABLE ... VALIDATE CONSTRAINT), or drop it.'::text
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.confrelid = tab AND NOT c.convalidated;
    RETURN QUERY
    SELECT format('column %I of %s has %s foreign keys to %s', a.attname, c.conrelid::regclass,
                  count(*), tab),
           'Drop all but one for the migration.'::text
    FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND c.confrelid = tab AND cardinality(c.conkey) = 1
    GROUP BY a.attname, c.conrelid HAVING count(*) > 1;
    -- The names the migration gives: K_sno (an sno column, if a run made it) and K_old.
    RETURN QUERY
    WITH named AS (
        SELECT tab AS tbl, key_column AS col
        UNION ALL
        SELECT r.referencing_table, r.referencing_column
        FROM @extschema@.sno_migration_references(tab, key_column) r WHERE r.single_column
    )
    SELECT format('%s already has a column %I', n.tbl, a.attname),
           'Rename it: the migration names its columns _sno and _old.'::text
    FROM named n JOIN pg_attribute a ON a.attrelid = n.tbl AND NOT a.attisdropped
     AND (a.attname = n.col || '_old'
          OR a.attname = n.col || '_sno' AND a.atttypid <> '@extschema@.sno'::regtype);
    RETURN QUERY
    SELECT format('foreign key %I of %s sets a default or some of its columns to NULL',
                  c.conname, c.conrelid::regclass),
           'Drop it for the migration and add it again on the sno key.'::text
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.confrelid = tab
      AND (c.confdelsetcols IS NOT NULL OR 'd' IN (c.confupdtype, c.confdeltype));

    tables := ARRAY[tab] || ARRAY(SELECT DISTINCT r.referencing_table
                                  FROM @extschema@.sno_migration_references(tab, key_column) r
                                  WHERE r.referencing_table <> tab);
    RETURN QUERY
    SELECT format('%s is %s', c.oid::regclass,
                  CASE WHEN c.relkind = 'p' THEN 'partitioned' WHEN c.relispartition THEN 'a partition'
                       WHEN c.relkind = 'f' THEN 'a foreign table' ELSE 'not a plain table' END),
           'Partitioned, partition, foreign and other tables are not moved: move them by hand.'::text
    FROM pg_class c WHERE c.oid = ANY (tables) AND (c.relkind <> 'r' OR c.relispartition);
    RETURN QUERY
    SELECT format('%s has inheritance %s', t.oid::regclass,
                  CASE WHEN EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = t.oid)
                       THEN 'children' ELSE 'parents' END),
           'Tables in an inheritance tree are not moved: move them by hand.'::text
    FROM pg_class t WHERE t.oid = ANY (tables)
      AND EXISTS (SELECT FROM pg_inherits i WHERE t.oid IN (i.inhrelid, i.inhparent));
    RETURN QUERY
    SELECT format('%s has trigger %I', g.tgrelid::regclass, g.tgname),
           'Its function may use the key, which changes type: drop the trigger for the '
           'migration and create it again after the switch, changed for sno.'::text
    FROM pg_trigger g
    WHERE g.tgrelid = ANY (tables) AND NOT g.tgisinternal
      AND g.tgfoid <> '@extschema@.sno_migration_copy_key()'::regprocedure;
    RETURN QUERY
    SELECT format('%s is in publication %I', format('%I.%I', p.schemaname, p.tablename)::regclass,
                  p.pubname),
           'Subscribers would see a new column, then the key change: remove the table from the '
           'publication for the migration (ALTER PUBLICATION ... DROP TABLE) and resynchronize '
           'after.'::text
    FROM pg_publication_tables p
    WHERE format('%I.%I', p.schemaname, p.tablename)::regclass = ANY (tables);
    -- Views, policies and generated columns that use a key column, and rules on the tables,
    -- would keep the old column after the switch, under its new name.
    RETURN QUERY
    WITH key_columns AS (
        SELECT tab AS tbl, a.attnum FROM pg_attribute a
        WHERE a.attrelid = tab AND a.attname = key_column
        UNION ALL
        SELECT r.referencing_table, a.attnum
        FROM @extschema@.sno_migration_references(tab, key_column) r
        JOIN pg_attribute a ON a.attrelid = r.referencing_table AND a.attname = r.referencing_column
    ), users AS (
        -- Views, policies, and defaults (generated columns) that use a key column.
        SELECT DISTINCT d.classid, d.objid, d.objsubid, d.refobjid, 'uses the key of' AS what
        FROM pg_depend d JOIN key_columns k ON k.tbl = d.refobjid AND d.refobjsubid = k.attnum
        WHERE d.refclassid = 'pg_class'::regclass
          AND d.classid IN ('pg_rewrite'::regclass, 'pg_policy'::regclass, 'pg_attrdef'::regclass)
          -- A column's own default (a sequence's, say) stays with it.
          AND NOT EXISTS (SELECT FROM pg_attrdef ad WHERE d.classid = 'pg_attrdef'::regclass
                          AND ad.oid = d.objid AND ad.adnum = k.attnum)
        UNION
        SELECT 'pg_rewrite'::regclass, r.oid, 0, r.ev_class, 'rewrites the queries of'
        FROM pg_rewrite r JOIN key_columns k ON k.tbl = r.ev_class
    )
    SELECT format('%s %s %s', pg_describe_object(u.classid, u.objid, u.objsubid), u.what,
                  u.refobjid::regclass),
           'It would go on using the old key column after the switch: drop it for the migration '
           'and create it again after the switch.'::text
    FROM users u
    ORDER BY 1;
END
$function$;
COMMENT ON FUNCTION sno_migration_check(regclass, name) IS
    'what stops the table from moving to an sno key (sno_migration_steps): one row per problem, '
    'with what to do; none when the migration can start';

-- The table's primary key column and its type (the old key before the switch, the sno key after).
CREATE FUNCTION sno_migration_key(tab regclass, OUT key_column name, OUT key_type regtype)
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT a.attname, a.atttypid::regtype
    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = tab AND i.indisprimary AND i.indnatts = 1
$function$;
COMMENT ON FUNCTION sno_migration_key(regclass) IS
    'the column and type of the table''s one-column primary key (NULLs if it has none)';

-- A name for an object of a migration: base_suffix, base cut so that it fits in 63 bytes.
CREATE FUNCTION sno_migration_name(base name, suffix text) RETURNS name
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT (left(base, 62 - octet_length(suffix)) || '_' || suffix)::name
$function$;
COMMENT ON FUNCTION sno_migration_name(name, text) IS
    'base_suffix, with base cut to fit a name: how a key migration names its indexes and '
    'constraints';

-- The table that holds the new IDs between their generation and their copy into the table: it
-- makes the fill resumable without generating an ID twice. Dropped when the fill is done.
CREATE FUNCTION sno_migration_work_table(tab regclass) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT format('%I.%I', n.nspname, 'sno_migration_' || c.oid)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tab
$function$;
COMMENT ON FUNCTION sno_migration_work_table(regclass) IS
    'the name of the table in which sno_migration_fill keeps the IDs it made for the table '
    'until they are copied in';

-- The settings of each of a step's transactions (a procedure that commits cannot SET them):
-- names resolved in pg_catalog only, and lock_timeout 10 s when it is unset.
CREATE FUNCTION sno_migration_settings() RETURNS void
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    AS $function$
    SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    SELECT pg_catalog.set_config('lock_timeout', '10s', true)
    WHERE pg_catalog.current_setting('lock_timeout') OPERATOR(pg_catalog.=) '0';
$function$;
COMMENT ON FUNCTION sno_migration_settings() IS
    'sets search_path and (when unset) lock_timeout for the rest of a key migration step''s '
    'transaction';

-- ACCESS EXCLUSIVE on the tables, all at once. First, for a second, tries that take them all
-- or none (NOWAIT, every 50 ms), so that the step neither stands in the queue before the
-- application's statements nor holds one table while it waits for another; then, if they are
-- still busy, it waits in the queue until lock_timeout (10 s when unset), which also makes an
-- autovacuum in the way give up (it yields only to a waiting lock).
CREATE FUNCTION sno_migration_lock(tables regclass[]) RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    patience text := CASE current_setting('lock_timeout') WHEN '0' THEN '10s'
                          ELSE current_setting('lock_timeout') END;
    trying_until timestamptz := clock_timestamp() + interval '1 s';
    listed text := (SELECT string_agg(t::text, ', ' ORDER BY n) FROM unnest(tables)
                    WITH ORDINALITY AS x(t, n));
BEGIN
    LOOP
        BEGIN
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE NOWAIT', listed);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            EXIT WHEN clock_timestamp() > trying_until;
            PERFORM pg_sleep(0.05);
        END;
    END LOOP;
    PERFORM set_config('lock_timeout', patience, true);
    BEGIN
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', listed);
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'sno_migration: could not lock % within %', listed, patience
            USING ERRCODE = 'lock_not_available',
                  HINT = 'Transactions on them held locks throughout: run the step again, or with '
                         'a longer lock_timeout.';
    END;
END
$function$;
COMMENT ON FUNCTION sno_migration_lock(regclass[]) IS
    'takes ACCESS EXCLUSIVE on all the tables: a second of tries without waiting, then in the '
    'queue until lock_timeout (10 s when unset); how a key migration''s steps lock';

-- Step 1: a column for the new key beside the old one, which new rows fill from sno_generate;
-- in each referencing table a column for the new reference, kept by a trigger. One short
-- transaction (ACCESS EXCLUSIVE on each table, no rewrite). Refuses what it cannot move.
CREATE PROCEDURE sno_migration_prepare(tab regclass, meta integer)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $procedure$
DECLARE
    key_column name;
    new_column name;
    problems text;
    remedies text;
    ref record;
BEGIN
    SELECT string_agg(c.problem, E'\n' ORDER BY c.n), string_agg(DISTINCT c.remedy, E'\n')
    INTO problems, remedies
    FROM @extschema@.sno_migration_check(tab) WITH ORDINALITY AS c(problem, remedy, n);
    IF problems IS NOT NULL THEN
        RAISE EXCEPTION 'sno_migration_prepare: % cannot move to an sno key as it is', tab
            USING ERRCODE = 'feature_not_supported', DETAIL = problems, HINT = remedies;
    END IF;
    IF meta IS NULL OR meta NOT BETWEEN 0 AND 255 THEN
        RAISE EXCEPTION 'sno_migration_prepare: meta must be 0..255, not %', meta
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT k.key_column INTO key_column FROM @extschema@.sno_migration_key(tab) k;
    new_column := key_column || '_sno';
    PERFORM @extschema@.sno_migration_lock(ARRAY[tab] || ARRAY(
        SELECT DISTINCT r.referencing_table
        FROM @extschema@.sno_migration_references(tab, key_column) r));
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = tab AND attname = new_column) THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN %I @extschema@.sno', tab, new_column);
    END IF;
    -- After ADD COLUMN, so that the rows already there keep NULL (no rewrite).
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.sno_generate(%s)',
                   tab, new_column, meta);
    FOR ref IN SELECT * FROM @extschema@.sno_migration_references(tab, key_column) LOOP
        IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = ref.referencing_table
                       AND attname = ref.referencing_column || '_sno') THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN %I @extschema@.sno',
                           ref.referencing_table, ref.referencing_column || '_sno');
        END IF;
        PERFORM @extschema@.sno_migration_follow(tab, key_column, new_column,
                                                 ref.referencing_table, ref.referencing_column,
                                                 ref.referencing_column || '_sno');
    END LOOP;
END
$procedure$;
COMMENT ON PROCEDURE sno_migration_prepare(regclass, integer) IS
    'step 1 of a key migration (sno_migration_steps): adds the sno key column, filled for new '
    'rows by sno_generate(meta), and the referencing tables'' new columns, kept by a trigger';

-- (Re)creates the trigger that keeps a referencing table's column `receiving` a copy of the
-- parent's column `copied`, matched on `parent_match` = `own_match`. Named after the numbers of
-- the two columns, which the switch swaps, so that it replaces the trigger under the same name.
CREATE FUNCTION sno_migration_follow(parent regclass, parent_match name, copied name,
                                     child regclass, own_match name, receiving name)
    RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    trigger_name name := (SELECT 'sno_migration_key_' || min(attnum) || '_' || max(attnum)
                          FROM pg_attribute WHERE attrelid = child
                            AND attname IN (own_match, receiving));
BEGIN
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = child AND tgname = trigger_name) THEN
        EXECUTE format('DROP TRIGGER %I ON %s', trigger_name, child);
    END IF;
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OF %I ON %s FOR EACH ROW '
                   'EXECUTE FUNCTION @extschema@.sno_migration_copy_key(%L, %L, %L, %L, %L)',
                   trigger_name, own_match, child, parent::oid, parent_match, copied, own_match,
                   receiving);
    -- Also where session_replication_role = replica (a restore, a replication tool).
    EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', child, trigger_name);
END
$function$;
COMMENT ON FUNCTION sno_migration_follow(regclass, name, name, regclass, name, name) IS
    'creates the trigger of a key migration that keeps a referencing table''s column a copy of '
    'its parent''s (sno_migration_copy_key)';

-- Gives column `to_column` of `tab` the privileges granted on its column `from_column`, to the
-- same roles (PUBLIC included), with the same grant options. Column privileges belong to a
-- column, not to its name: without this a role granted SELECT (id) would, after the switch,
-- read id_old and be refused the new id.
CREATE FUNCTION sno_migration_copy_grants(tab regclass, from_column name, to_column name)
    RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    statement text;
BEGIN
    FOR statement IN
        SELECT format('GRANT %s (%I) ON TABLE %s TO %s%s', acl.privilege_type, to_column, tab,
                      CASE WHEN acl.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END,
                      CASE WHEN acl.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
        FROM pg_attribute a
        CROSS JOIN LATERAL aclexplode(a.attacl) AS acl
        LEFT JOIN pg_roles r ON r.oid = acl.grantee
        WHERE a.attrelid = tab AND a.attname = from_column
        ORDER BY acl.grantee, acl.privilege_type
    LOOP
        EXECUTE statement;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION sno_migration_copy_grants(regclass, name, name) IS
    'gives a column of a table the column privileges granted on another of its columns (the '
    'switch of a key migration: the new key column those of the old one)';

-- Step 2: the IDs. First, in one transaction, every row without one gets an ID in the order of
-- time_column (sno_generate_at(meta, time)), or without it in the order of the key and at the
-- time of the fill (sno_generate(meta)), kept in the work table (sno_migration_work_table).
-- Then, a transaction per batch_rows rows in the key's order, they are copied into the table;
-- then each referencing table's new column, a transaction per batch of pages (rows the
-- application writes meanwhile without one, validate catches up). Not SET
-- search_path: a procedure with one cannot commit; it sets it for each transaction instead.
CREATE PROCEDURE sno_migration_fill(tab regclass, meta integer, time_column name DEFAULT NULL,
                                    batch_rows integer DEFAULT 50000)
    LANGUAGE plpgsql
    AS $procedure$
DECLARE
    key_column name;
    key_type regtype;
    new_column name;
    work_table text;
    missing bigint;
    earliest timestamptz;
    reach timestamptz;
    last_key text;
    upper_key text;
    ref record;
    pages bigint;
    first_page bigint;
    page_step bigint;
BEGIN
    PERFORM @extschema@.sno_migration_settings();
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    new_column := key_column || '_sno';
    IF batch_rows IS NULL OR batch_rows < 1 THEN
        RAISE EXCEPTION 'sno_migration_fill: batch_rows must be positive, not %', batch_rows
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF key_type IS NULL OR key_type = '@extschema@.sno'::regtype
            OR NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = tab AND attname = new_column
                           AND atttypid = '@extschema@.sno'::regtype) THEN
        RAISE EXCEPTION 'sno_migration_fill: % is not prepared for the move to sno', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Run the steps in the order sno_migration_steps lists them.';
    END IF;
    work_table := @extschema@.sno_migration_work_table(tab);
    -- A table of that name that another role made (or with triggers or rules) is not trusted.
    IF EXISTS (SELECT FROM pg_class c WHERE c.oid = to_regclass(work_table)
               AND (c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user)
                    OR c.relkind <> 'r' OR c.relhastriggers OR c.relhasrules)) THEN
        RAISE EXCEPTION 'sno_migration_fill: % is not a work table of this migration', work_table
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Drop it (see who made it), then call sno_migration_fill again.';
    END IF;

    IF to_regclass(work_table) IS NULL THEN
        IF time_column IS NOT NULL THEN
            EXECUTE format('SELECT count(*) FROM %s WHERE %I IS NULL AND %I IS NULL',
                           tab, new_column, time_column) INTO missing;
            IF missing > 0 THEN
                RAISE EXCEPTION 'sno_migration_fill: % rows of % have no %', missing, tab, time_column
                    USING ERRCODE = 'null_value_not_allowed',
                          HINT = format('Give them a time (UPDATE %s SET %I = ... WHERE %I IS NULL), '
                                        'then call sno_migration_fill again.', tab, time_column,
                                        time_column);
            END IF;
        END IF;
        -- The IDs go in one timeline of the meta: the current one if it has not reached the
        -- earliest time, else the other (a second pass, as after a fill that failed before
        -- its work table was committed), which must not have reached it either.
        IF time_column IS NOT NULL THEN
            EXECUTE format('SELECT min(%I)::timestamptz FROM %s WHERE %I IS NULL',
                           time_column, tab, new_column) INTO earliest;
            SELECT CASE WHEN c.other_last_time IS NOT NULL
                        THEN least(c.last_time, c.other_last_time) END INTO reach
            FROM @extschema@.sno_backfill_cursors() c WHERE c.meta = sno_migration_fill.meta;
            IF reach >= earliest THEN
                RAISE EXCEPTION 'sno_migration_fill: both timelines of meta % reach past %''s earliest % (%)',
                    meta, tab, time_column, earliest
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          HINT = format('Run the steps again with a meta that sno_backfill_cursors() '
                                        'does not list; or, if no table holds backfill IDs of meta '
                                        '%s (those of failed fills were rolled back), a superuser '
                                        'may retire its cursor: SELECT sno_retire_backfill_cursor(%s).',
                                        meta, meta);
            END IF;
        END IF;
        EXECUTE format('CREATE TABLE %s (old_key %s, new_id @extschema@.sno NOT NULL)',
                       work_table, key_type);
        -- The generator runs after the sort, so it sees the times in order.
        EXECUTE format('INSERT INTO %s SELECT %I, %s FROM %s WHERE %I IS NULL ORDER BY %s%I',
                       work_table, key_column,
                       CASE WHEN time_column IS NULL THEN '@extschema@.sno_generate($1)'
                            ELSE format('@extschema@.sno_generate_at($1, %I::timestamptz)',
                                        time_column) END,
                       tab, new_column,
                       CASE WHEN time_column IS NOT NULL THEN quote_ident(time_column) || ', ' END,
                       key_column) USING meta;
        EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (old_key)', work_table);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
    END IF;

    LOOP
        EXECUTE format('SELECT old_key::text FROM (SELECT old_key FROM %s %s '
                       'ORDER BY old_key LIMIT $2) AS b ORDER BY old_key DESC LIMIT 1', work_table,
                       CASE WHEN last_key IS NOT NULL
                            THEN format('WHERE old_key > $1::%s', key_type) END)
            USING last_key, batch_rows INTO upper_key;
        EXIT WHEN upper_key IS NULL;
        -- Whatever the statistics say (none, on a new work table), a batch is a hash join: a
        -- nested loop over the deleted rows would scan them once per row.
        PERFORM set_config('enable_nestloop', 'off', true);
        EXECUTE format('WITH batch AS (DELETE FROM %1$s WHERE old_key <= $2::%2$s %3$s '
                       'RETURNING old_key, new_id) '
                       'UPDATE %4$s AS t SET %5$I = b.new_id FROM batch AS b '
                       'WHERE t.%6$I = b.old_key AND t.%6$I <= $2::%2$s %7$s AND t.%5$I IS NULL',
                       work_table, key_type,
                       CASE WHEN last_key IS NOT NULL THEN format('AND old_key > $1::%s', key_type) END,
                       tab, new_column, key_column,
                       CASE WHEN last_key IS NOT NULL THEN format('AND t.%I > $1::%s', key_column, key_type) END)
            USING last_key, upper_key;
        last_key := upper_key;
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
    END LOOP;
    EXECUTE format('DROP TABLE IF EXISTS %s', work_table);
    COMMIT;
    PERFORM @extschema@.sno_migration_settings();

    FOR ref IN SELECT * FROM @extschema@.sno_migration_references(tab, key_column) LOOP
        SELECT pg_relation_size(c.oid) / current_setting('block_size')::bigint,
               greatest(1, batch_rows / CASE WHEN c.reltuples > 0 AND c.relpages > 0
                                             THEN greatest(1, c.reltuples / c.relpages)
                                             ELSE 100 END)::bigint
        INTO pages, page_step FROM pg_class c WHERE c.oid = ref.referencing_table;
        first_page := 0;
        WHILE first_page < pages LOOP
            -- A page range, each row's parent found through its primary key (not a hash of
            -- the whole parent table for each range).
            PERFORM set_config('enable_hashjoin', 'off', true);
            PERFORM set_config('enable_mergejoin', 'off', true);
            EXECUTE format('UPDATE %s AS r SET %I = p.%I FROM %s AS p WHERE p.%I = r.%I '
                           'AND r.%I IS NULL AND r.ctid >= $1::text::tid AND r.ctid < $2::text::tid',
                           ref.referencing_table, ref.referencing_column || '_sno', new_column,
                           tab, key_column, ref.referencing_column, ref.referencing_column || '_sno')
                USING format('(%s,0)', first_page), format('(%s,0)', first_page + page_step);
            first_page := first_page + page_step;
            COMMIT;
            PERFORM @extschema@.sno_migration_settings();
        END LOOP;
    END LOOP;
END
$procedure$;
COMMENT ON PROCEDURE sno_migration_fill(regclass, integer, name, integer) IS
    'step 2 of a key migration (sno_migration_steps): gives every row its sno key in the order '
    'of time_column (sno_generate_at) or of the key (sno_generate), then the referencing rows '
    'their new references; a transaction per batch; call it again after a failure';

-- The referencing rows whose new column is still NULL where the old one is not, in one UPDATE.
CREATE FUNCTION sno_migration_copy_missing(parent regclass, parent_key name, parent_new name,
                                           child regclass, child_key name)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    copied bigint;
BEGIN
    EXECUTE format('UPDATE %s AS r SET %I = p.%I FROM %s AS p WHERE p.%I = r.%I AND r.%I IS NULL',
                   child, child_key || '_sno', parent_new, parent, parent_key, child_key,
                   child_key || '_sno');
    GET DIAGNOSTICS copied = ROW_COUNT;
    RETURN copied;
END
$function$;
COMMENT ON FUNCTION sno_migration_copy_missing(regclass, name, name, regclass, name) IS
    'copies the parent''s new key into the referencing rows that lack it (a key migration''s '
    'catch-up); returns how many it copied';

-- Step 5 (after the indexes): the constraints that the switch relies on, each added NOT VALID
-- (a moment's lock) and then validated (SHARE UPDATE EXCLUSIVE: reads and writes go on): the
-- sno key is never NULL; each new reference is there exactly where the old one is; each new
-- foreign key, with the old one's actions, holds. Each addition takes its tables as
-- sno_migration_lock does.
CREATE PROCEDURE sno_migration_validate(tab regclass)
    LANGUAGE plpgsql
    AS $procedure$
DECLARE
    key_column name;
    key_type regtype;
    new_column name;
    ref record;
    check_name name;
    fk_name name;
    unfilled boolean;
    -- A foreign key's actions, as pg_constraint codes them.
    actions jsonb := '{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL"}';
BEGIN
    PERFORM @extschema@.sno_migration_settings();
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    new_column := key_column || '_sno';
    IF key_type IS NULL OR key_type = '@extschema@.sno'::regtype
            OR to_regclass(@extschema@.sno_migration_work_table(tab)) IS NOT NULL
            OR NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = tab AND attname = new_column) THEN
        RAISE EXCEPTION 'sno_migration_validate: % has not been filled', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call sno_migration_fill (again) first, as sno_migration_steps lists.';
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT FROM %s WHERE %I IS NULL)', tab, new_column) INTO unfilled;
    IF unfilled THEN
        RAISE EXCEPTION 'sno_migration_validate: % has rows without %', tab, new_column
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call sno_migration_fill (again) first, as sno_migration_steps lists.';
    END IF;
    IF @extschema@.sno_migration_unique_index(tab, new_column) IS NULL THEN
        RAISE EXCEPTION 'sno_migration_validate: % has no valid unique index on %', tab, new_column
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Run the CREATE UNIQUE INDEX CONCURRENTLY that sno_migration_steps lists.';
    END IF;
    -- Added only now: before the fill, it would refuse updates of rows not yet filled.
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = tab
                   AND conname = new_column || '_not_null') THEN
        PERFORM @extschema@.sno_migration_lock(ARRAY[tab]);
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%I IS NOT NULL) NOT VALID',
                       tab, new_column || '_not_null', new_column);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
    END IF;
    EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', tab, new_column || '_not_null');
    COMMIT;
    PERFORM @extschema@.sno_migration_settings();
    FOR ref IN SELECT * FROM @extschema@.sno_migration_references(tab, key_column) LOOP
        PERFORM @extschema@.sno_migration_settings();
        check_name := ref.referencing_column || '_sno_'
            || CASE WHEN ref.column_not_null THEN 'not_null' ELSE 'matches' END;
        IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = ref.referencing_table
                       AND conname = check_name) THEN
            PERFORM @extschema@.sno_migration_lock(ARRAY[ref.referencing_table]);
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s) NOT VALID',
                           ref.referencing_table, check_name,
                           CASE WHEN ref.column_not_null
                                THEN format('%I IS NOT NULL', ref.referencing_column || '_sno')
                                ELSE format('(%I IS NULL) = (%I IS NULL)', ref.referencing_column,
                                            ref.referencing_column || '_sno') END);
            COMMIT;
            PERFORM @extschema@.sno_migration_settings();
        END IF;
        -- Rows written before the constraint that missed the copy: those the application wrote
        -- while the table's own fill ran (their trigger found no new key yet), wherever they are.
        PERFORM @extschema@.sno_migration_copy_missing(tab, key_column, new_column,
                                                       ref.referencing_table,
                                                       ref.referencing_column);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
        EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', ref.referencing_table, check_name);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
        fk_name := @extschema@.sno_migration_name(ref.constraint_name, 'sno');
        IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = ref.referencing_table
                       AND conname = fk_name) THEN
            PERFORM @extschema@.sno_migration_lock(ARRAY[tab, ref.referencing_table]);
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I FOREIGN KEY (%I) REFERENCES %s (%I) '
                           'ON UPDATE %s ON DELETE %s NOT VALID',
                           ref.referencing_table, fk_name, ref.referencing_column || '_sno', tab,
                           new_column, actions ->> ref.on_update::text,
                           actions ->> ref.on_delete::text);
            COMMIT;
            PERFORM @extschema@.sno_migration_settings();
        END IF;
        EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', ref.referencing_table, fk_name);
        COMMIT;
    END LOOP;
END
$procedure$;
COMMENT ON PROCEDURE sno_migration_validate(regclass) IS
    'step 5 of a key migration (sno_migration_steps): adds and validates, without blocking '
    'writes, the constraints the switch relies on, and the new foreign keys';

-- The valid unique index on exactly the table's column, if there is one.
CREATE FUNCTION sno_migration_unique_index(tab regclass, column_name name) RETURNS regclass
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT i.indexrelid::regclass
    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = tab AND a.attname = column_name AND i.indisunique AND i.indisvalid
      AND i.indnatts = 1 AND i.indpred IS NULL AND i.indexprs IS NULL
    ORDER BY i.indisprimary DESC, i.indexrelid
    LIMIT 1
$function$;
COMMENT ON FUNCTION sno_migration_unique_index(regclass, name) IS
    'a valid, whole unique index on exactly the table''s column, or NULL';

-- Step 6: the switch, in one transaction that holds ACCESS EXCLUSIVE on the table and its
-- referencing tables for as long as catalog changes take (no scan, no rewrite): the old foreign
-- keys and primary key go; the sno column becomes the primary key under the key's name, the old
-- key is renamed K_old (kept unique and filled as before); each new reference takes its old
-- column's name and foreign key's name, the old one is renamed F_old and, from now on, copied
-- from the parent's old key by the trigger.
CREATE PROCEDURE sno_migration_switch(tab regclass)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $procedure$
DECLARE
    key_column name;
    key_type regtype;
    new_column name;
    old_column name;
    pkey_name name;
    new_index regclass;
    refs jsonb;
    ref record;
    problem text;
BEGIN
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    new_column := key_column || '_sno';
    old_column := key_column || '_old';
    new_index := @extschema@.sno_migration_unique_index(tab, new_column);
    SELECT string_agg(p, '; ') INTO problem FROM (
        SELECT 'not prepared and filled' AS p
        WHERE key_type IS NULL OR key_type = '@extschema@.sno'::regtype
           OR to_regclass(@extschema@.sno_migration_work_table(tab)) IS NOT NULL
        UNION ALL
        SELECT format('constraint %I not validated', c.conname)
        FROM pg_constraint c WHERE c.conrelid = tab AND c.conname = new_column || '_not_null'
          AND NOT c.convalidated
        UNION ALL
        SELECT 'no valid unique index on ' || quote_ident(new_column) WHERE new_index IS NULL
        UNION ALL
        SELECT format('foreign key %I of %s has no validated sno twin', r.constraint_name,
                      r.referencing_table)
        FROM @extschema@.sno_migration_references(tab, key_column) r
        WHERE NOT EXISTS (SELECT FROM pg_constraint n WHERE n.conrelid = r.referencing_table
                          AND n.conname = @extschema@.sno_migration_name(r.constraint_name, 'sno') AND n.convalidated)
    ) AS problems;
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'sno_migration_switch: % is not ready to switch: %', tab, problem
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Run the steps before it, in the order sno_migration_steps lists them.';
    END IF;
    -- Read once: the loops below change what the catalog says.
    SELECT coalesce(jsonb_agg(x), '[]') INTO refs FROM (
        SELECT r.constraint_name, r.referencing_table::oid AS referencing_table,
               r.referencing_column, r.column_not_null
        FROM @extschema@.sno_migration_references(tab, key_column) r
    ) AS x;
    PERFORM @extschema@.sno_migration_lock(ARRAY[tab] || ARRAY(
        SELECT DISTINCT x.referencing_table::regclass
        FROM jsonb_to_recordset(refs) AS x(referencing_table oid)));
    FOR ref IN SELECT x.constraint_name, x.referencing_table::regclass AS referencing_table,
                      x.referencing_column, x.column_not_null
               FROM jsonb_to_recordset(refs) AS x(constraint_name name, referencing_table oid,
                    referencing_column name, column_not_null boolean) LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', ref.referencing_table,
                       ref.constraint_name);
    END LOOP;

    SELECT conname INTO pkey_name FROM pg_constraint WHERE conrelid = tab AND contype = 'p';
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', tab, pkey_name);
    EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', tab, key_column, old_column);
    EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', tab, new_column, key_column);
    -- The validated CHECK (... IS NOT NULL) spares SET NOT NULL its scan.
    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', tab, key_column);
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY USING INDEX %I', tab, pkey_name,
                   (SELECT relname FROM pg_class WHERE oid = new_index));
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', tab, new_column || '_not_null');
    PERFORM @extschema@.sno_migration_copy_grants(tab, old_column, key_column);
    -- New rows may come without the old key once the application writes only the new one.
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = tab AND attname = old_column
                   AND attidentity <> '') THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL', tab, old_column);
    END IF;

    FOR ref IN SELECT x.constraint_name, x.referencing_table::regclass AS referencing_table,
                      x.referencing_column, x.column_not_null
               FROM jsonb_to_recordset(refs) AS x(constraint_name name, referencing_table oid,
                    referencing_column name, column_not_null boolean) LOOP
        EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', ref.referencing_table,
                       ref.referencing_column, ref.referencing_column || '_old');
        EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', ref.referencing_table,
                       ref.referencing_column || '_sno', ref.referencing_column);
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL', ref.referencing_table,
                       ref.referencing_column || '_old');
        IF ref.column_not_null THEN
            EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', ref.referencing_table,
                           ref.referencing_column);
        END IF;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', ref.referencing_table,
                       ref.referencing_column || '_sno_'
                       || CASE WHEN ref.column_not_null THEN 'not_null' ELSE 'matches' END);
        EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', ref.referencing_table,
                       @extschema@.sno_migration_name(ref.constraint_name, 'sno'),
                       ref.constraint_name);
        PERFORM @extschema@.sno_migration_copy_grants(ref.referencing_table,
                                                      ref.referencing_column || '_old',
                                                      ref.referencing_column);
        PERFORM @extschema@.sno_migration_follow(tab, key_column, old_column,
                                                 ref.referencing_table, ref.referencing_column,
                                                 ref.referencing_column || '_old');
    END LOOP;
END
$procedure$;
COMMENT ON PROCEDURE sno_migration_switch(regclass) IS
    'step 6 of a key migration (sno_migration_steps): in one short transaction, makes the sno '
    'column the primary key and the new references the foreign keys, under the old names; the '
    'old columns stay, renamed _old';

-- The last step, once the application no longer reads the old key: drops the old key column
-- (with its unique index and sequence) and the referencing tables' old columns and triggers.
CREATE PROCEDURE sno_migration_drop_old_key(tab regclass)
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $procedure$
DECLARE
    key_column name;
    key_type regtype;
    followers jsonb;
    follower record;
    in_use text;
    index_name name;
    free_name name;
BEGIN
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    IF key_type IS DISTINCT FROM '@extschema@.sno'::regtype
            OR NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = tab
                           AND attname = key_column || '_old' AND NOT attisdropped) THEN
        RAISE EXCEPTION 'sno_migration_drop_old_key: % has no old key kept by a migration', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'It comes after sno_migration_switch.';
    END IF;
    -- The migration's triggers on the referencing tables: the first argument is this table's
    -- oid, the column they follow (UPDATE OF) the sno reference, and its old one is _old.
    SELECT coalesce(jsonb_agg(jsonb_build_object('child', g.tgrelid, 'trigger', g.tgname,
                                                 'reference', a.attname, 'namespace', n.nspname,
                                                 'relname', c.relname)
                              ORDER BY g.tgrelid::regclass::text, g.tgname), '[]')
    INTO followers
    FROM pg_trigger g
    JOIN pg_attribute a ON a.attrelid = g.tgrelid AND a.attnum = g.tgattr[0]
    JOIN pg_class c ON c.oid = g.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE g.tgfoid = '@extschema@.sno_migration_copy_key()'::regprocedure
      AND split_part(encode(g.tgargs, 'escape'), '\000', 1) = tab::oid::text;
    -- DROP COLUMN would take indexes and constraints of several columns with it, unasked.
    SELECT string_agg(format('%s uses %I of %s', pg_describe_object(d.classid, d.objid, 0),
                             a.attname, a.attrelid::regclass), '; ' ORDER BY 1)
    INTO in_use
    FROM pg_depend d
    JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
    WHERE d.refclassid = 'pg_class'::regclass
      AND (a.attrelid, a.attname) IN (
          SELECT tab, key_column || '_old'
          UNION ALL
          SELECT (f->>'child')::oid, (f->>'reference') || '_old' FROM jsonb_array_elements(followers) f)
      AND (d.classid = 'pg_constraint'::regclass
           AND (SELECT contype FROM pg_constraint WHERE oid = d.objid) <> 'n'
           OR d.classid = 'pg_class'::regclass AND d.objid <> d.refobjid
              AND EXISTS (SELECT FROM pg_index i WHERE i.indexrelid = d.objid AND i.indnatts > 1));
    IF in_use IS NOT NULL THEN
        RAISE EXCEPTION 'sno_migration_drop_old_key: the old keys are still in use: %', in_use
            USING ERRCODE = 'dependent_objects_still_exist',
                  HINT = 'Create their sno versions, drop them, then drop the old key.';
    END IF;
    PERFORM @extschema@.sno_migration_lock(ARRAY[tab] || ARRAY(
        SELECT DISTINCT (f->>'child')::oid::regclass FROM jsonb_array_elements(followers) f));
    FOR follower IN SELECT (f->>'child')::oid::regclass AS child, f->>'trigger' AS trigger_name,
                           f->>'reference' AS reference, f->>'namespace' AS namespace,
                           f->>'relname' AS relname
                    FROM jsonb_array_elements(followers) f LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', follower.trigger_name, follower.child);
        EXECUTE format('ALTER TABLE %s DROP COLUMN %I', follower.child, follower.reference || '_old');
        -- The new reference's index takes the name PostgreSQL would give it, once free.
        index_name := @extschema@.sno_migration_name(follower.relname, follower.reference || '_sno_idx');
        free_name := @extschema@.sno_migration_name(follower.relname, follower.reference || '_idx');
        IF to_regclass(format('%I.%I', follower.namespace, index_name)) IS NOT NULL
                AND to_regclass(format('%I.%I', follower.namespace, free_name)) IS NULL THEN
            EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', follower.namespace, index_name,
                           free_name);
        END IF;
    END LOOP;
    EXECUTE format('ALTER TABLE %s DROP COLUMN %I', tab, key_column || '_old');
END
$procedure$;
COMMENT ON PROCEDURE sno_migration_drop_old_key(regclass) IS
    'the last step of a key migration (sno_migration_steps): drops the old key column and the '
    'referencing tables'' old columns and their triggers';

-- The statements of a key migration, in order, for psql's \gexec:
--   SELECT statement FROM sno_migration_steps('orders', 1, 'created_at') \gexec
-- Each can run again after a failure; after one, run the steps again from the start (the
-- ones already done do nothing, or little). stage => 'drop_old_key' gives the last step.
CREATE FUNCTION sno_migration_steps(tab regclass, meta integer, time_column name DEFAULT NULL,
                                    stage text DEFAULT 'switch', batch_rows integer DEFAULT 50000)
    RETURNS TABLE (step integer, statement text, locks text)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    key_column name;
    key_type regtype;
    schema_name name;
    index_name name;
    ref record;
BEGIN
    IF tab IS NULL OR meta IS NULL OR stage IS NULL OR batch_rows IS NULL THEN
        RAISE EXCEPTION 'sno_migration_steps: only time_column may be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    SELECT n.nspname INTO schema_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.oid = tab;
    IF stage = 'drop_old_key' THEN
        RETURN QUERY SELECT 1, format('CALL @extschema@.sno_migration_drop_old_key(%L)', tab::text),
                            'ACCESS EXCLUSIVE on the table and its referencing tables, briefly '
                            '(no rewrite)'::text;
        RETURN;
    ELSIF stage <> 'switch' THEN
        RAISE EXCEPTION 'sno_migration_steps: stage is ''switch'' or ''drop_old_key'', not %',
            quote_literal(stage)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF key_type = '@extschema@.sno'::regtype THEN
        RAISE NOTICE 'sno_migration_steps: % has switched to its sno key already', tab;
        RETURN;
    END IF;

    step := 1;
    statement := format('CALL @extschema@.sno_migration_prepare(%L, %s)', tab::text, meta);
    locks := 'ACCESS EXCLUSIVE on the table and its referencing tables, briefly (no rewrite)';
    RETURN NEXT;
    step := 2;
    statement := format('CALL @extschema@.sno_migration_fill(%L, %s, %L, %s)', tab::text, meta,
                        time_column, batch_rows);
    locks := 'row locks, a batch at a time; the referencing rows too';
    RETURN NEXT;
    -- The fill left a dead version of every row: reclaimed now, and the statistics made new,
    -- rather than by an autovacuum that the switch would have to wait out.
    step := 3;
    statement := 'VACUUM (ANALYZE) ' || (
        SELECT string_agg(t::text, ', ' ORDER BY n)
        FROM unnest(ARRAY[tab] || ARRAY(
                 SELECT DISTINCT r.referencing_table
                 FROM @extschema@.sno_migration_references(tab, key_column) r
                 ORDER BY 1)) WITH ORDINALITY AS x(t, n));
    locks := 'SHARE UPDATE EXCLUSIVE: reads and writes go on';
    RETURN NEXT;
    step := 4;
    FOR index_name, statement IN
        SELECT n.name, format('CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS %I ON %s (%I)',
                              n.name, tab, n.col)
        FROM (VALUES (key_column || '_sno', @extschema@.sno_migration_name(
                          (SELECT relname FROM pg_class WHERE oid = tab), key_column || '_sno_key')),
                     (key_column, @extschema@.sno_migration_name(
                          (SELECT relname FROM pg_class WHERE oid = tab), key_column || '_old_key')))
             AS n (col, name)
    LOOP
        -- An index that a failed CONCURRENTLY build left invalid is built again.
        IF EXISTS (SELECT FROM pg_index i WHERE NOT i.indisvalid
                   AND i.indexrelid = to_regclass(format('%I.%I', schema_name, index_name))) THEN
            RETURN QUERY SELECT 4, format('DROP INDEX CONCURRENTLY %I.%I', schema_name, index_name),
                                locks;
        END IF;
        RETURN NEXT;
    END LOOP;
    -- The referencing columns that have an index of their own get one on the new column.
    FOR ref IN
        SELECT DISTINCT r.referencing_table, r.referencing_column, n.nspname,
               @extschema@.sno_migration_name(c.relname, r.referencing_column || '_sno_idx')
                 AS ref_index
        FROM @extschema@.sno_migration_references(tab, key_column) r
        JOIN pg_class c ON c.oid = r.referencing_table
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = r.referencing_table AND a.attname = r.referencing_column
        WHERE EXISTS (SELECT FROM pg_index i WHERE i.indrelid = r.referencing_table
                      AND i.indkey[0] = a.attnum AND i.indexprs IS NULL)
        ORDER BY 4
    LOOP
        IF EXISTS (SELECT FROM pg_index i WHERE NOT i.indisvalid
                   AND i.indexrelid = to_regclass(format('%I.%I', ref.nspname, ref.ref_index))) THEN
            RETURN QUERY SELECT 4, format('DROP INDEX CONCURRENTLY %I.%I', ref.nspname,
                                          ref.ref_index), locks;
        END IF;
        RETURN QUERY SELECT 4, format('CREATE INDEX CONCURRENTLY IF NOT EXISTS %I ON %s (%I)',
                                      ref.ref_index, ref.referencing_table,
                                      ref.referencing_column || '_sno'), locks;
    END LOOP;
    step := 5;
    statement := format('CALL @extschema@.sno_migration_validate(%L)', tab::text);
    locks := 'a moment''s lock per constraint added, then SHARE UPDATE EXCLUSIVE while it is '
             'validated: reads and writes go on';
    RETURN NEXT;
    step := 6;
    statement := format('CALL @extschema@.sno_migration_switch(%L)', tab::text);
    locks := 'ACCESS EXCLUSIVE on the table and its referencing tables for catalog changes only '
             '(no scan, no rewrite): a second of tries without waiting, then the queue until '
             'lock_timeout (10 s when unset)';
    RETURN NEXT;
END
$function$;
COMMENT ON FUNCTION sno_migration_steps(regclass, integer, name, text, integer) IS
    'the statements that move the table''s bigint, integer or uuid key, and the foreign keys '
    'pointing at it, to an sno key, in order, with the locks each takes; run them with psql''s '
    '\gexec (docs/migration.md)';

-- The partition registry (docs/generator.md, "A partition from a registry") -------------------
-- Created with the extension in every database; used in the one database that servers with
-- sno.partition_source = 'registry' connect to. Its one promise: no two servers hold one
-- partition at the same time, whatever is copied, restored, promoted or paused; where the
-- registry cannot be sure, the claimant waits (start_after) instead of sharing.
-- - A server is one running postmaster: its instance, a random token it makes at start and
--   keeps across its own crash restarts. A clone, a restored copy or a promoted standby runs
--   another postmaster and has another instance, whatever its address, port, system identifier
--   or timeline (recorded for people, never compared).
-- - A lease is never taken from its holder while it is live; a partition whose lease ended goes
--   on only after the last time its holder's IDs could carry (used_through).
-- - The registry notices when it may have lost rows (a new timeline, a new system identifier, a
--   restart, a restore from a dump, a holder renewing a lease it has no row of: a new epoch)
--   and then makes every partition not renewed since wait past the epoch's floor, by which any
--   lease it granted before has ended and any ID under it is in the past.
-- Written only through the functions below, which run as the extension's owner; EXECUTE on
-- sno_lease_claim, sno_lease_renew and sno_lease_release is granted to the one role the servers
-- connect as, and to no other; the others are the DBA's.
CREATE TABLE sno_partition_leases (
    "partition" integer PRIMARY KEY CHECK ("partition" BETWEEN 0 AND 65535),
    instance uuid NOT NULL,
    system_identifier bigint NOT NULL,
    timeline integer NOT NULL CHECK (timeline > 0),
    address inet,
    port integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
    lease interval NOT NULL,
    claimed_at timestamptz NOT NULL,
    renewed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_through timestamptz NOT NULL,
    started_after timestamptz,
    epoch bigint NOT NULL,
    resume_hash bytea
);
REVOKE ALL ON sno_partition_leases FROM PUBLIC;
-- pg_dump keeps the rows: used_through is what keeps a reused partition's IDs apart.
SELECT pg_catalog.pg_extension_config_dump('sno_partition_leases', '');
COMMENT ON TABLE sno_partition_leases IS
    'the partition registry: which server instance holds which partition until expires_at '
    '(registry clock), the latest time (holder''s clock) any ID of the partition may carry, the '
    'time its holder stays after, and the registry epoch of its last claim or renewal; written '
    'only by sno_lease_claim, sno_lease_renew and sno_lease_release';
COMMENT ON COLUMN sno_partition_leases.instance IS
    'the holder: a token its postmaster made at start (a copy or clone has another)';
COMMENT ON COLUMN sno_partition_leases.address IS
    'where the last claim or renewal came from, for people: never compared';
COMMENT ON COLUMN sno_partition_leases.used_through IS
    'the latest time, by the holder''s clock, that any ID of the partition may carry; never '
    'moves back';
COMMENT ON COLUMN sno_partition_leases.epoch IS
    'the registry epoch (sno_registry_epoch) of the last claim or renewal; a row of an earlier '
    'epoch may be stale, and its partition goes on only after that epoch''s floor';
COMMENT ON COLUMN sno_partition_leases.resume_hash IS
    'SHA-256 of the secret the holder left in its data directory when it gave the lease back: '
    'the next start of that data directory takes the partition back at once';

-- Partitions the registry never leases: those used outside it (sno.backfill_partition, or
-- sno.partition on a server not yet moved to the registry).
CREATE TABLE sno_partition_reservations (
    "partition" integer PRIMARY KEY CHECK ("partition" BETWEEN 0 AND 65535),
    reason text NOT NULL,
    reserved_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    backfill_instance uuid
);
REVOKE ALL ON sno_partition_reservations FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('sno_partition_reservations', '');
COMMENT ON TABLE sno_partition_reservations IS
    'partitions used outside the registry (backfill partitions, sno.partition set by hand), '
    'which it never leases; added with sno_partition_reserve; backfill_instance: the server '
    'instance that may make backfill IDs in it';

-- What the registry last knew of itself. Not dumped: a registry restored from a dump finds the
-- record CREATE EXTENSION wrote, which says it was just installed, beside leases, and begins a
-- new epoch.
CREATE TABLE sno_registry_epoch (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch bigint NOT NULL,
    began_at timestamptz NOT NULL,
    reason text NOT NULL,
    floor timestamptz,
    longest_lease interval NOT NULL,
    system_identifier bigint NOT NULL,
    timeline integer NOT NULL,
    postmaster_started timestamptz NOT NULL,
    leases_table oid NOT NULL
);
REVOKE ALL ON sno_registry_epoch FROM PUBLIC;
COMMENT ON TABLE sno_registry_epoch IS
    'the partition registry''s epoch: why it began, and the floor that partitions not claimed '
    'or renewed since stay after (NULL: the registry never lost track of a lease)';

-- Raises 22023 unless the arguments a server sends could describe a lease.
CREATE FUNCTION sno_lease_check_arguments(instance uuid, system_identifier bigint,
    timeline integer, port integer, lease_ms bigint, may_use_until_ms bigint, wanted integer)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
BEGIN
    IF instance IS NULL OR system_identifier IS NULL OR timeline IS NULL OR port IS NULL
            OR lease_ms IS NULL OR may_use_until_ms IS NULL THEN
        RAISE EXCEPTION 'sno lease: only wanted and the partitions may be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF timeline < 1 THEN
        RAISE EXCEPTION 'sno lease: timeline % is not a timeline', timeline
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF port NOT BETWEEN 1 AND 65535 THEN
        RAISE EXCEPTION 'sno lease: port % is not a port', port
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF lease_ms NOT BETWEEN 1000 AND 86400000 THEN
        RAISE EXCEPTION 'sno lease: a lease of % ms is not between 1 second and 1 day', lease_ms
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF may_use_until_ms NOT BETWEEN 0 AND 253402300799999 THEN
        RAISE EXCEPTION 'sno lease: may_use_until_ms % is not a time sno can carry',
                        may_use_until_ms
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF wanted NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno lease: partition % is not a partition (0..65535)', wanted
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;
COMMENT ON FUNCTION sno_lease_check_arguments(uuid, bigint, integer, integer, bigint, bigint,
    integer) IS
    'raises 22023 unless the arguments could describe a lease (sno_lease_claim, sno_lease_renew)';

-- This server as the registry records itself: system identifier, timeline (of the WAL now
-- written), postmaster start and the lease table, with the other columns of an epoch empty.
CREATE FUNCTION sno_registry_identity()
    RETURNS sno_registry_epoch
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    SELECT true, NULL::bigint, NULL::timestamptz, NULL::text, NULL::timestamptz, NULL::interval,
           (pg_control_system()).system_identifier,
           ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::integer,
           pg_postmaster_start_time(), '@extschema@.sno_partition_leases'::regclass::oid;
    END;
COMMENT ON FUNCTION sno_registry_identity() IS
    'what the partition registry records of its own server to tell a restart, a failover or a '
    'restore (sno_registry_epoch)';
REVOKE EXECUTE ON FUNCTION sno_registry_identity() FROM PUBLIC;
-- The record of a registry just installed: its first call begins epoch 1 without a floor if it
-- finds no lease and the same server.
INSERT INTO sno_registry_epoch
SELECT i.singleton, 0, clock_timestamp(), 'installed', NULL, interval '1 second',
       i.system_identifier, i.timeline, i.postmaster_started, i.leases_table
FROM sno_registry_identity() i;

-- The current epoch of the registry, begun anew here when the registry may have lost rows since
-- the last one: another system identifier (a restore into another cluster), another timeline (a
-- failover, point-in-time recovery), another postmaster start (a restore from a file copy cannot
-- be told from a restart), another lease table, leases in a registry whose record says it was
-- just installed (a restore from a dump: the record is not dumped, and CREATE EXTENSION writes a
-- new one), no record at all, a holder renewing a lease it has no row of (lost_row), or a DBA's
-- word (sno_registry_restored). Its floor is then the registry's clock plus twice the longest
-- lease it granted (or the one asked for now, if longer) and 5 seconds: every lease granted
-- before has ended by then on its holder's side, and no ID under one can carry a later time (a
-- claim or renewal whose clock runs ahead of the registry's by more than its lease and 5 seconds
-- is refused). Only a registry whose record says it was just installed, with no lease, and
-- still is the server it was installed on, begins without a floor.
CREATE FUNCTION sno_registry_epoch(lease interval DEFAULT NULL, lost_row boolean DEFAULT false,
    by_hand boolean DEFAULT false)
    RETURNS sno_registry_epoch
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    here @extschema@.sno_registry_epoch := @extschema@.sno_registry_identity();
    recorded @extschema@.sno_registry_epoch;
    same_server boolean;
    longest interval;
BEGIN
    FOR attempt IN 1..2 LOOP
        SELECT * INTO recorded FROM @extschema@.sno_registry_epoch;
        same_server := FOUND AND (recorded.system_identifier, recorded.timeline,
                                  recorded.postmaster_started, recorded.leases_table)
                                 = (here.system_identifier, here.timeline,
                                    here.postmaster_started, here.leases_table);
        IF same_server AND NOT lost_row AND NOT by_hand AND recorded.reason <> 'installed' THEN
            RETURN recorded;
        END IF;
        -- Once more under the lock: another session may have begun the epoch meanwhile.
        EXIT WHEN attempt = 2;
        LOCK TABLE @extschema@.sno_registry_epoch IN EXCLUSIVE MODE;
    END LOOP;
    SELECT greatest(recorded.longest_lease, max(l.lease), sno_registry_epoch.lease) INTO longest
    FROM @extschema@.sno_partition_leases l;
    here.began_at := clock_timestamp();
    here.longest_lease := longest;
    IF same_server AND recorded.reason = 'installed' AND NOT lost_row AND NOT by_hand
            AND NOT EXISTS (SELECT FROM @extschema@.sno_partition_leases) THEN
        -- A new registry, on the server it was installed on: no lease to lose track of.
        here.epoch := 1;
        here.reason := 'a new registry';
    ELSE
        here.epoch := coalesce(greatest(recorded.epoch, (SELECT max(l.epoch)
                                                         FROM @extschema@.sno_partition_leases l)),
                               0) + 1;
        here.floor := greatest(recorded.floor, here.began_at
                               + 2 * coalesce(here.longest_lease, interval '1 second')
                               + interval '5 seconds');
        here.reason := CASE
            WHEN by_hand THEN 'sno_registry_restored() was called'
            WHEN lost_row THEN 'a server renewed a lease the registry had no row of'
            WHEN recorded IS NULL THEN 'no record of the registry''s last epoch'
            WHEN recorded.system_identifier <> here.system_identifier
                THEN 'a new system identifier (a restore into another cluster)'
            WHEN recorded.timeline <> here.timeline
                THEN 'a new timeline (a failover or a point-in-time recovery)'
            WHEN recorded.postmaster_started <> here.postmaster_started
                THEN 'the registry''s server started (a restart, or a restore from a copy of '
                     'its files)'
            WHEN recorded.leases_table <> here.leases_table
                THEN 'the lease table was created again'
            ELSE 'leases in a registry just installed (a restore from a dump)' END;
        RAISE LOG 'sno registry: epoch % begins: %; partitions not claimed or renewed since '
                  'stay after %', here.epoch, here.reason, here.floor;
    END IF;
    here.longest_lease := coalesce(here.longest_lease, interval '1 second');
    DELETE FROM @extschema@.sno_registry_epoch;
    INSERT INTO @extschema@.sno_registry_epoch VALUES (here.*);
    RETURN here;
END
$function$;
COMMENT ON FUNCTION sno_registry_epoch(interval, boolean, boolean) IS
    'the partition registry''s current epoch, begun anew when the registry may have lost rows '
    '(called by the lease functions)';
REVOKE EXECUTE ON FUNCTION sno_registry_epoch(interval, boolean, boolean) FROM PUBLIC;

-- The DBA's word that the registry lost rows in a way PostgreSQL does not show (rows deleted or
-- edited by hand, a storage snapshot rolled back under a running server): a new epoch begins.
CREATE FUNCTION sno_registry_restored(OUT epoch bigint, OUT floor timestamptz)
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    SELECT e.epoch, e.floor FROM @extschema@.sno_registry_epoch(by_hand => true) e;
    END;
COMMENT ON FUNCTION sno_registry_restored() IS
    'begins a new registry epoch by hand (after rows were lost in a way PostgreSQL does not '
    'show): partitions not renewed since stay after its floor';
REVOKE EXECUTE ON FUNCTION sno_registry_restored() FROM PUBLIC;

-- Reserves a partition that is used outside the registry, so that it is never leased: a backfill
-- partition (sno.backfill_partition) or one set by hand (sno.partition) on a server not yet
-- moved to the registry. A partition with a lease row was used under the registry: 55000. Once
-- the registry may have lost rows (an epoch with a floor), a partition without a row may have
-- been leased too: 55000 unless the DBA says it is known unused (known_unused). Reserving again
-- takes the backfill permission from the instance that had it (its server is gone: a crash
-- restart or a copy does not get it back by itself).
CREATE FUNCTION sno_partition_reserve("partition" integer, reason text,
    known_unused boolean DEFAULT false)
    RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    epoch_now @extschema@.sno_registry_epoch;
BEGIN
    IF "partition" NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno lease: partition % is not a partition (0..65535)', "partition"
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    epoch_now := @extschema@.sno_registry_epoch();
    LOCK TABLE @extschema@.sno_partition_leases IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM @extschema@.sno_partition_leases l
               WHERE l."partition" = sno_partition_reserve."partition") THEN
        RAISE EXCEPTION 'sno lease: partition % was leased, and cannot be reserved', "partition"
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'IDs of it were made under the registry: another use would repeat them.',
                  HINT = 'Reserve a partition that was never leased.';
    END IF;
    IF epoch_now.floor IS NOT NULL AND NOT known_unused THEN
        RAISE EXCEPTION 'sno lease: the registry may have lost leases, and partition % may have '
                        'been one', "partition"
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Epoch %s began because %s.', epoch_now.epoch, epoch_now.reason),
                  HINT = 'Reserve it with known_unused => true once no server has IDs of it '
                         '(sno_partition() of their keys).';
    END IF;
    INSERT INTO @extschema@.sno_partition_reservations AS r VALUES ("partition", reason)
    ON CONFLICT ON CONSTRAINT sno_partition_reservations_pkey
    DO UPDATE SET reason = excluded.reason, backfill_instance = NULL;
END
$function$;
COMMENT ON FUNCTION sno_partition_reserve(integer, text, boolean) IS
    'keeps a partition used outside the registry (a backfill partition, sno.partition set by '
    'hand) from ever being leased; refuses one that was leased, or may have been';
REVOKE EXECUTE ON FUNCTION sno_partition_reserve(integer, text, boolean) FROM PUBLIC;

-- Whether `instance` may make backfill IDs in `backfill_partition`: a reserved partition, whose
-- permission goes to the first instance that asks, and passes on only to the next start of its
-- data directory (resume: claim) or by reserving it again. Two servers with one backfill
-- partition (a clone keeps the setting and the backfill cursors) would repeat each other's IDs.
CREATE FUNCTION sno_backfill_permitted(backfill_partition integer, instance uuid)
    RETURNS boolean
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    WITH taken AS (
        UPDATE @extschema@.sno_partition_reservations r
        SET backfill_instance = sno_backfill_permitted.instance
        WHERE r."partition" = sno_backfill_permitted.backfill_partition
          AND (r.backfill_instance IS NULL
               OR r.backfill_instance = sno_backfill_permitted.instance)
        RETURNING 1)
    SELECT EXISTS (SELECT FROM taken);
    END;
COMMENT ON FUNCTION sno_backfill_permitted(integer, uuid) IS
    'whether a server instance may make backfill IDs in a reserved partition (one instance at '
    'a time; called by sno_lease_claim and sno_lease_renew)';
REVOKE EXECUTE ON FUNCTION sno_backfill_permitted(integer, uuid) FROM PUBLIC;

-- Claims are serialised by a lock on the table, so servers starting at once never get the same
-- partition. In order: the lease of this instance (its lease holder restarted); the lease its
-- data directory gave back at its last clean shutdown (resume: the secret it left there), at
-- once; the partition it asks for (its state file's) if nobody holds it and no ID of it can be
-- ahead; the lowest partition never leased; the one whose IDs ended earliest. A live lease of
-- another instance is never taken: a promoted standby, a clone or a restored copy gets another
-- partition at once. start_after: the claimant makes no ID at or before it (the previous
-- holder's used_through, and the epoch's floor for a row not renewed in this epoch); the row
-- keeps it (started_after), so that a restart that gets the partition back stays after it too.
-- Reserved partitions are never leased; backfill_reserved says whether the claimant's backfill
-- partition is reserved (sno_generate_at uses it only then).
CREATE FUNCTION sno_lease_claim(instance uuid, resume bytea, wanted integer,
    lease_ms bigint, may_use_until_ms bigint, system_identifier bigint, timeline integer,
    port integer, backfill_partition integer,
    OUT "partition" integer, OUT expires_at timestamptz, OUT start_after_ms bigint,
    OUT backfill_reserved boolean)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    granted interval := lease_ms * interval '1 millisecond';
    use_until timestamptz := to_timestamp(may_use_until_ms / 1000.0);
    now_here timestamptz;
    epoch_now @extschema@.sno_registry_epoch;
    held @extschema@.sno_partition_leases;
    start_after timestamptz;
BEGIN
    PERFORM @extschema@.sno_lease_check_arguments(instance, system_identifier, timeline, port,
                                                  lease_ms, may_use_until_ms, wanted);
    PERFORM @extschema@.sno_registry_epoch(granted);
    LOCK TABLE @extschema@.sno_partition_leases IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO epoch_now FROM @extschema@.sno_registry_epoch;
    now_here := clock_timestamp();
    PERFORM @extschema@.sno_lease_check_clock(use_until, now_here, granted);
    -- This instance's own lease (the newest, should a restored row name it too).
    SELECT * INTO held FROM @extschema@.sno_partition_leases l
    WHERE l.instance = sno_lease_claim.instance
    ORDER BY l.renewed_at DESC LIMIT 1;
    IF FOUND THEN
        "partition" := held."partition";
        start_after := greatest(held.started_after,
                                CASE WHEN held.epoch < epoch_now.epoch THEN epoch_now.floor END);
    END IF;
    -- The lease this data directory gave back at its last clean shutdown.
    IF "partition" IS NULL AND resume IS NOT NULL THEN
        SELECT * INTO held FROM @extschema@.sno_partition_leases l
        WHERE l.resume_hash = sha256(resume) AND l.expires_at <= now_here;
        IF FOUND THEN
            "partition" := held."partition";
            start_after := CASE WHEN held.epoch = epoch_now.epoch THEN held.started_after
                                ELSE greatest(held.started_after, held.used_through,
                                              epoch_now.floor) END;
            -- The same data directory: its backfill permission comes with it.
            UPDATE @extschema@.sno_partition_reservations r SET backfill_instance = instance
            WHERE r.backfill_instance = held.instance;
        END IF;
    END IF;
    -- The partition it asks for, if no lease holds it and none of its IDs can be ahead.
    IF "partition" IS NULL AND wanted IS NOT NULL AND NOT EXISTS (
            SELECT FROM @extschema@.sno_partition_reservations r WHERE r."partition" = wanted) THEN
        SELECT * INTO held FROM @extschema@.sno_partition_leases l WHERE l."partition" = wanted;
        IF NOT FOUND THEN
            "partition" := wanted;
            start_after := epoch_now.floor;
        ELSIF held.expires_at <= now_here AND held.used_through <= now_here THEN
            "partition" := wanted;
            start_after := greatest(held.used_through,
                                    CASE WHEN held.epoch < epoch_now.epoch THEN epoch_now.floor END);
        END IF;
    END IF;
    -- The lowest partition never leased nor reserved.
    IF "partition" IS NULL THEN
        SELECT p INTO "partition" FROM generate_series(0, 65535) AS p
        WHERE NOT EXISTS (SELECT FROM @extschema@.sno_partition_leases l WHERE l."partition" = p)
          AND NOT EXISTS (SELECT FROM @extschema@.sno_partition_reservations r
                          WHERE r."partition" = p)
        ORDER BY p LIMIT 1;
        start_after := epoch_now.floor;
    END IF;
    -- The ended lease whose IDs end earliest.
    IF "partition" IS NULL THEN
        SELECT l."partition", greatest(l.used_through,
                                       CASE WHEN l.epoch < epoch_now.epoch THEN epoch_now.floor END)
        INTO "partition", start_after
        FROM @extschema@.sno_partition_leases l
        WHERE l.expires_at <= now_here
          AND NOT EXISTS (SELECT FROM @extschema@.sno_partition_reservations r
                          WHERE r."partition" = l."partition")
        ORDER BY 2, 1 LIMIT 1;
    END IF;
    IF "partition" IS NULL THEN
        RAISE EXCEPTION 'sno lease: all 65536 partitions are held by live leases or reserved'
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    INSERT INTO @extschema@.sno_partition_leases AS l VALUES ("partition", instance,
        system_identifier, timeline, inet_client_addr(), port, granted, now_here, now_here,
        now_here + granted, use_until, start_after, epoch_now.epoch, NULL)
    ON CONFLICT ON CONSTRAINT sno_partition_leases_pkey DO UPDATE
    SET instance = excluded.instance, system_identifier = excluded.system_identifier,
        timeline = excluded.timeline, address = excluded.address, port = excluded.port,
        lease = excluded.lease,
        claimed_at = CASE WHEN l.instance = excluded.instance THEN l.claimed_at
                          ELSE excluded.claimed_at END,
        renewed_at = excluded.renewed_at, expires_at = excluded.expires_at,
        used_through = greatest(l.used_through, excluded.used_through),
        started_after = excluded.started_after, epoch = excluded.epoch, resume_hash = NULL
    RETURNING l.expires_at INTO expires_at;
    PERFORM @extschema@.sno_registry_note_lease(granted);
    start_after_ms := (extract(epoch FROM start_after) * 1000)::bigint;
    backfill_reserved := coalesce(@extschema@.sno_backfill_permitted(backfill_partition,
                                                                      instance), false);
END
$function$;
COMMENT ON FUNCTION sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer,
    integer, integer) IS
    'a server with sno.partition_source = ''registry'' takes a partition for lease; '
    'start_after_ms, when set, is the time its IDs stay after (docs/generator.md)';
REVOKE EXECUTE ON FUNCTION sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer,
    integer, integer) FROM PUBLIC;

-- Refuses (22023) a claim or renewal whose may_use_until runs ahead of the registry's clock by
-- more than twice the lease and 5 seconds: the holder's clock is ahead of the registry's by
-- more than its lease and 5 seconds, and an epoch's floor could not cover its IDs.
CREATE FUNCTION sno_lease_check_clock(may_use_until timestamptz, now_here timestamptz,
    lease interval)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
BEGIN
    IF may_use_until > now_here + 2 * lease + interval '5 seconds' THEN
        RAISE EXCEPTION 'sno lease: this server''s clock is % s ahead of the registry''s',
                        round(extract(epoch FROM may_use_until - lease - now_here))
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The registry allows a server''s clock to run ahead of its own by at '
                           'most the lease and 5 seconds.',
                  HINT = 'Set the clocks right (NTP); the server claims again by itself.';
    END IF;
END
$function$;
COMMENT ON FUNCTION sno_lease_check_clock(timestamptz, timestamptz, interval) IS
    'raises 22023 when a server''s clock runs ahead of the registry''s by more than its lease '
    'and 5 seconds';

-- Records the longest lease granted: the floor of the next epoch is twice it and 5 seconds.
CREATE FUNCTION sno_registry_note_lease(lease interval)
    RETURNS void
    LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    UPDATE @extschema@.sno_registry_epoch e SET longest_lease = sno_registry_note_lease.lease
    WHERE e.longest_lease < sno_registry_note_lease.lease;
    END;
COMMENT ON FUNCTION sno_registry_note_lease(interval) IS
    'records the longest lease the registry granted (the next epoch''s floor is twice it and 5 '
    'seconds)';
REVOKE EXECUTE ON FUNCTION sno_registry_note_lease(interval) FROM PUBLIC;

-- Extends the lease of this instance from now, by the registry's clock, and raises 55000 if
-- another instance holds the partition. An expired lease that no other server took is extended
-- too: its holder stopped at its fence, and goes on from there. A lease the registry has no row
-- of (it lost rows) is written again from what the holder sends, and a new epoch begins. Where
-- the registry cannot know that nobody else had the partition meanwhile (its row is missing, or
-- is of an earlier epoch and had ended), the holder stays after the epoch's floor from now on:
-- start_after_ms, NULL otherwise.
CREATE FUNCTION sno_lease_renew("partition" integer, instance uuid, lease_ms bigint,
    may_use_until_ms bigint, started_after_ms bigint, system_identifier bigint,
    timeline integer, port integer, backfill_partition integer,
    OUT renewed_until timestamptz, OUT backfill_reserved boolean, OUT start_after_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    granted interval := lease_ms * interval '1 millisecond';
    use_until timestamptz := to_timestamp(may_use_until_ms / 1000.0);
    floor_sent timestamptz := to_timestamp(started_after_ms / 1000.0);
    epoch_now @extschema@.sno_registry_epoch;
    raised timestamptz;
BEGIN
    PERFORM @extschema@.sno_lease_check_arguments(instance, system_identifier, timeline, port,
                                                  lease_ms, may_use_until_ms, "partition");
    IF "partition" IS NULL THEN
        RAISE EXCEPTION 'sno lease: partition must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    epoch_now := @extschema@.sno_registry_epoch(granted);
    PERFORM @extschema@.sno_lease_check_clock(use_until, clock_timestamp(), granted);
    IF NOT EXISTS (SELECT FROM @extschema@.sno_partition_leases l
                   WHERE l."partition" = sno_lease_renew."partition") THEN
        -- The registry lost the row: a new epoch, then the row again, under the claims' lock,
        -- taken first: a claim holds it when it writes the epoch's record (the longest lease).
        LOCK TABLE @extschema@.sno_partition_leases IN SHARE ROW EXCLUSIVE MODE;
        epoch_now := @extschema@.sno_registry_epoch(granted, lost_row => true);
        IF EXISTS (SELECT FROM @extschema@.sno_partition_reservations r
                   WHERE r."partition" = sno_lease_renew."partition") THEN
            RAISE EXCEPTION 'sno lease: partition % is reserved', "partition"
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'The registry lost its row, and the partition was reserved since.',
                      HINT = 'The server stops generating with it and claims a partition again.';
        END IF;
        raised := epoch_now.floor;
        INSERT INTO @extschema@.sno_partition_leases VALUES ("partition", instance,
            system_identifier, timeline, inet_client_addr(), port, granted, clock_timestamp(),
            clock_timestamp(), clock_timestamp() + granted, use_until,
            greatest(floor_sent, raised), epoch_now.epoch, NULL)
        ON CONFLICT ON CONSTRAINT sno_partition_leases_pkey DO NOTHING;
    ELSE
        SELECT epoch_now.floor INTO raised FROM @extschema@.sno_partition_leases l
        WHERE l."partition" = sno_lease_renew."partition"
          AND l.instance = sno_lease_renew.instance
          AND l.epoch < epoch_now.epoch AND l.expires_at <= clock_timestamp();
    END IF;
    UPDATE @extschema@.sno_partition_leases l
    SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + granted,
        lease = granted, used_through = greatest(l.used_through, use_until),
        started_after = greatest(l.started_after, floor_sent, raised),
        epoch = epoch_now.epoch, address = inet_client_addr(), resume_hash = NULL
    WHERE l."partition" = sno_lease_renew."partition" AND l.instance = sno_lease_renew.instance
    RETURNING l.expires_at INTO renewed_until;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sno lease: partition % is held by another server', "partition"
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Its lease expired and another server claimed it.',
                  HINT = 'The server stops generating with it and claims a partition again.';
    END IF;
    PERFORM @extschema@.sno_registry_note_lease(granted);
    backfill_reserved := coalesce(@extschema@.sno_backfill_permitted(backfill_partition,
                                                                      instance), false);
    start_after_ms := (extract(epoch FROM raised) * 1000)::bigint;
END
$function$;
COMMENT ON FUNCTION sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint, integer,
    integer, integer) IS
    'a server extends its lease of a partition; raises 55000 when another server holds it now';
REVOKE EXECUTE ON FUNCTION sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint,
    integer, integer, integer) FROM PUBLIC;

-- Ends the lease now (a clean shutdown), keeping the row: the next holder starts after
-- used_through, except the next start of the same data directory, which shows the secret
-- `resume` (the row keeps only its SHA-256) and takes it back at once. Returns whether this
-- instance held it.
CREATE FUNCTION sno_lease_release("partition" integer, instance uuid, resume bytea)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
BEGIN
    -- A new epoch begins here as anywhere; the row keeps its own: a release does not say what the
    -- holder used (a renewal lost with the row may have said more), so it confirms nothing.
    PERFORM @extschema@.sno_registry_epoch();
    UPDATE @extschema@.sno_partition_leases l
    SET expires_at = least(l.expires_at, clock_timestamp()),
        resume_hash = sha256(sno_lease_release.resume)
    WHERE l."partition" = sno_lease_release."partition"
      AND l.instance = sno_lease_release.instance;
    RETURN FOUND;
END
$function$;
COMMENT ON FUNCTION sno_lease_release(integer, uuid, bytea) IS
    'a server gives up its lease of a partition now (at a clean shutdown); the row stays, so '
    'that the next holder starts after the last time it could have used';
REVOKE EXECUTE ON FUNCTION sno_lease_release(integer, uuid, bytea) FROM PUBLIC;

-- On a server with sno.partition_source = 'registry': the lease it holds (docs/generator.md).
CREATE FUNCTION sno_partition_lease(
    OUT from_registry boolean, OUT "partition" integer, OUT holding boolean,
    OUT renewed_at timestamptz, OUT valid_until timestamptz, OUT start_after timestamptz,
    OUT failures bigint, OUT problem text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_partition_lease_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION sno_partition_lease() IS
    'with sno.partition_source = ''registry'': the partition this server leases, whether the '
    'lease is in force, until when its IDs may go (this server''s clock), the time they stay '
    'after when the partition was another server''s, and the failed claims and renewals, the '
    'last one''s reason in problem';
