-- Decoding an ID into its parts and building one from parts: SPEC §4's reference vectors both
-- ways, each decoding function, and the errors for parts and times out of range.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- SPEC §4, verbatim: the input Unix millisecond (decoding floors it to its 4 ms unit), the
-- parts, and the ID's 10 bytes in hex and its text.
CREATE TABLE spec_vectors (
    n int, name text, unix_ms bigint, tick_tock int, meta int, "partition" int,
    "sequence" int, hex text, text_form text);
INSERT INTO spec_vectors VALUES
    (1, 'all zero', 1262304000000, 0, 0, 0, 0, '00000000000000000000', '2222222222222222'),
    (2, 'epoch +3 ms (floors)', 1262304000003, 0, 0, 0, 0, '00000000000000000000', '2222222222222222'),
    (3, 'epoch +4 ms', 1262304000004, 0, 0, 0, 0, '00000000020000000000', '2222222422222222'),
    (4, 'epoch +4 ms, tick 1', 1262304000004, 1, 0, 0, 0, '00000000030000000000', '2222222522222222'),
    (5, 'epoch +1 s', 1262304001000, 0, 0, 0, 0, '00000001f40000000000', '222222hm22222222'),
    (6, 'meta 255 only', 1262304000000, 0, 255, 0, 0, '0000000000ff00000000', '22222222xu222222'),
    (7, 'partition 0xffff only', 1262304000000, 0, 0, 65535, 0, '000000000000ffff0000', '2222222225xxw222'),
    (8, 'sequence 0xffff only', 1262304000000, 0, 0, 0, 65535, '0000000000000000ffff', '2222222222223xxx'),
    (9, 'max time', 3461327255548, 0, 0, 0, 0, 'fffffffffe0000000000', 'xxxxxxxw22222222'),
    (10, 'all 0xff', 3461327255548, 1, 255, 65535, 65535, 'ffffffffffffffffffff', 'xxxxxxxxxxxxxxxx'),
    (11, 'upstream test vector', 1936047814976, 0, 255, 39434, 4147, '4e6f2160a0ff9a0a1033', 'brpk4q72xwf2m63l'),
    (12, '2021-11-12T01:43:02.123Z', 1636681382123, 0, 42, 9350, 77, '2b9550c0742a2486004d', '7gcn3i5m7akae24f'),
    (13, 'same, tick 1', 1636681382123, 1, 42, 9350, 77, '2b9550c0752a2486004d', '7gcn3i5n7akae24f'),
    (14, '2024-02-29T12:34:56.789Z', 1709210096789, 0, 128, 32768, 32768, '3406d6ee4a8080008000', '8i5fftkci4223222');

-- Decoding each vector's text (in lower and upper case) and bytes: every part as SPEC lists
-- it, the time floored to its unit.
SELECT v.name,
       (extract(epoch FROM d.time) * 1000)::bigint AS unix_ms,
       d.tick_tock, d.meta, d.partition, d.sequence,
       encode(v.text_form::sno::bytea, 'hex') AS hex,
       upper(v.text_form)::sno::text = v.text_form AS upper_case_reads,
       decode(v.hex, 'hex')::sno::text = v.text_form AS bytes_read
FROM spec_vectors v, sno_decode(v.text_form::sno) d
ORDER BY v.n;
-- ... and the same compared with the table: no vector differs.
SELECT v.name
FROM spec_vectors v, sno_decode(v.text_form::sno) d
WHERE ((extract(epoch FROM d.time) * 1000)::bigint, d.tick_tock, d.meta, d.partition, d.sequence,
       encode(v.text_form::sno::bytea, 'hex'))
   IS DISTINCT FROM
      (v.unix_ms - (v.unix_ms - 1262304000000) % 4, v.tick_tock, v.meta, v.partition, v.sequence,
       v.hex);

