-- The generator's SQL surface, in the fresh cluster tests/regress.sh starts (sno.partition = 4242,
-- sno.backfill_partition = 4243). sno_generate's IDs carry the current time and a sequence
-- that vary, so those are checked as properties; the rest of each ID is exact. Backfill IDs
-- are exact: their times are the caller's, and each meta's cursor starts at sequence 0.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- The caller's meta (0 by default), this server's partition, the first timeline.
SELECT sno_meta(id), sno_partition(id), sno_tick_tock(id)
FROM (SELECT sno_generate(7) AS id) AS g;
SELECT sno_meta(sno_generate()) AS default_meta;
-- The ID's time is now, to its 4 ms unit (give or take a second for a slow machine).
SELECT abs(extract(epoch FROM sno_time(sno_generate()) - clock_timestamp())) < 1 AS time_is_now;
-- One session's IDs rise, and none repeats.
SELECT bool_and(id < next_id) AS rising, count(DISTINCT id) AS distinct_ids
FROM (SELECT id, lead(id) OVER (ORDER BY n) AS next_id
      FROM (SELECT n, sno_generate(1) AS id FROM generate_series(1, 100000) AS n) AS s) AS t;
-- NULL meta, NULL ID (the function is STRICT).
SELECT sno_generate(NULL) IS NULL AS null_meta;

-- A meta outside a byte: 22003.
SELECT sno_generate(256);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_generate(-1);
SELECT sno_generate_at(300, '2024-05-01 00:00:00+00');

-- Backfill: the ID carries the given time (its unit), the meta, the backfill partition, and
-- the next sequence of that meta's cursor.
SELECT * FROM sno_decode(sno_generate_at(42, '2024-05-01 12:00:00.003+00'));
SELECT * FROM sno_decode(sno_generate_at(42, '2024-05-01 12:00:00.003+00'));
-- A later time starts again at sequence 0.
SELECT * FROM sno_decode(sno_generate_at(42, '2024-05-01 12:30:00+00'));
-- 1,000 IDs for one time: all different.
SELECT count(DISTINCT sno_generate_at(43, '2024-05-01 00:00:00+00')) AS distinct_ids
FROM generate_series(1, 1000);
-- A time the format cannot hold: 22008, as sno_from_parts.
SELECT sno_generate_at(42, '2009-12-31 23:59:59+00');
\echo :LAST_ERROR_SQLSTATE

-- Going back in time switches meta 42 to its other timeline (tick-tock 1), a second pass
-- over the same times ...
SELECT * FROM sno_decode(sno_generate_at(42, '2024-05-01 12:00:00+00'));
SELECT * FROM sno_decode(sno_generate_at(42, '2024-05-01 12:15:00+00'));
-- ... which the cursors show, with how far the first timeline may have reached: the state
-- file recorded it an hour of data time ahead of its first ID (12:00), past its last (12:30).
SELECT * FROM sno_backfill_cursors() ORDER BY meta;
-- A third pass over those times could repeat IDs of the first: 55000, with what to do instead.
SELECT sno_generate_at(42, '2024-05-01 12:00:00+00');
\echo :LAST_ERROR_SQLSTATE
-- Rows already in a table, in an order that is not their time's (issue 35): a plain UPDATE
-- makes the IDs in the table's order and fails; the form the hint gives makes them in the
-- time's order (PostgreSQL computes a volatile output column after the ORDER BY), one per row.
CREATE TABLE legacy_rows (id sno, created timestamptz NOT NULL);
INSERT INTO legacy_rows (created)
SELECT timestamptz '2023-03-01' + (n * 7919 % 1000) * interval '1 minute'
FROM generate_series(0, 999) n;
UPDATE legacy_rows SET id = sno_generate_at(46, created);
\echo :LAST_ERROR_SQLSTATE
-- The failed UPDATE kept none of its IDs, so (as the hint says) retiring the cursor is safe, and
-- the sorted form then works with the same meta.
SELECT sno_retire_backfill_cursor(46) AS retired;
UPDATE legacy_rows AS t SET id = b.id
FROM (SELECT ctid AS row, sno_generate_at(46, created) AS id FROM legacy_rows ORDER BY created) AS b
WHERE t.ctid = b.row;
SELECT count(*) AS rows, count(DISTINCT id) AS ids, bool_and(sno_time(id) = created) AS at_their_time,
       bool_and(sno_meta(id) = 46) AS meta_46
FROM legacy_rows;
DROP TABLE legacy_rows;
-- Every backfill sequence of a unit is used (65,536 in each timeline): 54000.
SELECT count(sno_generate_at(44, '2024-05-01 00:00:00+00')) FROM generate_series(1, 131072);
SELECT sno_generate_at(44, '2024-05-01 00:00:00+00');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_backfill_cursors() ORDER BY meta;

-- The settings: server-wide, changed in postgresql.conf and a reload (the partition's source and
-- offset: a restart), never in a session.
-- (A test build also has sno.test_clock_offset_ms and sno.test_state_write_delay_ms; a release
-- build does not.)
SELECT name, setting, context, short_desc
FROM pg_settings
WHERE name LIKE 'sno.%' AND name NOT LIKE 'sno.test\_%'
ORDER BY name;
SET sno.partition = 1;
\echo :LAST_ERROR_SQLSTATE
SET sno.sequence_min = 5;
SET sno.sequence_max = 9;
SET sno.backfill_partition = 9;
-- Where the partition comes from is decided at start-up.
SET sno.partition_source = 'citus';
SET sno.partition_offset = 1;
SELECT set_config('sno.partition', '1', false);
SHOW sno.partition;

-- sno_generator_stats(): its columns, and the values they hold now.
SELECT a.name, a.type::regtype
FROM pg_proc p, unnest(p.proargnames, p.proallargtypes) WITH ORDINALITY AS a(name, type, n)
WHERE p.oid = 'sno_generator_stats'::regproc
ORDER BY a.n;
SELECT partition, sequence_min, sequence_max, tick_tock,
       abs(extract(epoch FROM last_time - clock_timestamp())) < 60 AS last_time_is_recent,
       generated >= 100000 AS generated_counted,
       backfilled >= 132072 AS backfilled_counted,
       overflow_stalls, clock_regressions, regression_waits,
       persisted_through >= last_time AS persisted_ahead,
       state_file_failures, waiting_until, generating
FROM sno_generator_stats();
-- sno_backfill_cursors(): its columns.
SELECT a.name, a.type::regtype
FROM pg_proc p, unnest(p.proargnames, p.proallargtypes) WITH ORDINALITY AS a(name, type, n)
WHERE p.oid = 'sno_backfill_cursors'::regproc
ORDER BY a.n;
