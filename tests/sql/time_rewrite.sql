-- The rewrite of time predicates (src/pg/sql/time_predicates/) is noticed only as speed: no
-- valid query fails or changes its rows because sno is loaded, no plan is worse than with
-- sno.rewrite_time_predicates off, and the queries people write first use the index on id.
-- Each case compares the rewrite on with the rewrite off: the same rows always; the same plan
-- where the rewrite has nothing to win; the index (or pruning) where it has.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;

-- The plan of a query (costs off), and its rows as one text (sorted: rows that tie on an ORDER
-- BY may come in any order), with the rewrite on or off.
CREATE FUNCTION pg_temp.plan_of(query text, rewrite boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text := '';
BEGIN
    PERFORM set_config('sno.rewrite_time_predicates', rewrite::text, true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END $$;
CREATE FUNCTION pg_temp.rows_of(query text, rewrite boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    PERFORM set_config('sno.rewrite_time_predicates', rewrite::text, true);
    EXECUTE format('SELECT coalesce(string_agg(r::text, '' | '' ORDER BY r::text), ''(none)'') FROM (%s) r', query)
        INTO result;
    RETURN result;
END $$;
-- A query's plan with the rewrite on, and whether its rows and its plan are those of off.
CREATE FUNCTION pg_temp.compare(query text, OUT plan text, OUT same_rows boolean,
                                OUT same_plan boolean) LANGUAGE sql AS $$
    SELECT pg_temp.plan_of(query, true),
           pg_temp.rows_of(query, true) = pg_temp.rows_of(query, false),
           pg_temp.plan_of(query, true) = pg_temp.plan_of(query, false)
$$;

-- Two days of IDs, one every 10 s, each with its tick-tock twin in the same 4 ms unit.
CREATE TABLE a (id sno PRIMARY KEY, n integer);
INSERT INTO a
SELECT sno_from_parts('2026-03-01 00:00:00+00'::timestamptz + i * interval '10 s', 1, 7, 0, tick),
       i * 2 + tick
FROM generate_series(0, 17279) AS i, generate_series(0, 1) AS tick;
CREATE TABLE b (id sno, n integer);
INSERT INTO b SELECT id, n FROM a WHERE n % 7 = 0;
CREATE TABLE c (ts timestamptz);
INSERT INTO c SELECT sno_time(id) FROM a WHERE n % 100 = 0;
-- Statistics from every row, so that the plans below do not change with ANALYZE's sample.
SET default_statistics_target = 200;
VACUUM ANALYZE a, b, c;

-- FULL JOIN on a time equality: PostgreSQL can join it only by hash or merge, so its
-- conditions stay as written (with the rewrite of 0.2.0 both raised "FULL JOIN is only
-- supported with merge-joinable or hash-joinable join conditions").
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM a FULL JOIN b ON sno_time(a.id) = sno_time(b.id)$$);
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM c FULL JOIN a ON c.ts = a.id::timestamptz$$);
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM c FULL JOIN a ON c.ts = a.id::timestamptz
                                     AND sno_time(a.id) >= '2026-03-02'$$);

-- An equality join keeps its hash join (a range could only be a nested loop), and EXISTS and
-- NOT EXISTS their hash semi and anti joins.
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM c JOIN (SELECT id FROM b OFFSET 0) d ON c.ts = sno_time(d.id)$$);
SELECT same_rows, same_plan, plan ~ 'Hash (Right )?Semi Join' AS hash_semi_join
FROM pg_temp.compare($$
    SELECT count(*) FROM c WHERE EXISTS (SELECT FROM b WHERE sno_time(b.id) = c.ts)$$);
SELECT same_rows, same_plan, plan ~ 'Hash (Right )?Anti Join' AS hash_anti_join
FROM pg_temp.compare($$
    SELECT count(*) FROM c WHERE NOT EXISTS (SELECT FROM b WHERE sno_time(b.id) = c.ts)$$);
-- An inequality join has no hash join to lose: the other table's time bounds an index scan.
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM c JOIN a ON sno_time(a.id) >= c.ts AND sno_time(a.id) < c.ts + interval '4 ms'$$);

