-- Plans: time ranges, ordering and min/max use a btree index, time ranges a BRIN index,
-- equality a hash index, and hash partitioning prunes. Each table is analyzed after loading
-- deterministic data, and plans come from a single process, so they are the same each run.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;

-- EXPLAIN (COSTS OFF) of a query, each InitPlan labelled as PostgreSQL 17 and later label it
-- ("InitPlan 1"); 15 and 16 add what it returns ("InitPlan 1 (returns $0)").
CREATE FUNCTION pg_temp.plan(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        RETURN NEXT regexp_replace(line, '^(\s*InitPlan \d+) \(returns \$\d+\)$', '\1');
    END LOOP;
END $$;

-- One ID every 5 minutes from 2024-04-01 for about 70 days. The column may hold NULLs, so that
-- min and max skip them in the index on every major (18 drops that condition for a NOT NULL
-- column, such as a primary key's).
CREATE TABLE events (id sno);
CREATE INDEX events_id ON events (id);
INSERT INTO events
SELECT sno_from_parts('2024-04-01 00:00:00+00'::timestamptz + i * interval '5 minutes', 1, 1, 0)
FROM generate_series(1, 20000) AS i;
VACUUM ANALYZE events;

-- A time range is an index range scan, its bounds folded to constants when planning.
EXPLAIN (COSTS OFF)
SELECT id FROM events WHERE id >= sno_min('2024-05-01') AND id < sno_min('2024-05-02');
SELECT count(*) FROM events WHERE id >= sno_min('2024-05-01') AND id < sno_min('2024-05-02');
-- The same range with inclusive bounds.
SELECT count(*) FROM events
WHERE id BETWEEN sno_min('2024-05-01') AND sno_max('2024-05-01 23:59:59.999');

-- The latest IDs come from the end of the index, without a sort.
EXPLAIN (COSTS OFF) SELECT id FROM events ORDER BY id DESC LIMIT 3;
SELECT id, sno_time(id) FROM events ORDER BY id DESC LIMIT 3;

-- min and max read one end of the index each.
SELECT * FROM pg_temp.plan('SELECT min(id), max(id) FROM events');
SELECT sno_time(min(id)), sno_time(max(id)) FROM events;
DROP TABLE events;

-- BRIN: one ID every 10 ms for 500 s, 8 pages per summarised range. A time range is a bitmap
-- scan of the index (which keeps each range's minimum and maximum ID), and finds every row
-- that a scan of the whole table finds.
CREATE TABLE log (id sno);
INSERT INTO log
SELECT sno_from_parts('2024-01-01 00:00:00+00'::timestamptz + i * interval '10 ms', 1, 1, 0)
FROM generate_series(1, 50000) AS i;
CREATE INDEX log_brin ON log USING brin (id) WITH (pages_per_range = 8);
ANALYZE log;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM log
WHERE id >= sno_min('2024-01-01 00:02:00') AND id <= sno_max('2024-01-01 00:03:59.999');
SELECT count(*) FROM log
WHERE id >= sno_min('2024-01-01 00:02:00') AND id <= sno_max('2024-01-01 00:03:59.999');
RESET enable_seqscan;
SET enable_bitmapscan = off;
SELECT count(*) FROM log
WHERE id >= sno_min('2024-01-01 00:02:00') AND id <= sno_max('2024-01-01 00:03:59.999');
RESET enable_bitmapscan;
DROP TABLE log;

-- A hash index answers equality.
CREATE TABLE tokens (id sno);
INSERT INTO tokens
SELECT substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno FROM generate_series(1, 10000) AS i;
CREATE INDEX tokens_hash ON tokens USING hash (id);
ANALYZE tokens;
EXPLAIN (COSTS OFF) SELECT id FROM tokens WHERE id = 'n479k2odbttbhgid';
SELECT id FROM tokens WHERE id = 'n479k2odbttbhgid';
DROP TABLE tokens;

-- Hash partitioning: an equality reads only the partition the value hashes to.
CREATE TABLE hashed (id sno) PARTITION BY HASH (id);
CREATE TABLE hashed_0 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE hashed_1 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE hashed_2 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE hashed_3 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 3);
EXPLAIN (COSTS OFF) SELECT id FROM hashed WHERE id = 'n479k2odbttbhgid';
DROP TABLE hashed;
