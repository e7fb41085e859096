-- sno_maintain_partitions: keeps a table partitioned by range of its sno key supplied with time
-- partitions (what pg_partman does for time columns; it refuses sno). `at` stands for now().
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET max_parallel_workers_per_gather = 0;

CREATE TABLE events (id sno PRIMARY KEY DEFAULT sno_generate(1), payload text)
    PARTITION BY RANGE (id);
-- The day of `at` and three ahead.
SELECT * FROM sno_maintain_partitions('events', '1 day', ahead => 3, at => '2026-03-01 13:00');
-- Exact bounds: each partition holds the IDs of its day, from the first ID at midnight.
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass ORDER BY 1;
-- Run again (as cron would, every hour): nothing new until a day has passed.
SELECT * FROM sno_maintain_partitions('events', '1 day', ahead => 3, at => '2026-03-01 14:00');
SELECT * FROM sno_maintain_partitions('events', '1 day', ahead => 3, at => '2026-03-02 00:00');

-- Rows are routed by their time: the last ID of a day and the first of the next.
INSERT INTO events (id, payload) VALUES
    (sno_max_before('2026-03-02'), 'last of March 1st'),
    (sno_min_at_or_after('2026-03-02'), 'first of March 2nd'),
    (sno_from_parts('2026-03-04 23:59:59.999', 255, 65535, 65535, 1), 'last of March 4th'),
    (sno_from_parts('2026-03-05 00:00:00', 0, 0, 0, 0), 'first of March 5th');
SELECT tableoid::regclass AS partition, payload, sno_time(id) FROM events ORDER BY id;
-- A time no partition holds yet: PostgreSQL's own error.
INSERT INTO events (id, payload) VALUES (sno_min('2026-03-07'), 'too early');
\echo :LAST_ERROR_SQLSTATE
-- The natural predicate prunes to the partition of its day.
EXPLAIN (COSTS OFF) SELECT payload FROM events WHERE sno_time(id) >= '2026-03-04 12:00';

-- Later: keep 2 days. Partitions whose every ID is older than at - keep are detached (not
-- dropped: archive or DROP them), the newest ones created.
SELECT * FROM sno_maintain_partitions('events', '1 day', ahead => 3, keep => '2 days',
                                      at => '2026-03-04 00:30');
SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'events'::regclass ORDER BY 1;
SELECT payload FROM events_p20260301;
DROP TABLE events_p20260301, events_p20260302;
DROP TABLE events;

-- Hourly, and monthly (whole months, counted from January 2010).
CREATE TABLE hits (id sno) PARTITION BY RANGE (id);
SELECT action, partition, from_time, to_time
FROM sno_maintain_partitions('hits', '1 hour', ahead => 1, at => '2026-03-01 13:59:59.999');
SELECT action, partition, from_time, to_time
FROM sno_maintain_partitions('hits', '1 hour', ahead => 1, keep => '30 minutes',
                             at => '2026-03-01 15:30');
DROP TABLE hits, hits_p20260301_130000, hits_p20260301_140000;
CREATE TABLE bills (id sno, total numeric) PARTITION BY RANGE (id);
SELECT action, partition, from_time, to_time
FROM sno_maintain_partitions('bills', '3 months', ahead => 1, at => '2026-05-31 23:00');
DROP TABLE bills;

-- Mistakes: clear errors.
CREATE TABLE plain (id sno);
SELECT * FROM sno_maintain_partitions('plain', '1 day');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE by_hash (id sno) PARTITION BY HASH (id);
SELECT * FROM sno_maintain_partitions('by_hash', '1 day');
CREATE TABLE by_time (at timestamptz) PARTITION BY RANGE (at);
SELECT * FROM sno_maintain_partitions('by_time', '1 day');
CREATE TABLE by_id (id sno) PARTITION BY RANGE (id);
SELECT * FROM sno_maintain_partitions('by_id', '1 month 2 days');
SELECT * FROM sno_maintain_partitions('by_id', '-1 day');
SELECT * FROM sno_maintain_partitions('by_id', '1 day', ahead => -1);
SELECT * FROM sno_maintain_partitions('by_id', NULL);
\echo :LAST_ERROR_SQLSTATE
-- A partition that overlaps the one to create: PostgreSQL's error, nothing created.
CREATE TABLE by_id_odd PARTITION OF by_id
    FOR VALUES FROM (sno_min('2026-03-01 12:00')) TO (sno_min('2026-03-02 12:00'));
SELECT * FROM sno_maintain_partitions('by_id', '1 day', ahead => 0, at => '2026-03-02');
\echo :LAST_ERROR_SQLSTATE
DROP TABLE plain, by_hash, by_time, by_id;
