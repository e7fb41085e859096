-- The property behind time_rewrite.sql, on random queries: for each, the rows (or the error)
-- with the rewrite on are those with it off, in a custom plan and in a generic plan with the
-- time as a parameter. The queries mix the forms of docs/time.md (comparisons at unit edges,
-- IN lists, ::date, date_trunc, ages, ranges) with inner, left, right and full joins on the time,
-- EXISTS and NOT EXISTS, scalar subqueries, CTEs, a view, a subquery in FROM and a table
-- partitioned by id. Any difference is listed; none are expected.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;

-- An hour of IDs up to midnight and past it, each with a twin in its unit; the extremes.
CREATE TABLE pa (id sno PRIMARY KEY, n integer);
INSERT INTO pa
SELECT sno_from_parts('2026-03-01 23:30:00+00'::timestamptz + i * interval '36 s'
                      + (i % 3) * interval '1 ms', 1, 7, 0, tick), i * 2 + tick
FROM generate_series(0, 99) AS i, generate_series(0, 1) AS tick;
INSERT INTO pa VALUES (sno_from_parts('2010-01-01 00:00:00+00', 0, 0, 0), -1),
                      (sno_from_parts('2079-09-07 15:47:35.548+00', 255, 65535, 65535, 1), -2);
CREATE TABLE pb (id sno, at timestamptz, n integer);
INSERT INTO pb SELECT id, sno_time(id) + (n % 5) * interval '1 ms', n FROM pa WHERE n % 3 = 0;
CREATE TABLE pp (id sno PRIMARY KEY, n integer) PARTITION BY RANGE (id);
CREATE TABLE pp_1 PARTITION OF pp FOR VALUES FROM (MINVALUE) TO (sno_min('2026-03-02'));
CREATE TABLE pp_2 PARTITION OF pp FOR VALUES FROM (sno_min('2026-03-02')) TO (MAXVALUE);
INSERT INTO pp SELECT * FROM pa;
CREATE VIEW pv AS SELECT id, sno_time(id) AS created_at, n FROM pa;
VACUUM ANALYZE pa, pb, pp;

-- A random time: a unit's start or a microsecond beside it, around the data, or an extreme.
CREATE FUNCTION pg_temp.edge() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
    SELECT CASE floor(random() * 10)::integer
        WHEN 0 THEN (ARRAY['-infinity', 'infinity', '2010-01-01', '2079-09-07 15:47:35.548',
                           '2100-01-01', '1999-12-31'])[1 + floor(random() * 6)]::timestamptz
        ELSE '2026-03-01 23:30:00+00'::timestamptz + floor(random() * 3600) * interval '1 s'
             + (ARRAY[-1, 0, 1, 0, 4000, 1000, 2000])[1 + floor(random() * 7)] * interval '1 microsecond'
        END
$$;
-- A random condition on the time of x.id, %1$s standing for one time.
CREATE FUNCTION pg_temp.condition() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT (ARRAY[
        'sno_time(x.id) %2$s %1$s',
        '%1$s %2$s x.id::timestamptz',
        'sno_time(x.id) BETWEEN %1$s AND %1$s + interval ''5 min''',
        'sno_time(x.id) IN (%1$s, %1$s + interval ''20 s'', NULL)',
        'sno_time(x.id)::date %2$s %1$s::date',
        'date_trunc(''day'', sno_time(x.id)) = date_trunc(''day'', %1$s)',
        '%1$s - sno_time(x.id) %2$s interval ''10 min''',
        'tstzrange(%1$s, %1$s + interval ''1 min'', ''(]'') @> sno_time(x.id)',
        'EXISTS (SELECT FROM pb WHERE sno_time(pb.id) = sno_time(x.id) AND pb.at < %1$s)',
        'NOT EXISTS (SELECT FROM pb WHERE sno_time(pb.id) = sno_time(x.id))',
        'sno_time(x.id) = (SELECT max(sno_time(pb.id)) FROM pb WHERE sno_time(pb.id) <= %1$s)',
        'sno_time(x.id) %2$s (SELECT min(pb.at) FROM pb WHERE pb.n > x.n)',
        'NOT (sno_time(x.id) %2$s %1$s)',
        'CASE WHEN x.n %% 2 = 0 THEN sno_time(x.id) %2$s %1$s END'
        ])[1 + floor(random() * 14)]
