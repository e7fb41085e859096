-- Time predicates: sno_time(id) OP t and id::timestamptz OP t are planned as ranges of id
-- (src/pg/sql/time_predicates/), answered by the index on id, with exactly the rows of the plain
-- predicate. sno.rewrite_time_predicates = off evaluates the plain predicate row by row: the
-- property check at the end compares the two on thousands of random windows.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;

-- The bounds, at the edges. A unit is 4 ms; a bound's time is the start of its unit.
SELECT t, sno_min_at_or_after(t) AS min_at_or_after, sno_min_after(t) AS min_after,
       sno_max_at_or_before(t) AS max_at_or_before, sno_max_before(t) AS max_before
FROM unnest(ARRAY[
    '-infinity',
    '4713-11-24 00:00:00+00 BC',
    '1970-01-01 00:00:00+00',
    '2009-12-31 23:59:59.999999+00',
    '2010-01-01 00:00:00+00',
    '2010-01-01 00:00:00.000001+00',
    '2010-01-01 00:00:00.003999+00',
    '2010-01-01 00:00:00.004+00',
    '2026-03-01 12:00:00.002+00',
    '2079-09-07 15:47:35.547999+00',
    '2079-09-07 15:47:35.548+00',
    '2079-09-07 15:47:35.548001+00',
    '2079-09-07 15:47:35.552+00',
    '2100-01-01 00:00:00+00',
    '294276-12-31 23:59:59.999999+00',
    'infinity']::timestamptz[]) AS t;
-- Each bound is the first or last ID whose time is on its side of t: the time of the bound
-- passes the comparison, and the time of the ID just past it does not.
SELECT sno_time(sno_min_at_or_after('2026-03-01 12:00:00.002')) AS min_at_or_after_time,
       sno_time(sno_max_before('2026-03-01 12:00:00.002')) AS max_before_time,
       sno_max_before('2026-03-01 12:00:00.002') < sno_min_at_or_after('2026-03-01 12:00:00.002')
           AS adjacent;
SELECT sno_min_at_or_after(NULL), sno_max_before(NULL);

-- One ID every 3 s for 4 days, each with a tick-tock 1 twin in the same unit, and IDs of the
-- extreme metas and partitions; the first and last times an ID can hold.
CREATE TABLE events (id sno PRIMARY KEY, n integer);
INSERT INTO events
SELECT sno_from_parts('2026-03-01 00:00:00+00'::timestamptz + i * interval '3 s', 1, 7, 0, tick),
       i * 2 + tick
FROM generate_series(0, 115199) AS i, generate_series(0, 1) AS tick;
INSERT INTO events VALUES
    (sno_from_parts('2026-03-02 00:00:00+00', 0, 0, 0), -1),
    (sno_from_parts('2026-03-02 00:00:00.003+00', 255, 65535, 65535, 1), -2),
    (sno_from_parts('2010-01-01 00:00:00+00', 0, 0, 0), -3),
    (sno_from_parts('2079-09-07 15:47:35.548+00', 255, 65535, 65535, 1), -4);
-- Every row in the statistics (not a sample of 30,000): the plans below must not vary by run.
ALTER TABLE events ALTER COLUMN id SET STATISTICS 10000;
VACUUM ANALYZE events;

-- Each form is an index range scan; the bounds of constants are folded when planning.
EXPLAIN (COSTS OFF)
SELECT n FROM events WHERE sno_time(id) >= '2026-03-02' AND sno_time(id) < '2026-03-02 01:00';
SELECT count(*) FROM events WHERE sno_time(id) >= '2026-03-02' AND sno_time(id) < '2026-03-02 01:00';
EXPLAIN (COSTS OFF)
SELECT n FROM events WHERE id::timestamptz > '2026-03-02' AND id::timestamptz <= '2026-03-02 01:00';
SELECT count(*) FROM events
WHERE id::timestamptz > '2026-03-02' AND id::timestamptz <= '2026-03-02 01:00';
EXPLAIN (COSTS OFF)
SELECT n FROM events WHERE sno_time(id) BETWEEN '2026-03-02' AND '2026-03-02 00:00:06';
SELECT n FROM events WHERE sno_time(id) BETWEEN '2026-03-02' AND '2026-03-02 00:00:06' ORDER BY id;
-- Either operand order.
EXPLAIN (COSTS OFF)
SELECT n FROM events WHERE '2026-03-02 00:00:06' <= id::timestamptz
                       AND '2026-03-02 00:00:09' > sno_time(id);