-- An operand that is a subquery is evaluated once, as written: every run of a sampled time
-- finds one unit's IDs (two) or none, never several units.
CREATE FUNCTION pg_temp.units_found(runs integer) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE
    found bigint;
BEGIN
    PERFORM setseed(0.5);
    FOR run IN 1..runs LOOP
        SELECT count(DISTINCT sno_time(id)) INTO found FROM a
        WHERE sno_time(a.id) = (SELECT ts FROM c TABLESAMPLE BERNOULLI (50) LIMIT 1);
        RETURN NEXT found;
    END LOOP;
END $$;
SELECT max(units) AS most_units_found FROM pg_temp.units_found(40) AS units;
-- A subquery run per row (correlated) would be run twice by a range: left as written.
SELECT same_rows, same_plan FROM pg_temp.compare($$
    SELECT count(*) FROM c
    WHERE EXISTS (SELECT FROM a WHERE sno_time(a.id) = (SELECT max(c2.ts) FROM c c2 WHERE c2.ts <= c.ts)
                                  AND a.n < 10)$$);

-- A table partitioned by an expression of sno_time keeps its pruning; one with an index on
-- sno_time(id), or a partial index whose predicate calls it, keeps that index.
CREATE TABLE by_time (id sno, n integer) PARTITION BY RANGE (sno_time(id));
CREATE TABLE by_time_1 PARTITION OF by_time FOR VALUES FROM ('2026-03-01') TO ('2026-03-02');
CREATE TABLE by_time_2 PARTITION OF by_time FOR VALUES FROM ('2026-03-02') TO ('2026-03-03');
INSERT INTO by_time SELECT * FROM a;
ANALYZE by_time;
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM by_time WHERE sno_time(id) >= '2026-03-02 12:00'$$);
CREATE TABLE indexed_time (id sno, n integer);
INSERT INTO indexed_time SELECT * FROM a;
CREATE INDEX ON indexed_time (sno_time(id));
ANALYZE indexed_time;
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM indexed_time WHERE sno_time(id) >= '2026-03-02 12:00'$$);
CREATE TABLE partial_index (id sno, n integer);
INSERT INTO partial_index SELECT * FROM a;
CREATE INDEX ON partial_index (n) WHERE sno_time(id) >= '2026-03-02';
ANALYZE partial_index;
SELECT * FROM pg_temp.compare($$
    SELECT count(*) FROM partial_index WHERE sno_time(id) >= '2026-03-02 12:00' AND n = 40000$$);
DROP TABLE by_time, indexed_time, partial_index;

