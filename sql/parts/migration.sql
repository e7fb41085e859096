
-- Moving a table's key to sno (docs/migration.md) ----------------------------------------------
-- A table with a one-column bigint, integer, smallint or uuid primary key, and the tables whose
-- foreign keys point at it, move to an sno key in steps that each can be run again after a
-- failure: prepare (new columns beside the old), fill (IDs in time order, in batches), VACUUM,
-- indexes (CONCURRENTLY; these two from sno_migration_steps), validate (the constraints, without blocking writes),
-- switch (one short transaction: the new columns take the old names and the keys), and, when the
-- application no longer reads the old key, drop_old_key. Each runs as the caller (SECURITY
-- INVOKER): the caller must own the tables. Names: key column K becomes K_sno beside K until the
-- switch, then K, and the old one K_old; a referencing column F likewise (F_sno, then F and F_old);
-- a name that would pass 63 bytes is cut first (sno_migration_name). The referencing tables'
-- copies are kept by triggers whose functions run as the parent's owner (sno_migration_follow).

-- A name for a column, index or constraint of a migration: base_suffix, with base cut to fit a
-- name (63 bytes), a character at a time, never in the middle of one; the suffix (sno, old,
-- sno_key, ...) is kept whole, so that two names of one base never become the same.
CREATE FUNCTION sno_migration_name(base text, suffix text) RETURNS name
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    kept text := base;
BEGIN
    WHILE octet_length(kept) + 1 + octet_length(suffix) > 63 AND kept <> '' LOOP
        kept := left(kept, -1);
    END LOOP;
    RETURN (kept || '_' || suffix)::name;
END
$function$;
COMMENT ON FUNCTION sno_migration_name(text, text) IS
    'base_suffix, with base cut to fit a name: how a key migration names its columns, indexes and '
    'constraints';

-- The n-th argument of a trigger (pg_trigger.tgargs: each ends with a zero byte), as text.
CREATE FUNCTION sno_migration_trigger_argument(arguments bytea, n integer) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    rest bytea := arguments;
    ends integer;
BEGIN
    FOR i IN 1 .. n LOOP
        ends := position(decode('00', 'hex') IN rest);
        IF ends = 0 THEN
            RETURN NULL;
        ELSIF i = n THEN
            RETURN convert_from(substring(rest FOR ends - 1), getdatabaseencoding());
        END IF;
        rest := substring(rest FROM ends + 1);
    END LOOP;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION sno_migration_trigger_argument(bytea, integer) IS
    'the n-th argument of a trigger, from pg_trigger.tgargs (how sno_migration_drop_old_key reads '
    'its triggers)';

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

-- The columns of a migration's key: the table's, and each single-column reference to it.
CREATE FUNCTION sno_migration_key_columns(tab regclass, key_column name)
    RETURNS TABLE (table_oid oid, attnum smallint)
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT tab::oid, a.attnum FROM pg_attribute a
    WHERE a.attrelid = tab AND a.attname = key_column
    UNION ALL
    SELECT r.referencing_table::oid, a.attnum
    FROM @extschema@.sno_migration_references(tab, key_column) r
    JOIN pg_attribute a ON a.attrelid = r.referencing_table AND a.attname = r.referencing_column
$function$;
COMMENT ON FUNCTION sno_migration_key_columns(regclass, name) IS
    'the columns of a key migration''s key: the table''s key and each reference to it';

-- The functions and operators an object (a view's rule, a policy) calls that are neither
-- PostgreSQL's own (pg_catalog) nor sno's: how the switch makes sure that a view or policy it
-- makes again calls nothing new that a role with CREATE in the extension's schema put there.
CREATE FUNCTION sno_migration_foreign_uses(class regclass, object oid) RETURNS text[]
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT coalesce(array_agg(DISTINCT pg_describe_object(d.refclassid, d.refobjid, 0)), '{}')
    FROM pg_depend d
    WHERE d.classid = class AND d.objid = object
      AND d.refclassid IN ('pg_proc'::regclass, 'pg_operator'::regclass)
      AND CASE d.refclassid
              WHEN 'pg_proc'::regclass
                  THEN (SELECT pronamespace FROM pg_proc WHERE oid = d.refobjid)
              ELSE (SELECT oprnamespace FROM pg_operator WHERE oid = d.refobjid)
          END <> 'pg_catalog'::regnamespace
      AND NOT EXISTS (SELECT FROM pg_depend e JOIN pg_extension x ON x.oid = e.refobjid
                      WHERE e.classid = d.refclassid AND e.objid = d.refobjid AND e.deptype = 'e'
                        AND x.extname = 'sno')
$function$;
COMMENT ON FUNCTION sno_migration_foreign_uses(regclass, oid) IS
    'the functions and operators a view''s rule or a policy calls that are neither pg_catalog''s '
    'nor sno''s (how a key migration''s switch checks the views and policies it makes again)';

-- The views and policies that use a key column and that the switch carries to the sno key,
-- made again from their definitions (docs/migration.md): every policy, and every plain view that
-- nothing else depends on and that has no triggers or rules of its own. `object` is the policy,
-- or the view's rule; `relation` the view, or the policy's table.
CREATE FUNCTION sno_migration_carried(tab regclass, key_column name)
    RETURNS TABLE (kind text, object oid, relation oid)
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    WITH using_key AS (
        SELECT DISTINCT d.classid, d.objid
        FROM pg_depend d
        JOIN @extschema@.sno_migration_key_columns(tab, key_column) k
          ON k.table_oid = d.refobjid AND d.refobjsubid = k.attnum
        WHERE d.refclassid = 'pg_class'::regclass
          AND d.classid IN ('pg_rewrite'::regclass, 'pg_policy'::regclass)
    )
    SELECT 'view', r.oid, v.oid
    FROM using_key u
    JOIN pg_rewrite r ON u.classid = 'pg_rewrite'::regclass AND r.oid = u.objid
    JOIN pg_class v ON v.oid = r.ev_class
    WHERE r.rulename = '_RETURN' AND v.relkind = 'v'
      -- Another session's temporary view is its own affair (and not the switch's to make).
      AND v.relpersistence <> 't'
      AND NOT EXISTS (SELECT FROM pg_trigger g WHERE g.tgrelid = v.oid)
      -- Nothing may use its row type (a function returning SETOF it, a column of it).
      AND NOT EXISTS (SELECT FROM pg_depend d JOIN pg_type t ON t.oid = v.reltype
                      WHERE d.refclassid = 'pg_type'::regclass AND d.deptype = 'n'
                        AND d.refobjid IN (t.oid, t.typarray))
      AND NOT EXISTS (SELECT FROM pg_rewrite o WHERE o.ev_class = v.oid AND o.rulename <> '_RETURN')
      AND NOT EXISTS (SELECT FROM pg_depend d
                      WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = v.oid
                        AND d.deptype = 'n'
                        AND NOT (d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid))
    UNION ALL
    SELECT 'policy', p.oid, p.polrelid
    FROM using_key u JOIN pg_policy p ON u.classid = 'pg_policy'::regclass AND p.oid = u.objid
$function$;
COMMENT ON FUNCTION sno_migration_carried(regclass, name) IS
    'the views and policies that use a key migration''s key and that its switch makes again on '
    'the sno key';

