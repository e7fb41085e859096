-- Comparison, the btree and hash operator classes, and min/max: every operator and support
-- function against byte order (bytea's own operators), on edge values and on enough IDs to
-- sort externally and to build a multi-level, deduplicated btree.
CREATE EXTENSION IF NOT EXISTS amcheck;
-- Plans from a single process, the same on every machine.
SET max_parallel_workers_per_gather = 0;

-- Every operator on pairs of values that differ in the first byte, in the last byte, across
-- 0x7f/0x80 (a signed comparison would get those backwards) and not at all.
CREATE TABLE edge_ids (name text, id sno);
INSERT INTO edge_ids VALUES
    ('zero', '\x00000000000000000000'),
    ('last byte 01', '\x00000000000000000001'),
    ('middle 7f', '\x000000007f0000000000'),
    ('middle 80', '\x00000000800000000000'),
    ('first byte ff', '\xff000000000000000000');
SELECT a.name AS a, b.name AS b,
       a.id < b.id AS lt, a.id <= b.id AS le, a.id = b.id AS eq, a.id <> b.id AS ne,
       a.id >= b.id AS ge, a.id > b.id AS gt, sno_cmp(a.id, b.id) AS cmp,
       sno_smaller(a.id, b.id) = least(a.id::bytea, b.id::bytea)::sno AS smaller,
       sno_larger(a.id, b.id) = greatest(a.id::bytea, b.id::bytea)::sno AS larger
FROM edge_ids a CROSS JOIN edge_ids b
ORDER BY a.id::bytea, b.id::bytea;
SELECT min(id), max(id) FROM edge_ids;
DROP TABLE edge_ids;

-- min and max of no rows, and of NULLs only, are NULL.
SELECT min(id) IS NULL AS min_null, max(id) IS NULL AS max_null
FROM (VALUES (NULL::sno)) AS v(id);
SELECT min(id) IS NULL AS min_null, max(id) IS NULL AS max_null
FROM (SELECT 'brpk4q72xwf2m63l'::sno WHERE false) AS v(id);

-- The hash of an ID is PostgreSQL's hash of its 10 bytes (hash_bytes, as for uuid), and it
-- must never change: hash indexes and hash-partitioned tables store where each value went.
-- (These are the values on little-endian machines, such as x86-64 and arm64.)
SELECT id, sno_hash(id), sno_hash_extended(id, 0) AS extended_seed_0,
       sno_hash_extended(id, 1) AS extended_seed_1
FROM (VALUES ('2222222222222222'::sno), ('brpk4q72xwf2m63l'), ('xxxxxxxxxxxxxxxx')) AS v(id);
-- Seed 0 extends the standard hash: its low 32 bits are the standard hash.
SELECT bool_and(sno_hash_extended(id, 0) & 4294967295 = sno_hash(id)::bigint & 4294967295)
FROM (SELECT substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno FROM generate_series(1, 1000) AS i) AS v(id);

-- 30,000 random IDs (the first 10 bytes of SHA-256 of 0..14,999, each twice), and 10,000
-- IDs of one 4 ms unit, meta and partition in shuffled sequence order: those share their
-- first 8 bytes, the abbreviated key, so sorting them takes the full comparison.
CREATE TABLE ids AS
SELECT i, substring(sha256((i % 15000)::text::bytea) FROM 1 FOR 10)::sno AS id
FROM generate_series(1, 30000) AS i;
INSERT INTO ids
SELECT 30000 + i, sno_from_parts('2024-05-01 00:00:00+00', 1, 1, (i * 7919) % 10000)
FROM generate_series(1, 10000) AS i;

-- Sorting: the same order as the bytes, ascending and descending, in memory (quicksort) and
-- on disk (external merge).
SET work_mem = '64MB';
SELECT array(SELECT i FROM ids ORDER BY id, i) = array(SELECT i FROM ids ORDER BY id::bytea, i)
       AS in_memory,
       array(SELECT i FROM ids ORDER BY id DESC, i) = array(SELECT i FROM ids ORDER BY id::bytea DESC, i)
       AS in_memory_descending;
SET work_mem = '64kB';
SELECT array(SELECT i FROM ids ORDER BY id, i) = array(SELECT i FROM ids ORDER BY id::bytea, i)
       AS external,
       array(SELECT i FROM ids ORDER BY id DESC, i) = array(SELECT i FROM ids ORDER BY id::bytea DESC, i)
       AS external_descending;
RESET work_mem;
-- The text form sorts as the bytes do (byte-wise, in the C collation).
SELECT array(SELECT i FROM ids ORDER BY id::text COLLATE "C", i)
     = array(SELECT i FROM ids ORDER BY id::bytea, i) AS text_order;
-- Every operator agrees with bytea's on all pairs of 200 of them, and on each pair of
-- neighbours in byte order (where the abbreviated keys tie).
SELECT count(*) AS pairs,
       bool_and((a.id < b.id) = (a.id::bytea < b.id::bytea)
            AND (a.id <= b.id) = (a.id::bytea <= b.id::bytea)
            AND (a.id = b.id) = (a.id::bytea = b.id::bytea)
            AND (a.id <> b.id) = (a.id::bytea <> b.id::bytea)
            AND (a.id >= b.id) = (a.id::bytea >= b.id::bytea)
            AND (a.id > b.id) = (a.id::bytea > b.id::bytea)
            AND sign(sno_cmp(a.id, b.id)) = sign(byteacmp(a.id::bytea, b.id::bytea))) AS agree
FROM (SELECT id FROM ids WHERE i % 200 = 0) AS a CROSS JOIN (SELECT id FROM ids WHERE i % 200 = 0) AS b;
SELECT count(*) AS pairs,
       bool_and(a < b AND a <= b AND a <> b AND NOT a = b AND b > a AND b >= a AND sno_cmp(a, b) = -1
                AND sno_cmp(b, a) = 1) AS agree
FROM (SELECT id AS a, lead(id) OVER (ORDER BY id::bytea) AS b FROM (SELECT DISTINCT id FROM ids) AS d) AS n
WHERE b IS NOT NULL;

-- A btree index: amcheck finds every row in it, in order.
CREATE INDEX ids_id ON ids (id);
SELECT bt_index_parent_check('ids_id', heapallindexed => true, rootdescend => true);
-- Deduplication works (the operator class says equal IDs are equal images): each random ID is
-- there twice, and the index is smaller than one that keeps every copy.
CREATE INDEX ids_id_every_copy ON ids (id) WITH (deduplicate_items = off);
SELECT pg_relation_size('ids_id') < pg_relation_size('ids_id_every_copy') AS deduplicated;
DROP INDEX ids_id_every_copy;
-- Scanning the index gives byte order too.
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT array(SELECT id::bytea FROM ids ORDER BY id) = array(SELECT id::bytea FROM ids ORDER BY id::bytea)
       AS index_order;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- Hash aggregation groups equal IDs: 15,000 random ones and 10,000 of one unit.
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT id FROM ids GROUP BY id) AS g;
SELECT count(*) FROM (SELECT id FROM ids GROUP BY id) AS g;
RESET enable_sort;

