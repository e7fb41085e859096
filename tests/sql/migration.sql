-- Moving a table's key to sno (docs/migration.md): the steps sno_migration_steps lists, run with
-- psql's \gexec as the docs run them, on a bigint identity key with two referencing tables (one
-- NOT NULL with ON DELETE CASCADE and an index, one nullable with ON DELETE SET NULL under a uuid
-- key), a failure in the middle and the run again, the application writing between steps, and
-- what the check refuses. IDs vary with the server's partitions, so they are checked as
-- properties. tests/t/039_migration.pl runs the same at size, with sessions writing throughout.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
-- PL/pgSQL's CONTEXT lines carry line numbers of the functions.
\set SHOW_CONTEXT never
-- The fill's progress NOTICEs carry times and rates: not shown here (tests/t/039_migration.pl
-- reads them), nor PostgreSQL's own NOTICEs; the ones the steps raise are, where they are meant.
SET client_min_messages = warning;

-- The table's rows are in neither the order of their times nor of their keys' times.
CREATE TABLE orders (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at timestamptz,
    total integer NOT NULL);
CREATE TABLE lines (
    id bigserial PRIMARY KEY,
    order_id bigint NOT NULL REFERENCES orders ON DELETE CASCADE,
    qty integer);
CREATE INDEX ON lines (order_id);
CREATE TABLE notes (
    note_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    order_id bigint REFERENCES orders ON DELETE SET NULL,
    body text);
INSERT INTO orders (created_at, total)
SELECT timestamptz '2021-01-01' + (g * 389 % 1000) * interval '1 hour 3.5 seconds', g
FROM generate_series(1, 1000) AS g;
INSERT INTO lines (order_id, qty) SELECT 1 + g % 1000, g FROM generate_series(1, 2500) AS g;
INSERT INTO notes (order_id, body)
SELECT CASE WHEN g % 4 <> 0 THEN 1 + g * 7 % 1000 END, 'note ' || g FROM generate_series(1, 600) AS g;
-- One order without a time, which the fill will refuse.
UPDATE orders SET created_at = NULL WHERE total = 500;
CREATE TABLE before AS
SELECT o.id, o.created_at, o.total,
       (SELECT count(*) FROM lines l WHERE l.order_id = o.id) AS lines,
       (SELECT count(*) FROM notes n WHERE n.order_id = o.id) AS notes
FROM orders o;

-- Roles granted the keys by column: they read them by name after the switch as before.
CREATE ROLE regress_migration_reader;
GRANT SELECT (id, total) ON orders TO regress_migration_reader;
GRANT SELECT (order_id, qty), UPDATE (order_id) ON lines TO regress_migration_reader
    WITH GRANT OPTION;
GRANT SELECT (order_id) ON notes TO PUBLIC;
-- A role that may add lines and change their quantities, and nothing else: no privilege on orders
-- at all (the foreign key check runs as the owner), and row-level security on orders that hides
-- every order from it. The copy of its lines' new references must need neither.
CREATE ROLE regress_migration_writer;
GRANT SELECT (qty), INSERT (order_id, qty), UPDATE (qty) ON lines TO regress_migration_writer;
GRANT USAGE ON SEQUENCE lines_id_seq TO regress_migration_writer;
ALTER TABLE orders ENABLE ROW LEVEL SECURITY;
CREATE POLICY not_the_writer ON orders USING (current_user <> 'regress_migration_writer');

-- Nothing stops it.
SELECT * FROM sno_migration_check('orders', 'created_at');
-- The plan, with the locks each step takes.
SELECT * FROM sno_migration_steps('orders', 200, 'created_at', batch_rows => 300);