-- What would go on using the old key after the switch (under its new name, K_old or F_old), one
-- row each, with what to do: triggers on the tables (their functions may use the key), their
-- publications, rules on them, and defaults (generated columns), functions with SQL bodies,
-- triggers, indexes on expressions and views that use a key column, except the views and
-- policies that the switch carries to the sno key (sno_migration_carried). Checked before the
-- migration starts and again by the switch, under its lock, since any of them may have been made
-- meanwhile.
CREATE FUNCTION sno_migration_users_of_key(tab regclass, key_column name)
    RETURNS TABLE (problem text, remedy text)
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    WITH tables AS (
        SELECT tab AS tbl
        UNION
        SELECT r.referencing_table FROM @extschema@.sno_migration_references(tab, key_column) r
    ), key_columns AS (
        SELECT table_oid AS tbl, attnum FROM @extschema@.sno_migration_key_columns(tab, key_column)
    ), own_triggers AS (
        -- The migration's own (sno_migration_follow): on a referencing table, with a function of
        -- its name in the table's schema, owned by the table's owner. A look-alike is not.
        SELECT g.oid
        FROM pg_trigger g
        JOIN pg_proc f ON f.oid = g.tgfoid
        JOIN pg_class t ON t.oid = tab
        WHERE g.tgrelid IN (SELECT r.referencing_table
                            FROM @extschema@.sno_migration_references(tab, key_column) r)
          AND g.tgname LIKE 'sno\_migration\_key\_%'
          AND f.proname = 'sno_migration_key_' || g.tgrelid || substr(g.tgname, 18)
          AND f.pronamespace = t.relnamespace AND f.proowner = t.relowner AND f.prosecdef
    ), users AS (
        SELECT DISTINCT d.classid, d.objid, d.objsubid, d.refobjid, 'uses the key of' AS what
        FROM pg_depend d JOIN key_columns k ON k.tbl = d.refobjid AND d.refobjsubid = k.attnum
        WHERE d.refclassid = 'pg_class'::regclass
          AND (d.classid IN ('pg_rewrite'::regclass, 'pg_policy'::regclass, 'pg_attrdef'::regclass,
                             'pg_proc'::regclass)
               OR d.classid = 'pg_trigger'::regclass
                  AND d.objid NOT IN (SELECT oid FROM own_triggers)
               -- An index on an expression of the key (one of plain columns moves with them,
               -- and sno_migration_drop_old_key refuses to drop one with other columns).
               OR d.classid = 'pg_class'::regclass
                  AND EXISTS (SELECT FROM pg_index i WHERE i.indexrelid = d.objid
                              AND i.indexprs IS NOT NULL))
          -- A column's own default (a sequence's, say) stays with it.
          AND NOT EXISTS (SELECT FROM pg_attrdef ad WHERE d.classid = 'pg_attrdef'::regclass
                          AND ad.oid = d.objid AND ad.adnum = k.attnum)
          -- The switch carries these to the sno key.
          AND (d.classid, d.objid) NOT IN (
              SELECT CASE c.kind WHEN 'view' THEN 'pg_rewrite'::regclass::oid
                                 ELSE 'pg_policy'::regclass::oid END, c.object
              FROM @extschema@.sno_migration_carried(tab, key_column) c)
          -- Another session's temporary view: its own affair.
          AND NOT EXISTS (SELECT FROM pg_rewrite r JOIN pg_class v ON v.oid = r.ev_class
                          WHERE d.classid = 'pg_rewrite'::regclass AND r.oid = d.objid
                            AND v.relpersistence = 't')
        UNION
        SELECT 'pg_rewrite'::regclass, r.oid, 0, r.ev_class, 'rewrites the queries of'
        FROM pg_rewrite r JOIN tables t ON t.tbl = r.ev_class
    )
    SELECT problem, remedy FROM (
        SELECT 1 AS kind, format('%s has trigger %I', g.tgrelid::regclass, g.tgname) AS problem,
               'Its function may use the key, which changes type: drop the trigger for the '
               'migration and create it again after the switch, changed for sno.'::text AS remedy
        FROM pg_trigger g JOIN tables t ON t.tbl = g.tgrelid
        WHERE NOT g.tgisinternal AND g.oid NOT IN (SELECT oid FROM own_triggers)
        UNION ALL
        SELECT 2, format('%s is in publication %I',
                         format('%I.%I', p.schemaname, p.tablename)::regclass, p.pubname),
               'Subscribers would see a new column, then the key change: remove the table from '
               'the publication for the migration (ALTER PUBLICATION ... DROP TABLE) and '
               'resynchronize after.'
        FROM pg_publication_tables p
        WHERE format('%I.%I', p.schemaname, p.tablename)::regclass IN (SELECT tbl FROM tables)
        UNION ALL
        SELECT 3, format('%s %s %s', pg_describe_object(u.classid, u.objid, u.objsubid), u.what,
                         u.refobjid::regclass),
               'It would go on using the old key column after the switch: drop it for the '
               'migration and create it again after the switch.'
        FROM users u
        -- A trigger is named once, above.
        WHERE u.classid <> 'pg_trigger'::regclass
    ) AS found
    ORDER BY kind, problem
$function$;
COMMENT ON FUNCTION sno_migration_users_of_key(regclass, name) IS
    'what would go on using the old key after a key migration''s switch (triggers, publications, '
    'rules, views, policies, generated columns, SQL-bodied functions, indexes): one row each, with '
    'what to do';

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
        END IF;
    END LOOP;
    -- The copy of a reference is made as its row is written: a deferred foreign key lets the
    -- row come before its parent, and a forced policy on the parent hides it from its owner, as
    -- whom the copy is looked up.
    RETURN QUERY
    SELECT format('foreign key %I of %s is deferrable', c.conname, c.conrelid::regclass),
           'Make it NOT DEFERRABLE for the migration (ALTER TABLE ... ALTER CONSTRAINT ... NOT '
           'DEFERRABLE), and deferrable again after the switch.'::text
    FROM pg_constraint c
    WHERE c.contype = 'f' AND c.confrelid = tab AND c.condeferrable;
    RETURN QUERY
    SELECT format('%s forces row-level security on its owner', tab),
           'The referencing rows'' trigger looks their parent up as its owner: NO FORCE it for '
           'the migration (ALTER TABLE ... NO FORCE ROW LEVEL SECURITY), or move by hand.'::text
    FROM pg_class c WHERE c.oid = tab AND c.relrowsecurity AND c.relforcerowsecurity;
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
     AND (a.attname = @extschema@.sno_migration_name(n.col, 'old')
          OR a.attname = @extschema@.sno_migration_name(n.col, 'sno')
             AND a.atttypid <> '@extschema@.sno'::regtype);
    -- Two long names cut to the same new one.
    RETURN QUERY
    SELECT format('columns %s of %s would both become %I', string_agg(quote_ident(r.referencing_column), ' and '
                                                                   ORDER BY r.referencing_column),
                  r.referencing_table,
                  @extschema@.sno_migration_name(r.referencing_column, 'sno')),
           'Rename one of them: the migration''s names are cut to 63 bytes.'::text
    FROM @extschema@.sno_migration_references(tab, key_column) r WHERE r.single_column
    GROUP BY r.referencing_table, @extschema@.sno_migration_name(r.referencing_column, 'sno')
    HAVING count(DISTINCT r.referencing_column) > 1;
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
    RETURN QUERY SELECT * FROM @extschema@.sno_migration_users_of_key(tab, key_column);
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