-- Building each vector from its parts gives its text.
SELECT v.name,
       sno_from_parts('epoch'::timestamptz + v.unix_ms * interval '1 ms',
                      v.meta, v.partition, v.sequence, v.tick_tock) AS built,
       v.text_form
FROM spec_vectors v
ORDER BY v.n;
SELECT v.name
FROM spec_vectors v
WHERE sno_from_parts('epoch'::timestamptz + v.unix_ms * interval '1 ms',
                     v.meta, v.partition, v.sequence, v.tick_tock)::text <> v.text_form;
DROP TABLE spec_vectors;

-- Each decoding function on its own; the time is the start of the 4 ms unit (…123 ms -> …120).
SELECT sno_time(id), sno_tick_tock(id), sno_meta(id), sno_partition(id), sno_sequence(id)
FROM (VALUES ('7gcn3i5n7akae24f'::sno)) AS t(id);
SELECT * FROM sno_decode('7gcn3i5n7akae24f');
-- Without tick_tock, sno_from_parts builds tick 0.
SELECT sno_from_parts('2021-11-12 01:43:02.123+00', 42, 9350, 77);
-- NULL in, NULL out (the functions are STRICT).
SELECT sno_time(NULL) IS NULL AS time_null, (sno_decode(NULL)).meta IS NULL AS decode_null,
       sno_from_parts(NULL, 1, 1, 1) IS NULL AS built_null;

-- The smallest and the largest ID of a unit: inclusive bounds for time ranges.
SELECT sno_min('2024-05-01 00:00:00.003+00'), sno_max('2024-05-01 00:00:00.003+00');
SELECT sno_min('2024-05-01 00:00:00.003+00') <= sno_from_parts('2024-05-01 00:00:00.003+00', 9, 9, 9)
   AND sno_from_parts('2024-05-01 00:00:00.003+00', 9, 9, 9) <= sno_max('2024-05-01 00:00:00.003+00')
   AS within_unit,
       sno_max('2024-05-01 00:00:00.003+00') < sno_min('2024-05-01 00:00:00.004+00') AS next_unit_after;
-- The first and the last unit the format holds.
SELECT sno_min('2010-01-01 00:00:00+00'), sno_max('2079-09-07 15:47:35.548999+00');

-- A part out of range: 22003, naming the part and its range.
SELECT sno_from_parts('2024-05-01 00:00:00+00', 256, 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_from_parts('2024-05-01 00:00:00+00', -1, 0, 0);
SELECT sno_from_parts('2024-05-01 00:00:00+00', 0, 65536, 0);
SELECT sno_from_parts('2024-05-01 00:00:00+00', 0, -1, 0);
SELECT sno_from_parts('2024-05-01 00:00:00+00', 0, 0, 65536);
SELECT sno_from_parts('2024-05-01 00:00:00+00', 0, 0, -1);
SELECT sno_from_parts('2024-05-01 00:00:00+00', 0, 0, 0, 2);
SELECT sno_from_parts('2024-05-01 00:00:00+00', 0, 0, 0, -1);

-- A time outside 2010-01-01 .. 2079-09-07 15:47:35.548 UTC: 22008, never a wrapped value.
SELECT sno_from_parts('2009-12-31 23:59:59.999+00', 0, 0, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_from_parts('2079-09-07 15:47:35.549+00', 0, 0, 0);
SELECT sno_from_parts('infinity', 0, 0, 0);
SELECT sno_from_parts('-infinity', 0, 0, 0);
SELECT sno_from_parts('4713-01-01 00:00:00+00 BC', 0, 0, 0);
SELECT sno_min('2009-12-31 23:59:59.999+00');
SELECT sno_min('2079-09-07 15:47:35.549+00');
SELECT sno_min('infinity');
SELECT sno_min('-infinity');
SELECT sno_max('2009-12-31 23:59:59.999+00');
SELECT sno_max('2079-09-07 15:47:35.549+00');
SELECT sno_max('infinity');
SELECT sno_max('-infinity');