-- Run it: the fill stops at the order without a time, after the prepare.
SELECT statement FROM sno_migration_steps('orders', 200, 'created_at', batch_rows => 300) \gexec
-- Between steps the application writes as before: a new order gets its sno key from the
-- default, a new line its new reference from the trigger.
INSERT INTO orders (created_at, total) VALUES ('2026-01-01', 1001);
INSERT INTO lines (order_id, qty) VALUES (1001, -1), (1, -2);
SELECT sno_meta(id_sno) AS new_order_meta, sno_time(id_sno) > '2026-01-01' AS new_order_now
FROM orders WHERE total = 1001;
SELECT qty, order_id_sno IS NOT NULL AS copied FROM lines WHERE qty < 0 ORDER BY qty;
-- So does the role without any privilege on orders; and a role granted UPDATE (order_id) moves
-- a line to another order, its new reference with it.
SET ROLE regress_migration_writer;
INSERT INTO lines (order_id, qty) VALUES (1001, -4);
UPDATE lines SET qty = qty WHERE qty = -4;
RESET ROLE;
SET ROLE regress_migration_reader;
UPDATE lines SET order_id = 1001 WHERE qty = -2;
RESET ROLE;
SELECT l.qty, l.order_id_sno = o.id_sno AS copied FROM lines l JOIN orders o ON o.id = l.order_id
WHERE l.qty < 0 ORDER BY l.qty;
-- The copies' functions: one per referencing table, run as orders' owner, executable by no one
-- else.
SELECT regexp_replace(p.oid::regprocedure::text, '[0-9]+', '<oid>') AS function, p.prosecdef,
       p.proowner = (SELECT relowner FROM pg_class WHERE oid = 'orders'::regclass) AS orders_owner,
       has_function_privilege('regress_migration_writer', p.oid, 'EXECUTE') AS writer_may_call,
       p.proconfig
FROM pg_proc p WHERE p.proname ~ '^sno_migration_key_[0-9]' ORDER BY p.oid;
-- Where it stands, from any session.
SELECT * FROM sno_migration_progress('orders');
-- Views and policies made after the prepare that use the key: the switch carries them to the sno
-- key, with their options, grants and comments; one that cannot be (a policy comparing the key
-- with a number) makes it refuse, naming it.
CREATE VIEW order_totals WITH (security_barrier) AS SELECT id, total FROM orders WHERE total > 10;
GRANT SELECT ON order_totals TO regress_migration_reader;
GRANT SELECT (total) ON order_totals TO regress_migration_writer;
COMMENT ON VIEW order_totals IS 'orders over 10';
COMMENT ON COLUMN order_totals.id IS 'the key';
CREATE POLICY keyed ON lines USING (order_id IS NOT NULL);
ALTER TABLE lines ENABLE ROW LEVEL SECURITY;
CREATE POLICY everything ON lines USING (true);
CREATE POLICY numbered ON orders USING (id > 0);
-- Its column default, its grants as they were (one granted on by a grantee, the owner's own
-- INSERT revoked) are carried too.
ALTER VIEW order_totals ALTER COLUMN total SET DEFAULT 7;
GRANT SELECT ON order_totals TO regress_migration_writer WITH GRANT OPTION;
SET ROLE regress_migration_writer;
GRANT SELECT ON order_totals TO regress_migration_reader;
RESET ROLE;
REVOKE INSERT ON order_totals FROM CURRENT_USER;
CREATE TABLE acl_before AS
SELECT ARRAY(SELECT a::text FROM unnest(relacl) AS a ORDER BY 1) AS acl FROM pg_class
WHERE oid = 'order_totals'::regclass;
-- A view whose expression finds, once id is an sno, an operator that a role with CREATE in the
-- extension's schema put there: the switch refuses to make it again calling that.
CREATE VIEW order_labels AS SELECT 'order-' || id AS label FROM orders;
CREATE FUNCTION shadow(text, sno) RETURNS text LANGUAGE sql AS $$ SELECT 'hijacked' $$;
CREATE OPERATOR || (LEFTARG = text, RIGHTARG = sno, FUNCTION = shadow);
-- The fix, and the same steps again from the start: each does what is left.
UPDATE orders SET created_at = '2021-02-15 00:00:01' WHERE total = 500;
UPDATE before SET created_at = '2021-02-15 00:00:01' WHERE total = 500;
SELECT statement FROM sno_migration_steps('orders', 200, 'created_at', batch_rows => 300) \gexec
SELECT * FROM sno_migration_progress('orders');
-- Without the operator, the policy that cannot be carried stops it; without that, the switch
-- takes place (its NOTICEs, not shown, give each carried view's definition, which PostgreSQL
-- words differently by major); a second one says it has.
DROP OPERATOR || (text, sno);
DROP FUNCTION shadow(text, sno);
CALL sno_migration_switch('orders');
DROP POLICY numbered ON orders;
CALL sno_migration_switch('orders');
SET client_min_messages = notice;
SELECT format_type(atttypid, atttypmod) AS id_type FROM pg_attribute
WHERE attrelid = 'order_totals'::regclass AND attname = 'id';
SELECT relname, reloptions, obj_description(oid, 'pg_class') AS comment,
       col_description(oid, 1) AS id_comment,
       has_table_privilege('regress_migration_reader', oid, 'SELECT') AS reader_reads,
       has_column_privilege('regress_migration_writer', oid, 'total', 'SELECT') AS writer_reads_total,
       has_column_privilege('regress_migration_writer', oid, 'id', 'SELECT') AS writer_reads_id