-- Hash partitioning spreads them: the count in each partition is fixed by the hash function.
CREATE TABLE hashed (id sno) PARTITION BY HASH (id);
CREATE TABLE hashed_0 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE hashed_1 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE hashed_2 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE hashed_3 PARTITION OF hashed FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO hashed SELECT id FROM ids;
SELECT tableoid::regclass AS partition, count(*) FROM hashed GROUP BY 1 ORDER BY 1;
-- A lookup goes to the partition that holds the row.
SELECT tableoid::regclass AS partition, id FROM hashed
WHERE id = substring(sha256('77'::bytea) FROM 1 FOR 10)::sno;
DROP TABLE hashed;

-- A join by every method finds exactly the pairs that a join of the bytes finds: each of
-- 10,000 random rows twice and each of 3,333 same-unit IDs once.
CREATE TABLE some_ids AS SELECT i, id FROM ids WHERE i % 3 = 0;
CREATE TABLE expected_pairs AS
SELECT a.i AS ids_i, b.i AS some_i FROM ids a JOIN some_ids b ON a.id::bytea = b.id::bytea;
SELECT count(*) FROM expected_pairs;
-- Statistics from every row (the sample holds them all), so that the plans never change.
ALTER TABLE ids ALTER COLUMN id SET STATISTICS 1000;
ALTER TABLE some_ids ALTER COLUMN id SET STATISTICS 1000;
ANALYZE ids, some_ids;
CREATE TABLE joined (method text, ids_i int, some_i int);
\set join 'SELECT a.i, b.i FROM ids a JOIN some_ids b ON a.id = b.id'

BEGIN;
SET LOCAL enable_mergejoin = off;
SET LOCAL enable_nestloop = off;
EXPLAIN (COSTS OFF) :join;
INSERT INTO joined SELECT 'hash', * FROM (:join) AS j;
COMMIT;

BEGIN;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_nestloop = off;
EXPLAIN (COSTS OFF) :join;
INSERT INTO joined SELECT 'merge', * FROM (:join) AS j;
COMMIT;

-- (Without Memoize, which would look the IDs up in a cache rather than in the index.)
BEGIN;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL enable_memoize = off;
EXPLAIN (COSTS OFF) :join;
INSERT INTO joined SELECT 'nested loop', * FROM (:join) AS j;
COMMIT;

-- Pairs a method found that the bytes' join did not (extra), and the other way round.
SELECT m.method,
       (SELECT count(*) FROM joined j WHERE j.method = m.method) AS pairs,
       (SELECT count(*) FROM (SELECT ids_i, some_i FROM joined j WHERE j.method = m.method
                              EXCEPT ALL TABLE expected_pairs) AS e) AS extra,
       (SELECT count(*) FROM (TABLE expected_pairs
                              EXCEPT ALL SELECT ids_i, some_i FROM joined j WHERE j.method = m.method) AS e)
       AS missing
FROM (VALUES ('hash'), ('merge'), ('nested loop')) AS m(method);

DROP TABLE joined, expected_pairs, some_ids, ids;