SELECT n FROM events WHERE '2026-03-02 00:00:06' <= id::timestamptz
                       AND '2026-03-02 00:00:09' > sno_time(id) ORDER BY id;
-- = is the unit's range: the start of a unit matches its IDs (both timelines, every meta and
-- partition), any other time none.
EXPLAIN (COSTS OFF) SELECT n FROM events WHERE sno_time(id) = '2026-03-02 00:00:00';
SELECT n FROM events WHERE sno_time(id) = '2026-03-02 00:00:00' ORDER BY id;
SELECT n FROM events WHERE id::timestamptz = '2026-03-02 00:00:00.001' ORDER BY id;
-- One 4 ms unit.
SELECT n FROM events
WHERE sno_time(id) >= '2026-03-02 00:00:03' AND sno_time(id) < '2026-03-02 00:00:03.004'
ORDER BY id;
-- A stable expression: the bound is computed when the scan starts.
EXPLAIN (COSTS OFF) SELECT n FROM events WHERE sno_time(id) >= now() - interval '1 hour';
SELECT count(*) FROM events WHERE sno_time(id) >= now() - interval '1 hour';
-- A parameter, in a generic plan.
SET plan_cache_mode = force_generic_plan;
PREPARE window_of(timestamptz, timestamptz) AS
    SELECT count(*) FROM events WHERE sno_time(id) >= $1 AND sno_time(id) < $2;
EXPLAIN (COSTS OFF) EXECUTE window_of('2026-03-03', '2026-03-03 00:01');
EXECUTE window_of('2026-03-03', '2026-03-03 00:01');
DEALLOCATE window_of;
RESET plan_cache_mode;
-- A join: the other table's time is the bound of an index scan per row.
CREATE TEMP TABLE marks (at timestamptz);
INSERT INTO marks VALUES ('2026-03-02 00:00:00'), ('2026-03-03 12:00:01');
ANALYZE marks;
EXPLAIN (COSTS OFF)
SELECT m.at, e.n FROM marks m JOIN events e
    ON sno_time(e.id) >= m.at AND sno_time(e.id) < m.at + interval '4 ms';
SELECT m.at, e.n FROM marks m JOIN events e
    ON sno_time(e.id) >= m.at AND sno_time(e.id) < m.at + interval '4 ms'
ORDER BY e.id;
-- OR of windows: a bitmap OR of two ranges.
EXPLAIN (COSTS OFF)
SELECT n FROM events WHERE sno_time(id) < '2026-03-01 00:00:03' OR sno_time(id) > '2079-01-01';
SELECT n FROM events WHERE sno_time(id) < '2026-03-01 00:00:03' OR sno_time(id) > '2079-01-01'
ORDER BY id;
-- In a CTE, too (time_rewrite.sql has the other shapes: views, joins, EXISTS).
EXPLAIN (COSTS OFF)
WITH recent AS (SELECT id FROM events WHERE sno_time(id) > '2026-03-04 23:59:54')
SELECT count(*) FROM recent;