FROM pg_class WHERE oid = 'order_totals'::regclass;
SELECT count(*) AS over_10, count(DISTINCT sno_meta(id)) AS metas FROM order_totals;
SELECT (SELECT acl FROM acl_before) = ARRAY(SELECT a::text FROM unnest(c.relacl) AS a ORDER BY 1)
           AS same_grants,
       (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d WHERE d.adrelid = c.oid)
           AS total_default
FROM pg_class c WHERE c.oid = 'order_totals'::regclass;
-- A carried expression now sees the sno key: 'order-' || id is the sno's text (docs/migration.md).
SELECT label ~ '^order-[2-9a-x]{16}$' AS sno_label FROM order_labels LIMIT 1;
DROP VIEW order_labels;
DROP TABLE acl_before;
SELECT polname, pg_get_expr(polqual, polrelid) AS using_expression FROM pg_policy
WHERE polrelid = 'lines'::regclass ORDER BY polname;
ALTER TABLE lines DISABLE ROW LEVEL SECURITY;
DROP POLICY keyed ON lines;
DROP POLICY everything ON lines;
SET client_min_messages = notice;
CALL sno_migration_switch('orders');

-- The tables as the switch left them.
CREATE FUNCTION columns_of(tab regclass) RETURNS TABLE (col name, type text, not_null boolean,
                                                         default_value text)
    LANGUAGE sql AS $$
    SELECT attname, format_type(atttypid, atttypmod), attnotnull,
           coalesce(pg_get_expr(d.adbin, d.adrelid),
                    CASE attidentity WHEN 'a' THEN 'generated always as identity' END)
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE attrelid = tab AND attnum > 0 AND NOT attisdropped ORDER BY attnum $$;
CREATE FUNCTION definitions_of(tab regclass) RETURNS TABLE (kind text, name name, definition text)
    LANGUAGE sql AS $$
    SELECT 'constraint', conname, pg_get_constraintdef(oid) FROM pg_constraint
    WHERE conrelid = tab AND contype <> 'n'  -- PostgreSQL 18's NOT NULL constraints
    UNION ALL
    SELECT 'index', indexrelid::regclass::name, pg_get_indexdef(indexrelid) FROM pg_index
    WHERE indrelid = tab AND NOT EXISTS (SELECT FROM pg_constraint WHERE conindid = indexrelid)
    UNION ALL
    SELECT 'trigger', tgname,
           regexp_replace(pg_get_triggerdef(oid), 'sno_migration_key_[0-9]+_([0-9]+_[0-9]+)\(''[0-9]+''',
                          'sno_migration_key_<table oid>_\1(''<parent oid>''')
    FROM pg_trigger
    WHERE tgrelid = tab AND NOT tgisinternal
    ORDER BY 1, 2 $$;
SELECT * FROM columns_of('orders');
SELECT * FROM definitions_of('orders');
SELECT * FROM columns_of('lines');
SELECT * FROM definitions_of('lines');
SELECT * FROM columns_of('notes');
SELECT * FROM definitions_of('notes');
-- No work table or constraint of the migration is left.
SELECT count(*) AS left_over FROM pg_class WHERE relname LIKE 'sno_migration%';

-- Same rows; each order's ID unique, of meta 200, at its own time (to its 4 ms unit), and the
-- IDs in the order of the times; each line and note points at the same order as before.
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids,
       bool_and(sno_meta(id) = 200) AS meta_200,
       bool_and(o.total = 1001 OR sno_time(id) = date_bin('4 ms', o.created_at, timestamptz '2010-01-01'))
         AS at_their_times
FROM orders o;
SELECT count(*) AS out_of_time_order
FROM (SELECT created_at, lag(created_at) OVER (ORDER BY id) AS previous FROM orders) AS o
WHERE previous > created_at;
SELECT count(*) AS changed FROM before b FULL JOIN orders o ON o.id_old = b.id
WHERE b.id IS NULL AND o.total <> 1001 OR o.id IS NULL
   OR o.created_at <> b.created_at OR o.total <> b.total
   OR b.lines <> (SELECT count(*) FROM lines l WHERE l.order_id = o.id AND l.qty > 0)
   OR b.notes <> (SELECT count(*) FROM notes n WHERE n.order_id = o.id);