-- ACCESS EXCLUSIVE on the tables, all at once, never waiting for one while holding another: the
-- application's transactions take them in either order (an insert into a referencing table,
-- whose copy trigger and foreign key then read the table; a delete from the table that cascades
-- into them), so a step that held one and waited for the next could close a deadlock with one of
-- them, which PostgreSQL would end by cancelling either side. First, for a second, tries that
-- take them all or none (NOWAIT, every 50 ms), so that the step does not stand in the queue
-- before the application's statements; then, while they are still busy, until lock_timeout (10 s
-- when unset): it waits in the queue of one table alone, holding nothing else (that wait also
-- makes an autovacuum in the way give up: it yields only to a waiting lock), then tries the others
-- without waiting, and lets that one go again if they are busy; a table at a time, in turn.
CREATE FUNCTION sno_migration_lock(tables regclass[]) RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    patience text := CASE current_setting('lock_timeout') WHEN '0' THEN '10s'
                          ELSE current_setting('lock_timeout') END;
    trying_until timestamptz := clock_timestamp() + interval '1 s';
    waiting_until timestamptz;
    listed text := (SELECT string_agg(t::text, ', ' ORDER BY n) FROM unnest(tables)
                    WITH ORDINALITY AS x(t, n));
    round integer := 0;
    left_ms bigint;
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
    waiting_until := clock_timestamp() + patience::interval;
    LOOP
        left_ms := floor(extract(epoch FROM waiting_until - clock_timestamp()) * 1000);
        IF left_ms <= 0 THEN
            RAISE EXCEPTION 'sno_migration: could not lock % within %', listed, patience
                USING ERRCODE = 'lock_not_available',
                      HINT = 'Transactions on them held locks throughout: run the step again, or '
                             'with a longer lock_timeout.';
        END IF;
        -- A second at most in one table's queue, so that the application's statements queued
        -- behind it are held no longer than that at a time.
        PERFORM set_config('lock_timeout', least(left_ms, 1000) || 'ms', true);
        BEGIN
            -- One table, waited for in its queue; then the rest, or none (this block's locks
            -- are let go when it fails).
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE',
                           tables[1 + round % cardinality(tables)]);
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE NOWAIT', listed);
            PERFORM set_config('lock_timeout', patience, true);
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            round := round + 1;
        END;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION sno_migration_lock(regclass[]) IS
    'takes ACCESS EXCLUSIVE on all the tables, never waiting for one while holding another: a '
    'second of tries without waiting, then waits for one at a time until lock_timeout (10 s when '
    'unset); how a key migration''s steps lock';

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
    new_column := @extschema@.sno_migration_name(key_column, 'sno');
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
                       AND attname = @extschema@.sno_migration_name(ref.referencing_column, 'sno')) THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN %I @extschema@.sno',
                           ref.referencing_table, @extschema@.sno_migration_name(ref.referencing_column, 'sno'));
        END IF;
        PERFORM @extschema@.sno_migration_follow(tab, key_column, new_column,
                                                 ref.referencing_table, ref.referencing_column,
                                                 @extschema@.sno_migration_name(ref.referencing_column, 'sno'));
    END LOOP;
END
$procedure$;
COMMENT ON PROCEDURE sno_migration_prepare(regclass, integer) IS
    'step 1 of a key migration (sno_migration_steps): adds the sno key column, filled for new '
    'rows by sno_generate(meta), and the referencing tables'' new columns, kept by a trigger';

-- (Re)creates the trigger that keeps a referencing table's column `receiving` a copy of the
-- parent's column `copied`, matched on `parent_match` = `own_match`: on INSERT, on an UPDATE that
-- moves the row to another parent, and on any UPDATE of a row still without its copy (one the
-- fill missed: so the checks validate adds never refuse the application's write). Other updates
-- (the fill's own among them) cost two comparisons; a copy set by hand is put right by the
-- catch-up of sno_migration_validate (sno_migration_copy_missing).
-- Named after the numbers of the two columns, which the switch swaps, so that it replaces the
-- trigger under the same name.
-- The trigger's function is made for this pair of tables alone, in the parent's schema, owned by
-- the parent's owner and run as that role (SECURITY DEFINER), as PostgreSQL's own foreign key
-- checks run: a role that may write the referencing table needs no privilege on the parent, and
-- row-level security on the parent does not hide the row (unless forced, which the check
-- refuses). What keeps it from being an escalation (docs/migration.md):
-- - EXECUTE belongs to the owner alone (every other grant, default privileges' included, is
--   revoked), and a function of that name owned by anyone else is refused, not replaced;
-- - it runs no code of anyone else's: its body is a literal made here (the query, the schema of
--   its = operator, pg_catalog's or sno's only), it refuses to run on any other table, and it
--   refuses once either column's type is not the one it was made for (a domain or a type with
--   casts of the referencing table's owner would run their functions as the parent's owner);
-- - it reads one column of the parent row a written row points at, which that row then holds.
CREATE FUNCTION sno_migration_follow(parent regclass, parent_match name, copied name,
                                     child regclass, own_match name, receiving name)
    RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    columns text := (SELECT min(attnum) || '_' || max(attnum) FROM pg_attribute
                     WHERE attrelid = child AND attname IN (own_match, receiving));
    trigger_name name := 'sno_migration_key_' || columns;
    function_name name := 'sno_migration_key_' || child::oid || '_' || columns;
    schema_oid oid := (SELECT relnamespace FROM pg_class WHERE oid = parent);
    schema_name name := (SELECT nspname FROM pg_namespace WHERE oid = schema_oid);
    owner_oid oid := (SELECT relowner FROM pg_class WHERE oid = parent);
    function_oid oid;
    parent_type oid := (SELECT atttypid FROM pg_attribute
                        WHERE attrelid = parent AND attname = parent_match);
    own_type oid := (SELECT atttypid FROM pg_attribute
                     WHERE attrelid = child AND attname = own_match);
    receiving_type oid := (SELECT atttypid FROM pg_attribute
                           WHERE attrelid = child AND attname = receiving);
    equals text;
    receiving_equals text;
    own_equals text;
    body text;
    grantee record;