-- Times outside what an ID can hold: the right rows, no error.
SELECT count(*) FROM events WHERE sno_time(id) >= '-infinity';
SELECT count(*) FROM events WHERE sno_time(id) < '-infinity';
SELECT count(*) FROM events WHERE sno_time(id) <= 'infinity';
SELECT count(*) FROM events WHERE sno_time(id) > 'infinity';
SELECT n FROM events WHERE sno_time(id) < '2010-01-01 00:00:00.004';
SELECT n FROM events WHERE sno_time(id) > '2079-09-07 15:47:35.547999';
SELECT count(*) FROM events WHERE sno_time(id) >= '2100-01-01';
SELECT count(*) FROM events WHERE id::timestamptz <= '1970-01-01';
SELECT count(*) FROM events WHERE sno_time(id) = 'infinity';
EXPLAIN (COSTS OFF) SELECT n FROM events WHERE sno_time(id) >= '2100-01-01';
-- A NULL time: no rows, as for the plain predicate.
SELECT count(*) FROM events WHERE sno_time(id) >= NULL::timestamptz;

-- NOT (sno_time(id) < t) is sno_time(id) >= t, rows and NULLs alike: PostgreSQL rewrites it so
-- itself, and then so does sno. Left as they are: a comparison in a select list (where NULL and
-- false differ), with a date (another operator), or with a volatile operand.
EXPLAIN (COSTS OFF) SELECT n FROM events WHERE NOT (sno_time(id) < '2026-03-04');
EXPLAIN (COSTS OFF) SELECT sno_time(id) >= '2026-03-04' FROM events LIMIT 1;
EXPLAIN (COSTS OFF) SELECT n FROM events WHERE sno_time(id) >= '2026-03-04'::date;
EXPLAIN (COSTS OFF) SELECT n FROM events WHERE sno_time(id) >= clock_timestamp();
-- Switched off, the plain predicate is a filter.
SET sno.rewrite_time_predicates = off;
EXPLAIN (COSTS OFF)
SELECT n FROM events WHERE sno_time(id) >= '2026-03-02' AND sno_time(id) < '2026-03-02 01:00';
RESET sno.rewrite_time_predicates;