SELECT count(*) AS lines_moved_elsewhere FROM lines l JOIN orders o ON o.id = l.order_id
WHERE o.id_old <> l.order_id_old;
SELECT count(*) AS notes, count(order_id) AS with_order,
       count(*) FILTER (WHERE o.id_old IS DISTINCT FROM n.order_id_old) AS moved_elsewhere
FROM notes n LEFT JOIN orders o ON o.id = n.order_id;

-- The column privileges went with the names: the new columns have the old ones', and the old
-- ones keep theirs until they are dropped.
SELECT has_column_privilege('regress_migration_reader', 'orders', 'id', 'SELECT') AS id,
       has_column_privilege('regress_migration_reader', 'orders', 'id_old', 'SELECT') AS id_old,
       has_column_privilege('regress_migration_reader', 'orders', 'created_at', 'SELECT')
           AS created_at,
       has_column_privilege('regress_migration_reader', 'lines', 'order_id',
                            'UPDATE WITH GRANT OPTION') AS line_order_id_update,
       has_column_privilege('regress_migration_reader', 'lines', 'id', 'SELECT') AS line_id;
SET ROLE regress_migration_reader;
SELECT count(id) AS orders_read, count(DISTINCT sno_meta(id)) AS metas FROM orders;
SELECT count(order_id) AS lines_read FROM lines;
SELECT count(order_id) AS notes_read_by_public FROM notes;
SELECT count(created_at) FROM orders;
RESET ROLE;

-- After the switch: new rows give the sno key; the old one is still filled and readable, also
-- where the writer may not read orders.
INSERT INTO orders (created_at, total) VALUES ('2026-01-02', 1002);
INSERT INTO lines (order_id, qty) SELECT id, -3 FROM orders WHERE total = 1002;
SELECT id AS order_1002 FROM orders WHERE total = 1002 \gset
SET ROLE regress_migration_writer;
INSERT INTO lines (order_id, qty) VALUES (:'order_1002', -6);
RESET ROLE;
SELECT l.qty, l.order_id_old = o.id_old AS old_reference_copied
FROM lines l JOIN orders o ON o.id = l.order_id WHERE l.qty IN (-3, -6) ORDER BY l.qty;
-- The new foreign keys act as the old ones did (orders 8 and 15 have lines, and notes 1 and 2).
SELECT count(*) AS lines_to_delete FROM lines l WHERE l.order_id_old IN (8, 15);
DELETE FROM orders WHERE id_old IN (8, 15);
SELECT count(*) AS lines_of_deleted FROM lines l WHERE l.order_id_old IN (8, 15);
SELECT body, order_id, order_id_old FROM notes WHERE body IN ('note 1', 'note 2') ORDER BY body;
INSERT INTO lines (order_id, qty) VALUES (sno_from_parts('2020-01-01', 200, 1, 1), 0);
\echo :LAST_ERROR_SQLSTATE
-- Nothing more to do, until the old key is dropped.
SELECT * FROM sno_migration_steps('orders', 200, 'created_at');
SELECT * FROM sno_migration_steps('orders', 200, stage => 'drop_old_key');
SET client_min_messages = warning;
-- An index of several columns on an old key would go with it: the drop refuses.
CREATE UNIQUE INDEX lines_by_order_and_qty ON lines (order_id_old, qty);
SELECT statement FROM sno_migration_steps('orders', 200, stage => 'drop_old_key') \gexec
DROP INDEX lines_by_order_and_qty;
SELECT statement FROM sno_migration_steps('orders', 200, stage => 'drop_old_key') \gexec
SELECT * FROM columns_of('orders');
SELECT * FROM columns_of('lines');
SELECT * FROM definitions_of('lines');
SELECT * FROM definitions_of('notes');
SELECT count(*) AS copy_functions_left FROM pg_proc WHERE proname ~ '^sno_migration_key_[0-9]';
CALL sno_migration_drop_old_key('orders');

