-- COPY: the text form and the binary form (the 10 bytes) round trip through files, COPY
-- reads every text form sno_in takes, and binary input of the wrong length fails with 22P03.
-- The files go to pg_regress's output directory, which the server can write to.
\getenv abs_builddir PG_ABS_BUILDDIR
\set text_file :abs_builddir '/copy_ids.txt'
\set binary_file :abs_builddir '/copy_ids.bin'
\set one_row_file :abs_builddir '/copy_one_row.bin'
\set short_file :abs_builddir '/copy_short.bin'
\set long_file :abs_builddir '/copy_long.bin'

CREATE TABLE copy_source AS
SELECT i, substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno AS id
FROM generate_series(1, 10000) AS i;
CREATE TABLE from_text (i int, id sno);
CREATE TABLE from_binary (i int, id sno);

-- Out and back in, in each format: every row the same.
COPY copy_source TO :'text_file';
COPY from_text FROM :'text_file';
COPY copy_source TO :'binary_file' (FORMAT binary);
COPY from_binary FROM :'binary_file' (FORMAT binary);
WITH copied AS (
    SELECT 'text' AS format, * FROM from_text UNION ALL SELECT 'binary', * FROM from_binary)
SELECT f.format,
       (SELECT count(*) FROM copied c WHERE c.format = f.format) AS rows,
       (SELECT count(*) FROM (TABLE copy_source
                              EXCEPT ALL SELECT i, id FROM copied c WHERE c.format = f.format) AS d)
       AS lost,
       (SELECT count(*) FROM (SELECT i, id FROM copied c WHERE c.format = f.format
                              EXCEPT ALL TABLE copy_source) AS d) AS gained
FROM (VALUES ('text'), ('binary')) AS f(format);

-- What the files hold: in text, the 16 characters; in binary, the field length 10 and the
-- 10 bytes, between COPY's binary header and trailer.
COPY (SELECT i, id FROM copy_source WHERE i <= 3 ORDER BY i) TO STDOUT;
COPY (SELECT 'brpk4q72xwf2m63l'::sno) TO :'one_row_file' (FORMAT binary);
SELECT encode(pg_read_binary_file(:'one_row_file'), 'hex');

CREATE TABLE copy_target (i int, id sno);
-- Text input takes upper case and bytea's hex form (its backslash doubled, as COPY's text
-- format escapes it).
COPY copy_target FROM STDIN;
1	brpk4q72xwf2m63l
2	BRPK4Q72XWF2M63L
3	\\x4e6f2160a0ff9a0a1033
4	\N
\.
SELECT i, id FROM copy_target ORDER BY i;
TRUNCATE copy_target;

-- Bad text stops the COPY at its line (22P02, as type_io shows; psql keeps no SQLSTATE of a
-- failed COPY FROM STDIN).
COPY copy_target FROM STDIN;
1	brpk4q72xwf2m63l
2	brpk4q72xwf2m63
\.

-- A binary field of 9 or 11 bytes: 22P03.
COPY (SELECT '\x4e6f2160a0ff9a0a10'::bytea) TO :'short_file' (FORMAT binary);
COPY copy_target (id) FROM :'short_file' (FORMAT binary);
\echo :LAST_ERROR_SQLSTATE
COPY (SELECT '\x4e6f2160a0ff9a0a103300'::bytea) TO :'long_file' (FORMAT binary);
COPY copy_target (id) FROM :'long_file' (FORMAT binary);
SELECT count(*) FROM copy_target;

DROP TABLE copy_source, from_text, from_binary, copy_target;