-- A role that may not call the bound functions still runs the natural predicate: the rewrite
-- adds no call it lacks the right to (a constant's bound is computed when planning).
CREATE ROLE time_reader;
GRANT SELECT ON a TO time_reader;
REVOKE EXECUTE ON FUNCTION sno_min_at_or_after(timestamptz), sno_max_before(timestamptz)
    FROM PUBLIC;
SET ROLE time_reader;
SELECT count(*) FROM a WHERE sno_time(id) >= now() - interval '1 hour';
SELECT count(*) FROM a WHERE sno_time(id) >= '2026-03-02 23:00' AND sno_time(id) < '2026-03-03';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM a WHERE sno_time(id) >= '2026-03-02 23:00' AND sno_time(id) < '2026-03-03';
EXPLAIN (COSTS OFF) SELECT count(*) FROM a WHERE sno_time(id) >= now() - interval '1 hour';
RESET ROLE;
GRANT EXECUTE ON FUNCTION sno_min_at_or_after(timestamptz), sno_max_before(timestamptz)
    TO PUBLIC;
EXPLAIN (COSTS OFF) SELECT count(*) FROM a WHERE sno_time(id) >= now() - interval '1 hour';

-- A foreign table: its conditions go to its server as written (a postgres_fdw server may have
-- no bound functions, or another version of sno), never as calls of sno's bound functions.
-- (file_fdw stands in for postgres_fdw, whose library the relocatable builds of 16 and later
-- cannot load beside Debian 12's libpq.)
CREATE EXTENSION file_fdw;
CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
CREATE FOREIGN TABLE remote_a (id sno, n integer) SERVER files
    OPTIONS (program 'printf "9fkghrpi22222222,1\n"', format 'csv');
SET plan_cache_mode = force_generic_plan;
PREPARE remote_window(timestamptz) AS
    SELECT count(*) FROM remote_a WHERE sno_time(id) >= $1 AND sno_time(id) < $1 + interval '1 minute';
EXPLAIN (COSTS OFF) EXECUTE remote_window('2026-03-02 23:59:00');
EXECUTE remote_window('2026-03-02 23:59:00');
DEALLOCATE remote_window;
RESET plan_cache_mode;
-- A partitioned table with a foreign partition: a bound that is a call (of now() here) is not
-- made, as it could reach the foreign partition's server; a constant's bound is a constant.
CREATE TABLE mixed (id sno, n integer) PARTITION BY RANGE (id);
CREATE TABLE mixed_local PARTITION OF mixed FOR VALUES FROM (MINVALUE) TO (sno_min('2026-03-02'));
CREATE FOREIGN TABLE mixed_remote PARTITION OF mixed FOR VALUES FROM (sno_min('2026-03-02')) TO (MAXVALUE)
    SERVER files OPTIONS (program 'printf "9fkghrpi22222222,1\n"', format 'csv');
EXPLAIN (COSTS OFF) SELECT count(*) FROM mixed WHERE sno_time(id) >= now() - interval '1 hour';
EXPLAIN (COSTS OFF) SELECT count(*) FROM mixed WHERE sno_time(id) >= '2026-03-02 12:00';
DROP TABLE mixed;
DROP EXTENSION file_fdw CASCADE;

-- The natural queries use the index, with the rows of the plain predicate.
-- A view, and a CTE, that name the time: rewritten once PostgreSQL has pulled them up.
CREATE VIEW a_times AS SELECT id, sno_time(id) AS created_at, n FROM a;
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a_times WHERE created_at >= '2026-03-02 23:59:30'$$);
SELECT plan, same_rows FROM pg_temp.compare($$
    WITH t AS (SELECT id::timestamptz AS at, n FROM a)
    SELECT n FROM t WHERE at BETWEEN '2026-03-02 12:00' AND '2026-03-02 12:00:20'$$);
-- IN and = ANY: one range per time, a bitmap OR.
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE sno_time(id) IN ('2026-03-02 00:00:10', '2026-03-02 00:00:30', NULL)$$);
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a
    WHERE sno_time(id) = ANY ('{2026-03-01 00:00:10, 2026-03-01 00:00:11}'::timestamptz[])$$);
-- Expressions of the time that are ranges of it: the day of ::date and date_trunc('day') in the
-- session's time zone, the age against now() or another time, range containment.
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE sno_time(id)::date = '2026-03-02' AND n % 1000 = 0$$);
SELECT same_rows FROM pg_temp.compare($$SELECT n FROM a WHERE sno_time(id)::date < '2026-03-02'$$);
SELECT same_rows FROM pg_temp.compare($$SELECT n FROM a WHERE sno_time(id)::date <= '2026-03-01'$$);
SELECT same_rows FROM pg_temp.compare($$SELECT n FROM a WHERE '2026-03-01' < sno_time(id)::date$$);
SELECT same_rows FROM pg_temp.compare($$SELECT n FROM a WHERE sno_time(id)::date >= '2026-03-02'$$);
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT count(*) FROM a WHERE date_trunc('day', sno_time(id)) = '2026-03-02'$$);
SELECT same_rows FROM pg_temp.compare($$
    SELECT count(*) FROM a WHERE date_trunc('DAY', sno_time(id)) = '2026-03-02 01:00'$$);
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE '2026-03-03'::timestamptz - sno_time(id) < interval '1 minute'$$);
SELECT same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE '2026-03-03'::timestamptz - sno_time(id) <= interval '1 day 1 hour'
                      AND '2026-03-03'::timestamptz - sno_time(id) > interval '1 day'$$);