BEGIN
    -- The = of each pair of types the function compares, named with its schema: pg_catalog's,
    -- or sno's for sno (the function's search_path is pg_catalog only).
    SELECT max(x.op) FILTER (WHERE v.pair = 'match'), max(x.op) FILTER (WHERE v.pair = 'receiving'),
           max(x.op) FILTER (WHERE v.pair = 'own')
    INTO equals, receiving_equals, own_equals
    FROM (VALUES ('match', parent_type, own_type), ('receiving', receiving_type, receiving_type),
                 ('own', own_type, own_type)) AS v (pair, left_type, right_type)
    CROSS JOIN LATERAL (
        SELECT format('OPERATOR(%I.=)', n.nspname)
        FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace
        WHERE o.oprname = '=' AND o.oprleft = v.left_type AND o.oprright = v.right_type
          AND o.oprnamespace IN ('pg_catalog'::regnamespace, '@extschema@'::regnamespace)
        ORDER BY o.oprnamespace <> 'pg_catalog'::regnamespace LIMIT 1) AS x (op);
    IF equals IS NULL OR receiving_equals IS NULL OR own_equals IS NULL THEN
        RAISE EXCEPTION 'sno_migration: no = operator between %.% and %.%', parent, parent_match,
                        child, own_match
            USING ERRCODE = 'undefined_function';
    END IF;
    IF EXISTS (SELECT FROM pg_proc WHERE pronamespace = schema_oid AND proname = function_name
               AND proowner <> owner_oid) THEN
        RAISE EXCEPTION 'sno_migration: %.% exists and is not owned by the owner of %',
                        schema_oid::regnamespace, function_name, parent
            USING ERRCODE = 'duplicate_function',
                  HINT = 'See who made it and drop it, then run the step again.';
    END IF;
    body := format($body$
DECLARE
    publisher_copy boolean := TG_OP OPERATOR(pg_catalog.=) 'INSERT';
BEGIN
    -- An UPDATE that neither moves the row to another parent nor leaves it without its copy
    -- needs no look-up (the fill's own updates, the application's other changes): nothing but
    -- two comparisons, with the operator of the column's type as it was made.
    IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE'
            AND NOT ((NEW.%10$I IS NULL) OPERATOR(pg_catalog.<>) (OLD.%10$I IS NULL)
                     OR NEW.%10$I IS NOT NULL AND NOT (NEW.%10$I %13$s OLD.%10$I))
            AND NOT (NEW.%11$I IS NULL AND NEW.%10$I IS NOT NULL) THEN
        RETURN NEW;
    END IF;
    IF TG_RELID OPERATOR(pg_catalog.<>) %1$s::pg_catalog.oid OR TG_WHEN OPERATOR(pg_catalog.<>) 'BEFORE'
            OR TG_LEVEL OPERATOR(pg_catalog.<>) 'ROW'
            OR (SELECT a.atttypid FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) %1$s::pg_catalog.oid
                AND a.attname OPERATOR(pg_catalog.=) %2$L AND NOT a.attisdropped)
               IS DISTINCT FROM %3$s::pg_catalog.oid
            OR (SELECT a.atttypid FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) %1$s::pg_catalog.oid
                AND a.attname OPERATOR(pg_catalog.=) %4$L AND NOT a.attisdropped)
               IS DISTINCT FROM %5$s::pg_catalog.oid THEN
        RAISE EXCEPTION 'sno_migration: the copy trigger of %% no longer fits its table', %6$L
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'A column it copies changed its name or type: run the step again.';
    END IF;
    -- By the parent's oid: a table renamed meanwhile is still found. A row without a parent
    -- gets NULL (its foreign key refuses it), except where session_replication_role is
    -- replica: a replicated row may come before its parent, with the publisher's copy, which
    -- it keeps where the publisher sent one (a new row, or a changed copy; not the copy of the
    -- row's previous parent, which would be stale).
    IF NOT publisher_copy THEN
        publisher_copy := (NEW.%11$I IS NULL) OPERATOR(pg_catalog.<>) (OLD.%11$I IS NULL)
                          OR NOT (NEW.%11$I %12$s OLD.%11$I);
    END IF;
    EXECUTE pg_catalog.concat(%7$L, %8$s::pg_catalog.oid::pg_catalog.regclass, %9$L)
        USING NEW.%10$I, CASE WHEN publisher_copy THEN NEW.%11$I END INTO NEW.%11$I;
    RETURN NEW;
END
$body$, child::oid, own_match, own_type, receiving, receiving_type, child::text,
            format('SELECT COALESCE((SELECT p.%I FROM ', copied), parent::oid,
            format(' AS p WHERE p.%I %s $1), CASE WHEN pg_catalog.current_setting('
                   '''session_replication_role'') OPERATOR(pg_catalog.=) ''replica'' THEN $2 END)',
                   parent_match, equals), own_match, receiving, receiving_equals, own_equals);
    EXECUTE format('CREATE OR REPLACE FUNCTION %I.%I() RETURNS trigger '
                   'LANGUAGE plpgsql VOLATILE SECURITY DEFINER PARALLEL UNSAFE '
                   'SET search_path = pg_catalog, pg_temp AS %L',
                   schema_name, function_name, body);
    function_oid := format('%I.%I()', schema_name, function_name)::regprocedure;
    EXECUTE format('ALTER FUNCTION %s OWNER TO %I', function_oid::regprocedure,
                   (SELECT rolname FROM pg_roles WHERE oid = owner_oid));
    FOR grantee IN SELECT DISTINCT acl.grantee FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) AS acl
                   WHERE p.oid = function_oid AND acl.grantee <> owner_oid LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM %s', function_oid::regprocedure,
                       CASE WHEN grantee.grantee = 0 THEN 'PUBLIC'
                            ELSE quote_ident((SELECT rolname FROM pg_roles
                                              WHERE oid = grantee.grantee)) END);
    END LOOP;
    -- A function made now gets EXECUTE for PUBLIC by default, which aclexplode does not list.
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', function_oid::regprocedure);
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', function_oid::regprocedure,
                   format('made by sno''s key migration of %s: copies %I of %s into %I of %s; '
                          'dropped by sno_migration_drop_old_key', parent, copied, parent,
                          receiving, child));
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = child AND tgname = trigger_name) THEN
        EXECUTE format('DROP TRIGGER %I ON %s', trigger_name, child);
    END IF;
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %s FOR EACH ROW '
                   'EXECUTE FUNCTION %I.%I(%L, %L, %L, %L, %L)',
                   trigger_name, child, schema_name, function_name,
                   parent::oid, parent_match, copied, own_match, receiving);
    -- Also where session_replication_role = replica (a restore, a replication tool).
    EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', child, trigger_name);
END
$function$;
COMMENT ON FUNCTION sno_migration_follow(regclass, name, name, regclass, name, name) IS
    'creates the trigger of a key migration that keeps a referencing table''s column a copy of '
    'its parent''s, with a function of its own that runs as the parent''s owner';

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

-- A line of a fill's progress: what is done of how much, the rate so far and the time left at it.
CREATE FUNCTION sno_migration_progress_line(tab regclass, unit text, done bigint, total bigint,
                                            started timestamptz)
    RETURNS text
    LANGUAGE sql VOLATILE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
    SELECT format('sno_migration_fill: %s: %s of %s %s (%s%%), %s %s/s, about %s s left', tab,
                  done, total, unit,
                  CASE WHEN total > 0 THEN floor(100.0 * done / total) ELSE 100 END,
                  round(done / elapsed), unit,
                  CASE WHEN done > 0 THEN round((total - done) * elapsed / done) ELSE NULL END)
    FROM (SELECT greatest(extract(epoch FROM clock_timestamp() - started), 0.001) AS elapsed) AS e
$function$;
COMMENT ON FUNCTION sno_migration_progress_line(regclass, text, bigint, bigint, timestamptz) IS
    'the NOTICE of a key migration''s fill after each batch: done, total, rate, time left';

-- Where a key migration stands, from any session (each fill's batch commits): for the table and
-- each referencing table, how many rows have the new column and how many are still without it
-- (rows whose old column is NULL need none); for the table's copy while it runs, its rate and the
-- time left. It counts: a scan of each table.
CREATE FUNCTION sno_migration_progress(tab regclass)
    RETURNS TABLE (table_name regclass, column_name name, rows_done bigint, rows_left bigint,
                   rows_per_second numeric, seconds_left numeric)
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    key_column name;
    key_type regtype;
    work_table regclass;
    copy_state jsonb;
    ref record;
BEGIN
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    IF key_type IS NULL OR key_type = '@extschema@.sno'::regtype THEN
        RETURN;  -- not a migration's table, or switched already
    END IF;
    work_table := to_regclass(@extschema@.sno_migration_work_table(tab));
    table_name := tab;
    column_name := @extschema@.sno_migration_name(key_column, 'sno');
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = tab AND attname = column_name) THEN
        RETURN;  -- not prepared
    END IF;
    EXECUTE format('SELECT count(%1$I), count(*) - count(%1$I) FROM %2$s', column_name, tab)
        INTO rows_done, rows_left;
    IF work_table IS NOT NULL THEN
        copy_state := obj_description(work_table, 'pg_class')::jsonb;
        IF copy_state IS NOT NULL THEN
            rows_per_second := round(((copy_state->>'rows')::bigint - rows_left)
                / greatest(extract(epoch FROM now()
                                   - (copy_state->>'copy_started_at')::timestamptz), 0.001));
            seconds_left := CASE WHEN rows_per_second > 0 THEN round(rows_left / rows_per_second) END;
        END IF;
    END IF;
    RETURN NEXT;
    rows_per_second := NULL;
    seconds_left := NULL;
    FOR ref IN SELECT * FROM @extschema@.sno_migration_references(tab, key_column) LOOP
        table_name := ref.referencing_table;
        column_name := @extschema@.sno_migration_name(ref.referencing_column, 'sno');
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = ref.referencing_table
                                  AND attname = column_name);
        EXECUTE format('SELECT count(%1$I), count(%2$I) - count(%1$I) FROM %3$s', column_name,
                       ref.referencing_column, ref.referencing_table)
            INTO rows_done, rows_left;
        RETURN NEXT;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION sno_migration_progress(regclass) IS
    'where a key migration''s fill stands, from any session: per table, the rows with and without '
    'their new sno column, and the copy''s rate and time left while it runs';

-- Step 2: the IDs. First, in one transaction, every row without one gets an ID at its time in
-- time_column, numbered in a timeline of the meta claimed first (so that a run again after any
-- failure makes the same IDs), or without it in the order of the key and at the time of the fill
-- (sno_generate(meta)), kept in the work table (sno_migration_work_table).
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
    latest timestamptz;
    reach timestamptz;
    other_reach timestamptz;
    tick integer;
    claim jsonb;
    last_key text;
    upper_key text;
    ref record;
    ref_column name;
    pages bigint;
    first_page bigint;
    page_step bigint;
    -- Progress, in NOTICEs (and for other sessions, sno_migration_progress).
    started timestamptz;
    total bigint;
    done bigint;
    batch bigint;
BEGIN
    PERFORM @extschema@.sno_migration_settings();
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    new_column := @extschema@.sno_migration_name(key_column, 'sno');
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

    -- The IDs, into the work table. With a time column they are numbered, not drawn from the
    -- generator: each row's ID is its time's 4 ms unit, a tick-tock timeline of the meta claimed
    -- for the table's span, and its place among the rows of that unit (in the order of the time,
    -- then the key). So a run that a crash or an error interrupts, however often and wherever,
    -- makes the same IDs again with the same meta: the claim (the timeline, the span, the backfill
    -- partition) is committed first, in the work table's comment, in the transaction that moves
    -- the meta's cursor past the span, so that no later sno_generate_at of the meta makes one of
    -- these IDs.
    IF to_regclass(work_table) IS NULL THEN
        EXECUTE format('CREATE TABLE %s (old_key %s, new_id @extschema@.sno NOT NULL)',
                       work_table, key_type);
        IF time_column IS NULL THEN
            -- IDs of the time of the migration, from the live generator, in the key's order:
            -- it never makes an ID twice, so a run that fails only wastes some.
            started := clock_timestamp();
            EXECUTE format('INSERT INTO %s SELECT %I, @extschema@.sno_generate($1) FROM %s '
                           'WHERE %I IS NULL ORDER BY %I',
                           work_table, key_column, tab, new_column, key_column) USING meta;
            GET DIAGNOSTICS total = ROW_COUNT;
            EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (old_key)', work_table);
            EXECUTE format('COMMENT ON TABLE %s IS %L', work_table, '{"made": true}');
            RAISE NOTICE 'sno_migration_fill: %: % IDs made in % s', tab, total,
                round(extract(epoch FROM clock_timestamp() - started), 1);
        ELSE
            EXECUTE format('SELECT count(*) FROM %s WHERE %I IS NULL AND %I IS NULL',
                           tab, new_column, time_column) INTO missing;
            IF missing > 0 THEN
                RAISE EXCEPTION 'sno_migration_fill: % rows of % have no %', missing, tab, time_column
                    USING ERRCODE = 'null_value_not_allowed',
                          HINT = format('Give them a time (UPDATE %s SET %I = ... WHERE %I IS NULL), '
                                        'then call sno_migration_fill again.', tab, time_column,
                                        time_column);
            END IF;
            -- The partition every ID of the claim carries, as sno_generate_at would stamp it.
            IF coalesce(nullif(current_setting('sno.backfill_partition', true), ''), '-1')::integer < 0 THEN
                RAISE EXCEPTION 'sno_migration_fill: sno.backfill_partition is not set'
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          HINT = 'Set it to a partition that no server uses (docs/backfills.md), '
                                 'then call sno_migration_fill again.';
            END IF;
            EXECUTE format('SELECT min(u), max(u), max(n) FROM (SELECT date_bin(''4 ms'', %I::timestamptz, '
                           '''2010-01-01 00:00:00+00'') AS u, count(*) AS n FROM %s WHERE %I IS NULL '
                           'GROUP BY 1) AS units', time_column, tab, new_column)
                INTO earliest, latest, missing;
            IF missing > 65536 THEN
                RAISE EXCEPTION 'sno_migration_fill: % rows of % share one 4 ms unit of %, more than its 65,536 IDs',
                    missing, tab, time_column
                    USING ERRCODE = 'program_limit_exceeded',
                          HINT = 'Move the table without a time column (its IDs then take the time '
                                 'of the migration), or spread those rows'' times.';
            END IF;
            -- The timeline: the meta's current one if it has not reached the earliest time,
            -- else the other (a second pass), which must not have reached it either.
            SELECT c.tick_tock, c.last_time, c.other_last_time INTO tick, reach, other_reach
            FROM @extschema@.sno_backfill_cursors() c WHERE c.meta = sno_migration_fill.meta;
            IF reach IS NULL OR reach < earliest THEN
                tick := coalesce(tick, 0);
            ELSIF other_reach IS NULL OR other_reach < earliest THEN
                tick := 1 - tick;
            ELSE
                RAISE EXCEPTION 'sno_migration_fill: both timelines of meta % reach past %''s earliest % (%)',
                    meta, tab, time_column, earliest
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          HINT = format('Run the steps again with a meta that sno_backfill_cursors() '
                                        'does not list; or, if no table holds backfill IDs of meta '
                                        '%s and no work table of a key migration (sno_migration_ '
                                        'and a number) holds a claim of it, a superuser may retire '
                                        'its cursor: SELECT sno_retire_backfill_cursor(%s).',
                                        meta, meta);
            END IF;
            -- Times sno can hold, the unit after the span included (where the cursor goes).
            PERFORM @extschema@.sno_from_parts(earliest, meta, 0, 0),
                    @extschema@.sno_from_parts(latest + interval '4 ms', meta, 0, 0);
            -- The meta's cursor past the span, in that timeline, in the transaction that
            -- commits the claim: so no claim is ever committed whose span another backfill could
            -- still reach (a crash before the commit costs a pass of the meta, never an ID).
            -- First to the span's start, where that flips the cursor to the other timeline.
            IF tick <> coalesce((SELECT c.tick_tock FROM @extschema@.sno_backfill_cursors() c
                                 WHERE c.meta = sno_migration_fill.meta), tick) THEN
                PERFORM @extschema@.sno_generate_at(meta, earliest);
            END IF;
            IF @extschema@.sno_tick_tock(@extschema@.sno_generate_at(meta, latest + interval '4 ms'))
                    <> tick THEN
                RAISE EXCEPTION 'sno_migration_fill: meta %''s cursor left timeline % while % claimed it',
                    meta, tick, tab
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          HINT = 'Another backfill uses the meta: give each backfill and migration '
                                 'a meta of its own, and run the steps again.';
            END IF;
            EXECUTE format('COMMENT ON TABLE %s IS %L', work_table,
                           jsonb_build_object('tick', tick, 'from', earliest, 'through', latest,
                                              'partition',
                                              current_setting('sno.backfill_partition', true)));
        END IF;
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
        -- Test builds only (sno.test_migration_pause_ms): lets a test stop a fill here.
        PERFORM pg_sleep(coalesce(current_setting('sno.test_migration_pause_ms', true), '0')::numeric
                         / 1000);
    END IF;
    claim := obj_description(to_regclass(work_table), 'pg_class')::jsonb;
    IF claim IS NULL OR NOT claim ? 'made' AND NOT claim ? 'tick' THEN
        RAISE EXCEPTION 'sno_migration_fill: % is not a work table of this migration', work_table
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Drop it, then call sno_migration_fill again.';
    END IF;
    IF NOT claim ? 'made' THEN
        IF current_setting('sno.backfill_partition', true) IS DISTINCT FROM claim->>'partition' THEN
            RAISE EXCEPTION 'sno_migration_fill: sno.backfill_partition is %, not the % this fill claimed its IDs in',
                coalesce(current_setting('sno.backfill_partition', true), 'not set'),
                claim->>'partition'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = format('Set it back to %s, or drop the work table %s and run the steps '
                                    'again.', claim->>'partition', work_table);
        END IF;
        tick := (claim->>'tick')::integer;
        earliest := (claim->>'from')::timestamptz;
        latest := (claim->>'through')::timestamptz;
        started := clock_timestamp();
        RAISE NOTICE 'sno_migration_fill: %: making the IDs, in one statement', tab;
        EXECUTE format('INSERT INTO %1$s SELECT k, @extschema@.sno_from_parts(u, $1, $2, '
                       '(row_number() OVER (PARTITION BY u ORDER BY t, k) - 1)::integer, $3) '
                       'FROM (SELECT %2$I AS k, %3$I::timestamptz AS t, date_bin(''4 ms'', '
                       '%3$I::timestamptz, ''2010-01-01 00:00:00+00'') AS u FROM %4$s '
                       'WHERE %5$I IS NULL) AS r WHERE u BETWEEN $4 AND $5',
                       work_table, key_column, time_column, tab, new_column)
            USING meta, (claim->>'partition')::integer, tick, earliest, latest;
        GET DIAGNOSTICS total = ROW_COUNT;
        EXECUTE format('ALTER TABLE %s ADD PRIMARY KEY (old_key)', work_table);
        claim := claim || '{"made": true}';
        EXECUTE format('COMMENT ON TABLE %s IS %L', work_table, claim);
        RAISE NOTICE 'sno_migration_fill: %: % IDs made in % s', tab, total,
            round(extract(epoch FROM clock_timestamp() - started), 1);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
    END IF;

    -- The copy: what is left of the work table (all of it, unless a run was interrupted).
    EXECUTE format('SELECT count(*) FROM %s', work_table) INTO total;
    started := clock_timestamp();
    done := 0;
    -- For sno_migration_progress in other sessions: when this copy started, and its size.
    EXECUTE format('COMMENT ON TABLE %s IS %L', work_table,
                   claim || jsonb_build_object('copy_started_at', started, 'rows', total));
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
        GET DIAGNOSTICS batch = ROW_COUNT;
        done := done + batch;
        last_key := upper_key;
        COMMIT;
        RAISE NOTICE '%', @extschema@.sno_migration_progress_line(tab, 'rows', done, total, started);
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
        ref_column := @extschema@.sno_migration_name(ref.referencing_column, 'sno');
        first_page := 0;
        started := clock_timestamp();
        WHILE first_page < pages LOOP
            -- A page range, each row's parent found through its primary key (not a hash of
            -- the whole parent table for each range).
            PERFORM set_config('enable_hashjoin', 'off', true);
            PERFORM set_config('enable_mergejoin', 'off', true);
            EXECUTE format('UPDATE %s AS r SET %I = p.%I FROM %s AS p WHERE p.%I = r.%I '
                           'AND r.%I IS NULL AND r.ctid >= $1::text::tid AND r.ctid < $2::text::tid',
                           ref.referencing_table, ref_column, new_column, tab, key_column,
                           ref.referencing_column, ref_column)
                USING format('(%s,0)', first_page), format('(%s,0)', first_page + page_step);
            first_page := first_page + page_step;
            COMMIT;
            RAISE NOTICE '%', @extschema@.sno_migration_progress_line(
                ref.referencing_table, 'pages', least(first_page, pages), pages, started);
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
    -- Missing, or not the parent's (written by hand: the copy trigger looks up only where the
    -- reference moves or the copy is missing).
    EXECUTE format('UPDATE %1$s AS r SET %2$I = p.%3$I FROM %4$s AS p WHERE p.%5$I = r.%6$I '
                   'AND (r.%2$I IS NULL OR NOT (r.%2$I OPERATOR(@extschema@.=) p.%3$I))',
                   child, @extschema@.sno_migration_name(child_key, 'sno'), parent_new, parent,
                   parent_key, child_key);
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
    new_column := @extschema@.sno_migration_name(key_column, 'sno');
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
                   AND conname = @extschema@.sno_migration_name(new_column, 'not_null')) THEN
        PERFORM @extschema@.sno_migration_lock(ARRAY[tab]);
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%I IS NOT NULL) NOT VALID',
                       tab, @extschema@.sno_migration_name(new_column, 'not_null'), new_column);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
    END IF;
    EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT %I', tab, @extschema@.sno_migration_name(new_column, 'not_null'));
    COMMIT;
    PERFORM @extschema@.sno_migration_settings();
    FOR ref IN SELECT * FROM @extschema@.sno_migration_references(tab, key_column) LOOP
        PERFORM @extschema@.sno_migration_settings();
        check_name := @extschema@.sno_migration_name(ref.referencing_column, 'sno_'
            || CASE WHEN ref.column_not_null THEN 'not_null' ELSE 'matches' END);
        -- Rows that missed the copy: those the application wrote while the table's own fill ran
        -- (their trigger found no new key yet), wherever they are. Caught up before the check
        -- is added, and again after it for rows of transactions still open then; an UPDATE of
        -- such a row meanwhile copies the key itself (sno_migration_follow), so the check never
        -- refuses one of the application's writes.
        PERFORM @extschema@.sno_migration_copy_missing(tab, key_column, new_column,
                                                       ref.referencing_table,
                                                       ref.referencing_column);
        COMMIT;
        PERFORM @extschema@.sno_migration_settings();
        IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = ref.referencing_table
                       AND conname = check_name) THEN
            PERFORM @extschema@.sno_migration_lock(ARRAY[ref.referencing_table]);
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I CHECK (%s) NOT VALID',
                           ref.referencing_table, check_name,
                           CASE WHEN ref.column_not_null
                                THEN format('%I IS NOT NULL', @extschema@.sno_migration_name(ref.referencing_column, 'sno'))
                                ELSE format('(%I IS NULL) = (%I IS NULL)', ref.referencing_column,
                                            @extschema@.sno_migration_name(ref.referencing_column, 'sno')) END);
            COMMIT;
            PERFORM @extschema@.sno_migration_settings();
        END IF;
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
                           ref.referencing_table, fk_name, @extschema@.sno_migration_name(ref.referencing_column, 'sno'), tab,
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
    users text;
    remedies text;
    views jsonb;
    policies jsonb;
    locked regclass[];
    made_uses text[];
    migrating_role text := current_setting('role');
    carried record;
    grant_made record;
    grantee record;
    view_name text;