$$;
CREATE FUNCTION pg_temp.random_query() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT format(
        'WITH c AS (SELECT id, n FROM pa) SELECT count(*), count(x.id), count(y.id), '
        'coalesce(sum(x.n), 0) + coalesce(sum(y.n), 0) FROM %s x %s %s y ON %s WHERE %s %s %s',
        (ARRAY['pa', 'pp', 'pv', 'c', '(SELECT id, n FROM pa OFFSET 0)'])[1 + floor(random() * 5)],
        (ARRAY['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN'])[1 + floor(random() * 4)],
        (ARRAY['pb', 'pp'])[1 + floor(random() * 2)],
        (ARRAY['sno_time(x.id) = sno_time(y.id)', 'x.id = y.id',
               'sno_time(x.id) >= sno_time(y.id) AND sno_time(x.id) < sno_time(y.id) + interval ''30 s''',
               'x.n = y.n AND sno_time(y.id) > %1$s'])[1 + floor(random() * 4)],
        pg_temp.condition(), (ARRAY['AND', 'OR'])[1 + floor(random() * 2)], pg_temp.condition())
$$;
-- The rows of a query (a digest of its one row) or its error, for the time given as $1.
CREATE FUNCTION pg_temp.answer(query text, at timestamptz, rewrite boolean, generic boolean)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    query := 'SELECT r::text FROM (' || query || ') r';
    PERFORM set_config('sno.rewrite_time_predicates', rewrite::text, true);
    IF generic THEN
        PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
        EXECUTE 'PREPARE property_query(timestamptz) AS ' || query;
        BEGIN
            EXECUTE format('EXECUTE property_query(%L)', at) INTO result;
        EXCEPTION WHEN OTHERS THEN
            result := 'ERROR: ' || SQLERRM;
        END;
        DEALLOCATE property_query;
        RETURN result;
    END IF;
    EXECUTE replace(query, '$1', quote_literal(at) || '::timestamptz') INTO result;
    RETURN result;
EXCEPTION WHEN OTHERS THEN
    RETURN 'ERROR: ' || SQLERRM;
END $$;
SELECT setseed(0.125);
CREATE TEMP TABLE queries AS
SELECT q, format(pg_temp.random_query(), '$1', (ARRAY['<', '<=', '=', '>=', '>'])[1 + floor(random() * 5)]) AS query,
       pg_temp.edge() AS at
FROM generate_series(1, 1000) AS q;
CREATE TEMP TABLE property AS
SELECT q, query, at, pg_temp.answer(query, at, false, false) AS plain,
       pg_temp.answer(query, at, true, false) AS rewritten,
       pg_temp.answer(query, at, true, true) AS generic
FROM queries;
SELECT q, query, at, plain, rewritten, generic FROM property
WHERE rewritten IS DISTINCT FROM plain OR generic IS DISTINCT FROM plain
ORDER BY q;
-- The check has teeth: most queries find rows, many of them not every row, a few fail (on
-- both sides alike: an age past timestamptz's range, say), and every shape is there.
SELECT count(*) AS queries,
       count(*) FILTER (WHERE plain NOT LIKE 'ERROR%' AND plain NOT LIKE '(0,%') > 500 AS most_find_rows,
       count(DISTINCT plain) > 200 AS many_different_answers,
       count(*) FILTER (WHERE query LIKE '%FULL JOIN%') > 150 AS full_joins,
       count(*) FILTER (WHERE query LIKE '%EXISTS%') > 100 AS exists
FROM property;
DROP VIEW pv;
DROP TABLE pa, pb, pp;