SELECT same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE interval '1 mon' >= '2026-03-31'::timestamptz - sno_time(id)$$);
SELECT plan FROM pg_temp.compare($$
    SELECT n FROM a WHERE now() - sno_time(id) < interval '1 hour'$$);
SELECT plan FROM pg_temp.compare($$
    SELECT n FROM a WHERE CURRENT_TIMESTAMP - sno_time(id) <= interval '1 hour'$$);
-- Against a parameter (which could be infinite, where x - t raises before 17): as written.
SELECT same_plan FROM pg_temp.compare($$
    SELECT n FROM a WHERE (SELECT now()) - sno_time(id) < interval '1 hour'$$);
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE tstzrange('2026-03-02 12:00', '2026-03-02 12:00:20') @> sno_time(id)$$);
SELECT same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE sno_time(id) <@ tstzrange('2026-03-02 12:00', '2026-03-02 12:00:20', '(]')$$);
SELECT same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE sno_time(id) <@ tstzrange('2026-03-02 23:59:50', NULL)$$);
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a WHERE sno_time(id) <@ 'empty'::tstzrange$$);
-- A plan made in one time zone and run in another finds the day of the zone it runs in.
SET plan_cache_mode = force_generic_plan;
SET TimeZone = 'America/New_York';
PREPARE of_day(date) AS SELECT count(*), min(n), max(n) FROM a WHERE sno_time(id)::date = $1;
PREPARE of_trunc(timestamptz) AS
    SELECT count(*), min(n), max(n) FROM a WHERE date_trunc('day', sno_time(id)) = $1;
EXECUTE of_day('2026-03-01');
EXECUTE of_trunc('2026-03-01');
SET TimeZone = 'Asia/Kolkata';
EXECUTE of_day('2026-03-01');
EXECUTE of_trunc('2026-03-01');
EXPLAIN (COSTS OFF) EXECUTE of_day('2026-03-01');
SET sno.rewrite_time_predicates = off;
SELECT count(*), min(n), max(n) FROM a WHERE sno_time(id)::date = '2026-03-01';
RESET sno.rewrite_time_predicates;
DEALLOCATE of_day;
DEALLOCATE of_trunc;
RESET plan_cache_mode;
SET TimeZone = 'UTC';
-- A row-level security policy on the time.
CREATE TABLE secured (id sno PRIMARY KEY, n integer);
INSERT INTO secured SELECT * FROM a;
ANALYZE secured;
ALTER TABLE secured ENABLE ROW LEVEL SECURITY;
CREATE POLICY last_minute ON secured USING (sno_time(id) >= '2026-03-02 23:59:00');
GRANT SELECT ON secured TO time_reader;
SET ROLE time_reader;
SELECT plan, same_rows FROM pg_temp.compare($$SELECT count(*) FROM secured$$);
RESET ROLE;
DROP TABLE secured;
-- HAVING on a grouped time: PostgreSQL moves it into WHERE, where it is rewritten.
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT sno_time(id) AS t, count(*) FROM a GROUP BY 1
    HAVING sno_time(id) >= '2026-03-02 23:59:40'$$);
-- ORDER BY the time, the newest first: ten index entries, not a sort of the table; in the
-- order of time (the two IDs of a unit tie).
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n, sno_time(id) FROM a ORDER BY sno_time(id) DESC LIMIT 10$$);
SELECT n, sno_time(id) FROM a ORDER BY sno_time(id) DESC LIMIT 10;
SELECT n, created_at FROM a_times ORDER BY created_at LIMIT 4;
SELECT plan, same_rows FROM pg_temp.compare($$
    SELECT n FROM a_times ORDER BY created_at LIMIT 4$$);
-- Not before another key, whose order the ties of a unit then take: sorted as written.
SELECT same_rows, same_plan FROM pg_temp.compare($$
    SELECT n FROM a ORDER BY sno_time(id) DESC, n LIMIT 5$$);
SELECT same_rows, same_plan FROM pg_temp.compare($$
    SELECT DISTINCT sno_time(id) FROM a ORDER BY sno_time(id) DESC LIMIT 3$$);
DROP VIEW a_times;
DROP TABLE a, b, c;
DROP ROLE time_reader;