-- A uuid key without a time column: IDs in the key's order, at the time of the migration;
-- names that need quoting; the table renamed after the switch.
CREATE SCHEMA "Shop";
CREATE TABLE "Shop"."Geräte" (id uuid PRIMARY KEY, name text);
CREATE TABLE "Shop".readings (device uuid REFERENCES "Shop"."Geräte", value integer);
INSERT INTO "Shop"."Geräte" SELECT md5(g::text)::uuid, 'device ' || g FROM generate_series(1, 300) AS g;
INSERT INTO "Shop".readings SELECT md5((g % 300 + 1)::text)::uuid, g FROM generate_series(1, 900) AS g;
SELECT statement FROM sno_migration_steps('"Shop"."Geräte"', 201) \gexec
SELECT count(DISTINCT id) AS ids, bool_and(sno_meta(id) = 201) AS meta_201,
       bool_and(sno_time(id) > now() - interval '1 hour') AS at_migration_time
FROM "Shop"."Geräte";
SELECT count(*) AS out_of_key_order
FROM (SELECT id_old, lag(id_old) OVER (ORDER BY id) AS previous FROM "Shop"."Geräte") AS d
WHERE previous > id_old;
ALTER TABLE "Shop"."Geräte" RENAME TO "Geräte 2";
INSERT INTO "Shop".readings (device, value) SELECT id, -1 FROM "Shop"."Geräte 2" WHERE name = 'device 1';
SELECT count(*) AS readings, count(*) FILTER (WHERE r.device_old = d.id_old) AS same_device
FROM "Shop".readings r JOIN "Shop"."Geräte 2" d ON d.id = r.device;
SELECT statement FROM sno_migration_steps('"Shop"."Geräte 2"', 201, stage => 'drop_old_key') \gexec
SELECT * FROM columns_of('"Shop".readings');
SELECT * FROM definitions_of('"Shop".readings');

-- Names of 63 bytes, the most PostgreSQL takes (one of them with two-byte characters): the new
-- columns', constraints' and indexes' names are cut to fit, never in the middle of a character.
CREATE TABLE long_parent ("key_key_key_key_key_key_key_key_key_key_key_key_key_key_key_key" bigint PRIMARY KEY);
CREATE TABLE long_child (
    "Schlüssel_der_Bestellung_mit_einem_sehr_langen_Namen_äöü_xx" bigint
        REFERENCES long_parent);
CREATE INDEX ON long_child ("Schlüssel_der_Bestellung_mit_einem_sehr_langen_Namen_äöü_xx");
INSERT INTO long_parent SELECT g FROM generate_series(1, 20) AS g;
INSERT INTO long_child SELECT g % 20 + 1 FROM generate_series(1, 50) AS g;
SELECT statement FROM sno_migration_steps('long_parent', 205) \gexec
SELECT * FROM columns_of('long_parent');
SELECT * FROM columns_of('long_child');
SELECT * FROM definitions_of('long_child');
SELECT statement FROM sno_migration_steps('long_parent', 205, stage => 'drop_old_key') \gexec
SELECT * FROM columns_of('long_child');

-- A time sno cannot hold stops the fill before it claims anything (22008): the meta's cursor
-- has not moved. (A fill stopped after its claim resumes with the same meta and timeline:
-- tests/t/039_migration.pl, which needs a test build to stop it there.)
CREATE TABLE resumed (id bigint PRIMARY KEY, at timestamptz NOT NULL);
INSERT INTO resumed SELECT g, timestamptz '2022-03-01' + g * interval '1 ms' FROM generate_series(1, 300) AS g;
UPDATE resumed SET at = '1999-12-31' WHERE id = 150;
CALL sno_migration_prepare('resumed', 207);
CALL sno_migration_fill('resumed', 207, 'at');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS cursors_of_207 FROM sno_backfill_cursors() WHERE meta = 207;
UPDATE resumed SET at = '2022-03-01' WHERE id = 150;
CALL sno_migration_fill('resumed', 207, 'at');
-- The claim moved the meta's cursor past the rows, once.
SELECT tick_tock, last_time > '2022-03-01 00:00:00.3' AS moved_past_the_rows FROM sno_backfill_cursors()
WHERE meta = 207;
SELECT count(DISTINCT id_sno) AS ids, bool_and(sno_meta(id_sno) = 207) AS meta_207,
       count(DISTINCT sno_tick_tock(id_sno)) AS timelines,
       bool_and(sno_time(id_sno) = date_bin('4 ms', at, timestamptz '2010-01-01')) AS at_their_times
