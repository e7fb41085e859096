-- MERGE with WHEN NOT MATCHED BY SOURCE (new in 17) plans its join as a FULL JOIN: its join
-- condition on the time stays as written (src/pg/sql/time_predicates/conditions.rs), so the
-- MERGE runs as it does without sno.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
CREATE TABLE target (id sno PRIMARY KEY, n integer);
INSERT INTO target
SELECT sno_from_parts('2026-03-01 00:00:00+00'::timestamptz + i * interval '1 s', 1, 7, 0), i
FROM generate_series(1, 6) AS i;
CREATE TABLE source (at timestamptz, n integer);
INSERT INTO source VALUES ('2026-03-01 00:00:02+00', 20), ('2026-03-01 00:00:04+00', 40);
MERGE INTO target t USING source s ON sno_time(t.id) = s.at
WHEN MATCHED THEN UPDATE SET n = s.n
WHEN NOT MATCHED BY SOURCE AND sno_time(t.id) >= '2026-03-01 00:00:05' THEN DELETE;
SELECT sno_time(id), n FROM target ORDER BY id;
DROP TABLE target, source;