BEGIN
    SELECT k.key_column, k.key_type INTO key_column, key_type FROM @extschema@.sno_migration_key(tab) k;
    IF key_type = '@extschema@.sno'::regtype AND EXISTS (
            SELECT FROM pg_attribute WHERE attrelid = tab AND NOT attisdropped
            AND attname = @extschema@.sno_migration_name(key_column, 'old')) THEN
        RAISE NOTICE 'sno_migration_switch: % has switched to its sno key already', tab
            USING HINT = 'Once the application no longer reads the old key: '
                         'sno_migration_steps(..., stage => ''drop_old_key'').';
        RETURN;
    END IF;
    new_column := @extschema@.sno_migration_name(key_column, 'sno');
    old_column := @extschema@.sno_migration_name(key_column, 'old');
    new_index := @extschema@.sno_migration_unique_index(tab, new_column);
    SELECT string_agg(p, '; ') INTO problem FROM (
        SELECT 'not prepared and filled' AS p
        WHERE key_type IS NULL OR key_type = '@extschema@.sno'::regtype
           OR to_regclass(@extschema@.sno_migration_work_table(tab)) IS NOT NULL
        UNION ALL
        SELECT format('constraint %I not validated', c.conname)
        FROM pg_constraint c WHERE c.conrelid = tab AND c.conname = @extschema@.sno_migration_name(new_column, 'not_null')
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
    -- The views it carries (and the tables of the policies) are locked with the tables: dropping
    -- a view outside the lock set would wait for it while holding the tables.
    locked := ARRAY[tab] || ARRAY(
        SELECT DISTINCT x.referencing_table::regclass
        FROM jsonb_to_recordset(refs) AS x(referencing_table oid)) || ARRAY(
        SELECT DISTINCT c.relation::regclass
        FROM @extschema@.sno_migration_carried(tab, key_column) c);
    PERFORM @extschema@.sno_migration_lock(locked);
    IF EXISTS (SELECT FROM @extschema@.sno_migration_carried(tab, key_column) c
               WHERE c.relation::regclass <> ALL (locked)) THEN
        RAISE EXCEPTION 'sno_migration_switch: a view or policy on the key of % was made while it took its locks', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call sno_migration_switch again.';
    END IF;
    -- Under the lock, so that nothing is made between the look and the switch: objects made
    -- since sno_migration_check ran (a trigger, a rule) would keep the old key under its new name.
    SELECT string_agg(u.problem, E'\n'), string_agg(DISTINCT u.remedy, E'\n')
    INTO users, remedies FROM @extschema@.sno_migration_users_of_key(tab, key_column) u;
    IF users IS NOT NULL THEN
        RAISE EXCEPTION 'sno_migration_switch: % cannot switch: these would go on using its old key', tab
            USING ERRCODE = 'dependent_objects_still_exist', DETAIL = users,
                  HINT = remedies || E'\nThen call sno_migration_switch again.';
    END IF;
    -- The views and policies that use the key, carried to the sno key: their definitions read
    -- now (names qualified: the search_path is pg_catalog's), the views dropped, and each made
    -- again once the columns have their new names, with its owner, options, grants and comments.
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'schema', n.nspname, 'name', v.relname, 'definition', pg_get_viewdef(v.oid),
               'options', v.reloptions, 'owner', o.rolname, 'comment', obj_description(v.oid, 'pg_class'),
               'default_acl', v.relacl IS NULL,
               'uses', @extschema@.sno_migration_foreign_uses('pg_rewrite'::regclass, c.object),
               -- Every grant, the owner's own included, with its grantor: the chains of grant
               -- options stay as they were. The owner's come first, then the ones it granted.
               'grants', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                  'privilege', acl.privilege_type, 'column', x.attname,
                                  'grantee', CASE WHEN acl.grantee = 0 THEN 'PUBLIC'
                                                  ELSE quote_ident(g.rolname) END,
                                  'grantor', b.rolname,
                                  'grantable', acl.is_grantable)
                                  ORDER BY acl.grantee <> v.relowner, acl.grantor <> v.relowner), '[]')
                          FROM (SELECT NULL::name AS attname, v.relacl AS acl
                                UNION ALL
                                SELECT a.attname, a.attacl FROM pg_attribute a
                                WHERE a.attrelid = v.oid AND a.attacl IS NOT NULL) AS x
                          CROSS JOIN LATERAL aclexplode(x.acl) AS acl
                          LEFT JOIN pg_roles g ON g.oid = acl.grantee
                          JOIN pg_roles b ON b.oid = acl.grantor),
               'defaults', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                    'column', a.attname, 'default', pg_get_expr(d.adbin, d.adrelid))),
                                    '[]')
                            FROM pg_attrdef d JOIN pg_attribute a
                              ON a.attrelid = d.adrelid AND a.attnum = d.adnum
                            WHERE d.adrelid = v.oid),
               'column_comments', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                           'column', a.attname,
                                           'comment', col_description(v.oid, a.attnum))), '[]')
                                   FROM pg_attribute a WHERE a.attrelid = v.oid AND a.attnum > 0
                                     AND col_description(v.oid, a.attnum) IS NOT NULL))
               ORDER BY v.oid), '[]')
    INTO views
    FROM @extschema@.sno_migration_carried(tab, key_column) c
    JOIN pg_class v ON v.oid = c.relation
    JOIN pg_namespace n ON n.oid = v.relnamespace
    JOIN pg_roles o ON o.oid = v.relowner
    WHERE c.kind = 'view';
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'name', p.polname, 'table', p.polrelid::regclass::text, 'oid', p.oid,
               'uses', @extschema@.sno_migration_foreign_uses('pg_policy'::regclass, p.oid),
               'using', pg_get_expr(p.polqual, p.polrelid),
               'check', pg_get_expr(p.polwithcheck, p.polrelid)) ORDER BY p.oid), '[]')
    INTO policies
    FROM @extschema@.sno_migration_carried(tab, key_column) c
    JOIN pg_policy p ON p.oid = c.object
    WHERE c.kind = 'policy';
    FOR carried IN SELECT * FROM jsonb_array_elements(views) LOOP
        EXECUTE format('DROP VIEW %I.%I', carried.value->>'schema', carried.value->>'name');
    END LOOP;
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
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', tab, @extschema@.sno_migration_name(new_column, 'not_null'));
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
                       ref.referencing_column, @extschema@.sno_migration_name(ref.referencing_column, 'old'));
        EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', ref.referencing_table,
                       @extschema@.sno_migration_name(ref.referencing_column, 'sno'), ref.referencing_column);
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL', ref.referencing_table,
                       @extschema@.sno_migration_name(ref.referencing_column, 'old'));
        IF ref.column_not_null THEN
            EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET NOT NULL', ref.referencing_table,
                           ref.referencing_column);
        END IF;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', ref.referencing_table,
                       @extschema@.sno_migration_name(ref.referencing_column, 'sno_'
                       || CASE WHEN ref.column_not_null THEN 'not_null' ELSE 'matches' END));
        EXECUTE format('ALTER TABLE %s RENAME CONSTRAINT %I TO %I', ref.referencing_table,
                       @extschema@.sno_migration_name(ref.constraint_name, 'sno'),
                       ref.constraint_name);
        PERFORM @extschema@.sno_migration_copy_grants(ref.referencing_table,
                                                      @extschema@.sno_migration_name(ref.referencing_column, 'old'),
                                                      ref.referencing_column);
        PERFORM @extschema@.sno_migration_follow(tab, key_column, old_column,
                                                 ref.referencing_table, ref.referencing_column,
                                                 @extschema@.sno_migration_name(ref.referencing_column, 'old'));
    END LOOP;

    -- The views and policies, made again on the new columns (see above). One that no longer
    -- parses (an expression that compared the old key with a number, say) ends the switch.
    -- Their definitions name everything outside pg_catalog with its schema, but an operator
    -- of pg_catalog's read then (bigint's =) is sno's now: the extension's schema is on the path
    -- while they are parsed, after pg_catalog (docs/migration.md: install sno in a schema that
    -- only trusted roles may create objects in).
    PERFORM set_config('search_path', 'pg_catalog, @extschema@, pg_temp', true);
    FOR carried IN SELECT * FROM jsonb_array_elements(views) LOOP
        view_name := format('%I.%I', carried.value->>'schema', carried.value->>'name');
        BEGIN
            EXECUTE format('CREATE VIEW %s%s AS %s', view_name,
                           CASE WHEN jsonb_typeof(carried.value->'options') = 'array'
                                THEN format(' WITH (%s)', (SELECT string_agg(o, ', ')
                                     FROM jsonb_array_elements_text(carried.value->'options') AS o))
                                ELSE '' END,
                           carried.value->>'definition');
        EXCEPTION WHEN OTHERS THEN
            RAISE EXCEPTION 'sno_migration_switch: view % cannot be carried to the sno key of %: %',
                view_name, tab, SQLERRM
                USING ERRCODE = 'dependent_objects_still_exist',
                      HINT = 'Drop it, call sno_migration_switch again, and create it on the sno key after.';
        END;
        -- Anything the new definition calls that the old one did not, outside pg_catalog and sno
        -- (an operator that someone put where the path now finds it), is refused.
        made_uses := ARRAY(SELECT jsonb_array_elements_text(carried.value->'uses'));
        IF EXISTS (SELECT FROM unnest(@extschema@.sno_migration_foreign_uses('pg_rewrite'::regclass,
                       (SELECT r.oid FROM pg_rewrite r WHERE r.ev_class = view_name::regclass
                        AND r.rulename = '_RETURN'))) AS u
                   WHERE u <> ALL (made_uses)) THEN
            RAISE EXCEPTION 'sno_migration_switch: view % would call functions or operators it did not before',
                view_name
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'Objects outside pg_catalog and sno, in the extension''s schema, now '
                             'match its expressions: drop them, or drop the view for the switch.';
        END IF;
        EXECUTE format('ALTER VIEW %s OWNER TO %I', view_name, carried.value->>'owner');
        FOR grant_made IN SELECT * FROM jsonb_array_elements(carried.value->'defaults') LOOP
            EXECUTE format('ALTER VIEW %s ALTER COLUMN %I SET DEFAULT %s', view_name,
                           grant_made.value->>'column', grant_made.value->>'default');
        END LOOP;
        -- Exactly the grants it had: none that default privileges gave the new view, the owner's
        -- own as they were (one it had revoked from itself stays revoked), each by its grantor.
        IF NOT (carried.value->>'default_acl')::boolean THEN
            -- (Its grants below give the owner back what it had.)
            EXECUTE format('REVOKE ALL ON %s FROM %I', view_name, carried.value->>'owner');
        END IF;
        FOR grantee IN SELECT DISTINCT acl.grantee FROM pg_class v CROSS JOIN LATERAL aclexplode(v.relacl) AS acl
                       WHERE v.oid = view_name::regclass AND acl.grantee <> v.relowner LOOP
            EXECUTE format('REVOKE ALL ON %s FROM %s', view_name,
                           CASE WHEN grantee.grantee = 0 THEN 'PUBLIC'
                                ELSE quote_ident((SELECT rolname FROM pg_roles WHERE oid = grantee.grantee)) END);
        END LOOP;
        -- As its grantor (PostgreSQL 15 takes GRANTED BY only for the current user).
        FOR grant_made IN SELECT * FROM jsonb_array_elements(carried.value->'grants') LOOP
            PERFORM set_config('role', grant_made.value->>'grantor', true);
            EXECUTE format('GRANT %s%s ON %s TO %s%s', grant_made.value->>'privilege',
                           CASE WHEN grant_made.value->>'column' IS NOT NULL
                                THEN format(' (%I)', grant_made.value->>'column') ELSE '' END,
                           view_name, grant_made.value->>'grantee',
                           CASE WHEN (grant_made.value->>'grantable')::boolean
                                THEN ' WITH GRANT OPTION' ELSE '' END);
            PERFORM set_config('role', migrating_role, true);
        END LOOP;
        RAISE NOTICE 'sno_migration_switch: view % carried to the sno key: %', view_name,
            pg_get_viewdef(view_name::regclass);
        IF carried.value->>'comment' IS NOT NULL THEN
            EXECUTE format('COMMENT ON VIEW %s IS %L', view_name, carried.value->>'comment');
        END IF;
        FOR grant_made IN SELECT * FROM jsonb_array_elements(carried.value->'column_comments') LOOP
            EXECUTE format('COMMENT ON COLUMN %s.%I IS %L', view_name, grant_made.value->>'column',
                           grant_made.value->>'comment');
        END LOOP;
    END LOOP;
    FOR carried IN SELECT * FROM jsonb_array_elements(policies) LOOP
        BEGIN
            EXECUTE format('ALTER POLICY %I ON %s%s%s', carried.value->>'name',
                           carried.value->>'table',
                           CASE WHEN carried.value->>'using' IS NOT NULL
                                THEN format(' USING (%s)', carried.value->>'using') ELSE '' END,
                           CASE WHEN carried.value->>'check' IS NOT NULL
                                THEN format(' WITH CHECK (%s)', carried.value->>'check') ELSE '' END);
        EXCEPTION WHEN OTHERS THEN
            RAISE EXCEPTION 'sno_migration_switch: policy % of % cannot be carried to the sno key: %',
                carried.value->>'name', carried.value->>'table', SQLERRM
                USING ERRCODE = 'dependent_objects_still_exist',
                      HINT = 'Drop it, call sno_migration_switch again, and create it on the sno key after.';
        END;
        made_uses := ARRAY(SELECT jsonb_array_elements_text(carried.value->'uses'));
        IF EXISTS (SELECT FROM unnest(@extschema@.sno_migration_foreign_uses('pg_policy'::regclass,
                       (carried.value->>'oid')::oid)) AS u WHERE u <> ALL (made_uses)) THEN
            RAISE EXCEPTION 'sno_migration_switch: policy % of % would call functions or operators it did not before',
                carried.value->>'name', carried.value->>'table'
                USING ERRCODE = 'insufficient_privilege',
                      HINT = 'Objects outside pg_catalog and sno, in the extension''s schema, now '
                             'match its expressions: drop them, or drop the policy for the switch.';
        END IF;
        RAISE NOTICE 'sno_migration_switch: policy % of % carried to the sno key', carried.value->>'name',
            carried.value->>'table';
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
                           AND attname = @extschema@.sno_migration_name(key_column, 'old') AND NOT attisdropped) THEN
        RAISE EXCEPTION 'sno_migration_drop_old_key: % has no old key kept by a migration', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'It comes after sno_migration_switch.';
    END IF;
    -- The migration's triggers on the referencing tables (sno_migration_follow): their
    -- arguments are this table's oid, its two columns, the sno reference and its old column.
    SELECT coalesce(jsonb_agg(jsonb_build_object('child', g.tgrelid, 'trigger', g.tgname,
                                                 'function', g.tgfoid::regprocedure::text,
                                                 'reference',
                                                 @extschema@.sno_migration_trigger_argument(g.tgargs, 4),
                                                 'old',
                                                 @extschema@.sno_migration_trigger_argument(g.tgargs, 5),
                                                 'namespace', n.nspname, 'relname', c.relname)
                              ORDER BY g.tgrelid::regclass::text, g.tgname), '[]')
    INTO followers
    FROM pg_trigger g
    JOIN pg_proc f ON f.oid = g.tgfoid
    JOIN pg_class c ON c.oid = g.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_class t ON t.oid = tab
    -- Only on a table whose foreign key points at this one, for that key's column, with its
    -- function in this table's schema, owned by its owner: a look-alike trigger that anyone
    -- with TRIGGER on some table made must not get a column of theirs dropped.
    JOIN @extschema@.sno_migration_references(tab, key_column) r
      ON r.referencing_table = g.tgrelid
     AND r.referencing_column = @extschema@.sno_migration_trigger_argument(g.tgargs, 4)
     AND @extschema@.sno_migration_name(r.referencing_column, 'old')
         = @extschema@.sno_migration_trigger_argument(g.tgargs, 5)
    WHERE g.tgname LIKE 'sno\_migration\_key\_%' AND g.tgnargs = 5
      AND f.proname = 'sno_migration_key_' || g.tgrelid || substr(g.tgname, 18)
      AND f.pronamespace = t.relnamespace AND f.proowner = t.relowner AND f.prosecdef
      AND @extschema@.sno_migration_trigger_argument(g.tgargs, 1) = tab::oid::text;
    -- DROP COLUMN would take indexes and constraints of several columns with it, unasked.
    SELECT string_agg(format('%s uses %I of %s', pg_describe_object(d.classid, d.objid, 0),
                             a.attname, a.attrelid::regclass), '; ' ORDER BY 1)
    INTO in_use
    FROM pg_depend d
    JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
    WHERE d.refclassid = 'pg_class'::regclass
      AND (a.attrelid, a.attname) IN (
          SELECT tab, @extschema@.sno_migration_name(key_column, 'old')
          UNION ALL
          SELECT (f->>'child')::oid, f->>'old' FROM jsonb_array_elements(followers) f)
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
                           f->>'function' AS function_name, f->>'reference' AS reference,
                           f->>'old' AS old_column, f->>'namespace' AS namespace,
                           f->>'relname' AS relname
                    FROM jsonb_array_elements(followers) f LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', follower.trigger_name, follower.child);
        EXECUTE format('DROP FUNCTION %s', follower.function_name);
        EXECUTE format('ALTER TABLE %s DROP COLUMN %I', follower.child, follower.old_column);
        -- The new reference's index takes the name PostgreSQL would give it, once free.
        index_name := @extschema@.sno_migration_name(follower.relname || '_' || follower.reference,
                                                     'sno_idx');
        free_name := @extschema@.sno_migration_name(follower.relname || '_' || follower.reference,
                                                    'idx');
        IF to_regclass(format('%I.%I', follower.namespace, index_name)) IS NOT NULL
                AND to_regclass(format('%I.%I', follower.namespace, free_name)) IS NULL THEN
            EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', follower.namespace, index_name,
                           free_name);
        END IF;
    END LOOP;
    EXECUTE format('ALTER TABLE %s DROP COLUMN %I', tab,
                   @extschema@.sno_migration_name(key_column, 'old'));
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
        FROM (VALUES (@extschema@.sno_migration_name(key_column, 'sno'),
                      @extschema@.sno_migration_name(
                          (SELECT relname FROM pg_class WHERE oid = tab) || '_' || key_column,
                          'sno_key')),
                     (key_column, @extschema@.sno_migration_name(
                          (SELECT relname FROM pg_class WHERE oid = tab) || '_' || key_column,
                          'old_key')))
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
               @extschema@.sno_migration_name(c.relname || '_' || r.referencing_column, 'sno_idx')
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
                                      @extschema@.sno_migration_name(ref.referencing_column, 'sno')), locks;
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