FROM resumed;
SELECT count(*) AS out_of_time_order
FROM (SELECT at, lag(at) OVER (ORDER BY id_sno) AS previous FROM resumed) AS r
WHERE previous > at;
-- Rows in one 4 ms unit share it: numbered 0, 1, 2 in the order of their times, then keys.
SELECT id, sno_sequence(id_sno) AS sequence FROM resumed WHERE id IN (1, 2, 3, 150) ORDER BY id;

-- A copy written by hand, not the parent's: validate's catch-up puts it right.
CREATE TABLE hand (id bigint PRIMARY KEY);
CREATE TABLE hand_child (hand_id bigint REFERENCES hand);
INSERT INTO hand VALUES (1), (2);
INSERT INTO hand_child VALUES (1);
CALL sno_migration_prepare('hand', 208);
CALL sno_migration_fill('hand', 208);
UPDATE hand_child SET hand_id_sno = (SELECT id_sno FROM hand WHERE id = 2);
SELECT statement FROM sno_migration_steps('hand', 208) \gexec
SELECT c.hand_id_old AS old_parent, h.id_old AS parent_now FROM hand_child c JOIN hand h ON h.id = c.hand_id;

-- What the copy triggers' functions, which run as the parent's owner, refuse to be used for
-- (docs/migration.md): a column type changed under them (a domain whose check would run as the
-- parent's owner), a function of their name that someone else made first, grants of EXECUTE by
-- default privileges; and a look-alike trigger that drop_old_key must not take for one of its own.
CREATE TABLE guarded (id bigint PRIMARY KEY);
CREATE TABLE guarded_child (guarded_id bigint REFERENCES guarded);
CREATE TABLE victim (note text, kept text);
INSERT INTO guarded VALUES (1);
ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO regress_migration_writer;
CALL sno_migration_prepare('guarded', 206);
ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM regress_migration_writer;
SELECT has_function_privilege('regress_migration_writer', p.oid, 'EXECUTE') AS writer_may_call,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_call
FROM pg_proc p WHERE p.proname ~ ('^sno_migration_key_' || 'guarded_child'::regclass::oid || '_');
-- A replicated row (session_replication_role = replica, as a subscriber's apply worker runs)
-- may come before its parent: it keeps the publisher's copy. Otherwise no parent, no copy.
SET session_replication_role = replica;
INSERT INTO guarded_child VALUES (2, sno_from_parts('2024-01-01', 206, 2, 7));
RESET session_replication_role;
SELECT guarded_id, guarded_id_sno FROM guarded_child;
-- An update that moves it to another parent not there yet: the copy is not kept (it is the
-- previous parent's), so it is caught up later instead of pointing at the wrong parent.
SET session_replication_role = replica;
UPDATE guarded_child SET guarded_id = 3;
RESET session_replication_role;
SELECT guarded_id, guarded_id_sno FROM guarded_child;
DELETE FROM guarded_child;
CREATE FUNCTION runs_as() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'runs as %', current_user; RETURN true; END $$;
CREATE DOMAIN watched_sno AS sno CHECK (runs_as());
ALTER TABLE guarded_child ALTER COLUMN guarded_id_sno TYPE watched_sno;
INSERT INTO guarded_child VALUES (1);
\echo :LAST_ERROR_SQLSTATE
-- The type back as it was: the trigger works again.
ALTER TABLE guarded_child ALTER COLUMN guarded_id_sno TYPE sno;
INSERT INTO guarded_child VALUES (1);
-- A look-alike: a trigger of the migration's name on another table, its arguments naming this
-- parent and a column of that table.
CREATE FUNCTION sno_migration_key_x() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
DO $$ BEGIN
    EXECUTE format('CREATE TRIGGER sno_migration_key_9_9 BEFORE INSERT ON victim FOR EACH ROW '
                   'EXECUTE FUNCTION sno_migration_key_x(%L, %L, %L, %L, %L)',
                   'guarded'::regclass::oid, 'id', 'id_old', 'note', 'kept');
END $$;
SELECT statement FROM sno_migration_steps('guarded', 206) \gexec
SELECT statement FROM sno_migration_steps('guarded', 206, stage => 'drop_old_key') \gexec
SELECT * FROM columns_of('victim');
SELECT * FROM columns_of('guarded_child');
-- A function of the name a migration would give, made first by someone else: refused.
CREATE TABLE guarded2 (id bigint PRIMARY KEY);
CREATE TABLE guarded2_child (guarded2_id bigint REFERENCES guarded2);
DO $$ BEGIN
    EXECUTE format('CREATE FUNCTION sno_migration_key_%s_1_2() RETURNS trigger LANGUAGE plpgsql '
                   'AS $f$ BEGIN RETURN NEW; END $f$', 'guarded2_child'::regclass::oid);
    EXECUTE format('ALTER FUNCTION sno_migration_key_%s_1_2() OWNER TO regress_migration_writer',
                   'guarded2_child'::regclass::oid);
END $$;
-- (The error names the function, whose name holds an oid.)
DO $$ BEGIN
    CALL sno_migration_prepare('guarded2', 206);
EXCEPTION WHEN duplicate_function THEN
    RAISE WARNING '%: %', SQLSTATE, regexp_replace(SQLERRM, '_[0-9]+_', '_<oid>_');
END $$;

-- Steps out of order say what comes first.
CREATE TABLE early (id integer PRIMARY KEY, at date NOT NULL);
INSERT INTO early VALUES (1, '2020-01-01');
CALL sno_migration_fill('early', 202, 'at');
\echo :LAST_ERROR_SQLSTATE
CALL sno_migration_prepare('early', 202);
CALL sno_migration_validate('early');
CALL sno_migration_switch('early');
CALL sno_migration_drop_old_key('early');
-- A meta whose two timelines both reach past the table's times: a third pass, refused.
SELECT sno_generate_at(204, '2023-01-01') IS NOT NULL AS forward,
       sno_generate_at(204, '2022-01-01') IS NOT NULL AS back;
CALL sno_migration_fill('early', 204, 'at');
\echo :LAST_ERROR_SQLSTATE
-- Meta 200's first timeline reaches past it (the orders' times): the fill takes the other.
CALL sno_migration_fill('early', 200, 'at');
SELECT sno_meta(id_sno) AS meta, sno_tick_tock(id_sno) AS tick_tock FROM early;
SELECT * FROM sno_migration_steps('early', 202, stage => 'later');
\echo :LAST_ERROR_SQLSTATE
CALL sno_migration_prepare('early', 256);

-- What the check refuses, with what to do.
CREATE TABLE parent (id bigint PRIMARY KEY, at timestamptz, label text);
CREATE TABLE child (parent_id bigint REFERENCES parent);
CREATE VIEW parent_ids AS SELECT id, label FROM parent;
CREATE VIEW parent_labels AS SELECT label FROM parent;
CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER audit BEFORE INSERT ON child FOR EACH ROW EXECUTE FUNCTION audit();
SET client_min_messages = error;  -- not the warning about wal_level, worded by each major
CREATE PUBLICATION parents FOR TABLE parent;
SET client_min_messages = warning;
CREATE RULE no_delete AS ON DELETE TO child DO INSTEAD NOTHING;
ALTER TABLE parent ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY own ON parent USING (id > 0);
CREATE POLICY labelled ON parent USING (label IS NOT NULL);
ALTER TABLE parent ADD COLUMN doubled bigint GENERATED ALWAYS AS (id * 2) STORED;
CREATE TABLE self (id bigserial PRIMARY KEY, parent bigint REFERENCES self);
CREATE TABLE pair (a integer, b integer, PRIMARY KEY (a, b));
CREATE TABLE pair_child (a integer, b integer, FOREIGN KEY (a, b) REFERENCES pair);
CREATE TABLE defaulted_child (parent_id bigint DEFAULT 0 REFERENCES parent ON DELETE SET DEFAULT);
CREATE TABLE twice (parent_id bigint REFERENCES parent, FOREIGN KEY (parent_id) REFERENCES parent);
CREATE TABLE later_child (parent_id bigint);
ALTER TABLE later_child ADD FOREIGN KEY (parent_id) REFERENCES parent DEFERRABLE NOT VALID;
ALTER TABLE parent ADD COLUMN id_old integer;
CREATE TABLE by_range (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
SELECT * FROM sno_migration_check('parent', 'label');
CALL sno_migration_prepare('parent', 203);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_migration_check('self');
SELECT * FROM sno_migration_check('pair');
SELECT * FROM sno_migration_check('by_range');
SELECT * FROM sno_migration_check('orders');
SELECT * FROM sno_migration_steps(NULL, 1);
\echo :LAST_ERROR_SQLSTATE
DROP VIEW order_totals;
DROP OWNED BY regress_migration_reader;
DROP ROLE regress_migration_reader;
DROP OWNED BY regress_migration_writer;
DROP ROLE regress_migration_writer;