-- The estimate comes from id's histogram: an hour of a year of rows (one every 10 minutes, six
-- in the hour) is estimated at a few rows, not at PostgreSQL's defaults for a predicate it knows
-- nothing of (a third of the table, or 0.5% for a range: 263 rows). The statistics target lets
-- ANALYZE read every row, so that the histogram is the same in every run: from a sample, a
-- bound can fall inside the hour, and sno has no interpolation within a bin, so the estimate is
-- then a whole bin.
CREATE TABLE year_of_rows (id sno PRIMARY KEY);
ALTER TABLE year_of_rows ALTER COLUMN id SET STATISTICS 10000;
INSERT INTO year_of_rows
SELECT sno_from_parts('2025-01-01 00:00:00+00'::timestamptz + i * interval '10 minutes', 1, 1, 0)
FROM generate_series(0, 52559) AS i;
ANALYZE year_of_rows;
CREATE FUNCTION pg_temp.estimated_rows(query text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric;
END $$;
SELECT pg_temp.estimated_rows($$SELECT * FROM year_of_rows
    WHERE sno_time(id) >= '2025-07-01' AND sno_time(id) < '2025-07-01 01:00'$$) < 60 AS hour_in_july,
       pg_temp.estimated_rows($$SELECT * FROM year_of_rows
    WHERE id::timestamptz >= '2025-12-31 23:00'$$) < 60 AS last_hour;
SET sno.rewrite_time_predicates = off;
SELECT pg_temp.estimated_rows($$SELECT * FROM year_of_rows
    WHERE id::timestamptz >= '2025-12-31 23:00'$$) AS last_hour_estimated_without;
RESET sno.rewrite_time_predicates;
DROP TABLE year_of_rows;

-- BRIN: a bitmap scan of the index, the same rows as a scan of the table.
CREATE TABLE log AS SELECT id FROM events ORDER BY id;
CREATE INDEX log_brin ON log USING brin (id) WITH (pages_per_range = 8);
ANALYZE log;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM log
WHERE sno_time(id) >= '2026-03-02 00:02:00' AND sno_time(id) < '2026-03-02 00:04:00';
SELECT count(*) FROM log
WHERE sno_time(id) >= '2026-03-02 00:02:00' AND sno_time(id) < '2026-03-02 00:04:00';
RESET enable_seqscan;
SET sno.rewrite_time_predicates = off;
SELECT count(*) FROM log
WHERE sno_time(id) >= '2026-03-02 00:02:00' AND sno_time(id) < '2026-03-02 00:04:00';
RESET sno.rewrite_time_predicates;
DROP TABLE log;

-- Partitions by range of id prune on the natural predicates: when planning for constants, when
-- the executor starts for now() (Subplans Removed).
CREATE TABLE days (id sno PRIMARY KEY, n integer) PARTITION BY RANGE (id);
CREATE TABLE days_1 PARTITION OF days
    FOR VALUES FROM (sno_min('2026-03-01')) TO (sno_min('2026-03-02'));
CREATE TABLE days_2 PARTITION OF days
    FOR VALUES FROM (sno_min('2026-03-02')) TO (sno_min('2026-03-03'));
CREATE TABLE days_3 PARTITION OF days
    FOR VALUES FROM (sno_min('2026-03-03')) TO (sno_min('2026-03-04'));
INSERT INTO days SELECT id, n FROM events
WHERE id >= sno_min('2026-03-01') AND id < sno_min('2026-03-04');
ANALYZE days;
EXPLAIN (COSTS OFF) SELECT count(*) FROM days WHERE sno_time(id) >= '2026-03-02 12:00';
EXPLAIN (COSTS OFF)
SELECT n FROM days WHERE id::timestamptz >= '2026-03-02 12:00' AND id::timestamptz < '2026-03-02 13:00';
EXPLAIN (COSTS OFF) SELECT n FROM days WHERE sno_time(id) = '2026-03-03 00:00:00';
-- now() is after every partition here: all are removed when the executor starts.
EXPLAIN (COSTS OFF) SELECT n FROM days WHERE sno_time(id) >= now() - interval '1 hour';
DROP TABLE days;

-- The property: for thousands of random windows, each form with random edges (unit starts, a
-- microsecond either side, the times of tick-tock 1 and extreme IDs, infinities, times no ID
-- can hold), the index answers exactly the rows a scan of the table finds for the plain
-- predicate (sno.rewrite_time_predicates off), and so do the pruned partitions of the same
-- rows. Any difference is listed; none are expected.
-- The sample: an hour of events, with their tick-tock twins and extreme IDs.
CREATE TABLE sample (id sno PRIMARY KEY);
INSERT INTO sample SELECT id FROM events
WHERE id >= sno_min('2026-03-02') AND id < sno_min('2026-03-02 01:00') OR n < 0;
VACUUM ANALYZE sample;
CREATE FUNCTION pg_temp.random_edge() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
    SELECT CASE floor(random() * 12)::integer
        WHEN 0 THEN '-infinity'::timestamptz
        WHEN 1 THEN 'infinity'::timestamptz
        WHEN 2 THEN (ARRAY['1970-01-01', '2009-12-31 23:59:59.999999', '2010-01-01',
                           '2010-01-01 00:00:00.004', '2079-09-07 15:47:35.548',
                           '2079-09-07 15:47:35.547999', '2079-09-07 15:47:35.548001',
                           '2100-01-01', '4713-11-24 00:00:00 BC',
                           '294276-12-31 23:59:59.999999']::timestamptz[])[1 + floor(random() * 10)]
        WHEN 3 THEN '2026-03-02 00:00:00'::timestamptz
                    + (ARRAY[-1, 0, 1, 2999, 3000, 3001, 3999, 4000, 4001]::integer[])[1 + floor(random() * 9)]
                      * interval '1 microsecond'
        ELSE '2026-03-02 00:00:00'::timestamptz
             + floor(random() * 1200 * 3) * interval '1 s'
             + (ARRAY[-4001, -4000, -3999, -1, 0, 1, 3999, 4000, 4001, 2000]::integer[])[1 + floor(random() * 10)]
               * interval '1 microsecond'
    END
$$;
CREATE FUNCTION pg_temp.random_predicate() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT format(
        (ARRAY['sno_time(id) %s %L', 'id::timestamptz %s %L', '%3$L %4$s sno_time(id)',
               'sno_time(id) %1$s %2$L AND sno_time(id) %5$s %6$L',
               'sno_time(id) BETWEEN %2$L AND %6$L',
               'id::timestamptz %1$s %2$L OR sno_time(id) %5$s %6$L'])[1 + floor(random() * 6)],
        (ARRAY['<', '<=', '=', '>=', '>'])[1 + floor(random() * 5)], pg_temp.random_edge(),
        pg_temp.random_edge(), (ARRAY['<', '<=', '=', '>=', '>'])[1 + floor(random() * 5)],
        (ARRAY['<', '<=', '=', '>=', '>'])[1 + floor(random() * 5)], pg_temp.random_edge())
$$;
CREATE FUNCTION pg_temp.rows_of(source text, predicate text, rewrite boolean) RETURNS sno[]
LANGUAGE plpgsql AS $$
DECLARE
    result sno[];
BEGIN
    PERFORM set_config('sno.rewrite_time_predicates', rewrite::text, true);
    PERFORM set_config('enable_seqscan', (NOT rewrite)::text, true);
    EXECUTE format('SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM %s WHERE %s',
                   source, predicate)
        INTO result;
    RETURN result;
END $$;
-- The same rows partitioned by ten minutes of time (sno_maintain_partitions), the extreme IDs
-- in a default partition: pruning on the rewritten predicate keeps every partition that holds
-- a row of the window.
CREATE TABLE sample_parts (id sno PRIMARY KEY) PARTITION BY RANGE (id);
SELECT count(*) AS partitions
FROM sno_maintain_partitions('sample_parts', '10 minutes', ahead => 5, at => '2026-03-02');
CREATE TABLE sample_parts_rest PARTITION OF sample_parts DEFAULT;
INSERT INTO sample_parts SELECT id FROM sample;
ANALYZE sample_parts;
EXPLAIN (COSTS OFF)
SELECT id FROM sample_parts
WHERE sno_time(id) >= '2026-03-02 00:15' AND sno_time(id) < '2026-03-02 00:25';
SELECT setseed(0.25);
CREATE TEMP TABLE windows AS
SELECT w, pg_temp.random_predicate() AS predicate FROM generate_series(1, 2000) AS w;
CREATE TEMP TABLE answers AS
SELECT w, predicate, pg_temp.rows_of('sample', predicate, true) AS indexed,
       pg_temp.rows_of('sample_parts', predicate, true) AS pruned,
       pg_temp.rows_of('sample', predicate, false) AS scanned
FROM windows;
SELECT w, predicate, cardinality(indexed) AS indexed, cardinality(pruned) AS pruned,
       cardinality(scanned) AS scanned
FROM answers WHERE indexed IS DISTINCT FROM scanned OR pruned IS DISTINCT FROM scanned
ORDER BY w;
-- The check has teeth: most windows are not empty, many are neither empty nor everything, and
-- several hold just one unit's IDs.
SELECT count(*) AS windows,
       count(*) FILTER (WHERE cardinality(scanned) > 0) > 1000 AS most_not_empty,
       count(*) FILTER (WHERE cardinality(scanned) BETWEEN 1 AND 2403) > 300 AS many_partial,
       count(*) FILTER (WHERE cardinality(scanned) BETWEEN 1 AND 4) > 5 AS several_one_unit
FROM answers;
DROP TABLE sample, sample_parts, events;
