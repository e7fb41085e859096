-- The SQL edition (sno_sql, issue 46) against native sno, byte for byte: the SPEC vectors, the
-- spec's invalid texts, and 100,000 random values each way through both, in one database.
-- Every query below counts differences and must print 0 (or the exact rows). The Rust core's
-- vectors (src/, SPEC.md section 4) are the source of truth; native sno is their SQL face.
\getenv abs_builddir PG_ABS_BUILDDIR
\set edition :abs_builddir '/edition/sno_sql.sql'
\set ECHO none
\set QUIET on
\i :edition
\set QUIET off
\set ECHO all
SET client_min_messages = warning;

-- The native extension and the edition side by side: no function of one has the name and the
-- arguments of one of the other (the edition's min and max take its own type); the one name
-- they share is the type's, sno and sno_sql.sno, whose values neither casts to the other.
SELECT count(*) AS clashes
FROM pg_proc AS edition
JOIN pg_proc AS native ON native.proname = edition.proname AND native.proargtypes = edition.proargtypes
    AND native.pronamespace = 'public'::regnamespace
WHERE edition.pronamespace = 'sno_sql'::regnamespace;
SELECT edition.typname FROM pg_type AS edition
JOIN pg_type AS native ON native.typname = edition.typname AND native.typnamespace = 'public'::regnamespace
WHERE edition.typnamespace = 'sno_sql'::regnamespace AND edition.typname NOT LIKE '\_%';

-- SPEC.md section 4, through both: from the parts, and from the text.
CREATE TEMP TABLE vectors (ms bigint, tick int, meta int, part int, seq int, hex text, text_form text);
INSERT INTO vectors VALUES
    (1262304000000, 0, 0, 0, 0, '00000000000000000000', '2222222222222222'),
    (1262304000003, 0, 0, 0, 0, '00000000000000000000', '2222222222222222'),
    (1262304000004, 0, 0, 0, 0, '00000000020000000000', '2222222422222222'),
    (1262304000004, 1, 0, 0, 0, '00000000030000000000', '2222222522222222'),
    (1262304001000, 0, 0, 0, 0, '00000001f40000000000', '222222hm22222222'),
    (1262304000000, 0, 255, 0, 0, '0000000000ff00000000', '22222222xu222222'),
    (1262304000000, 0, 0, 65535, 0, '000000000000ffff0000', '2222222225xxw222'),
    (1262304000000, 0, 0, 0, 65535, '0000000000000000ffff', '2222222222223xxx'),
    (3461327255548, 0, 0, 0, 0, 'fffffffffe0000000000', 'xxxxxxxw22222222'),
    (3461327255548, 1, 255, 65535, 65535, 'ffffffffffffffffffff', 'xxxxxxxxxxxxxxxx'),
    (1936047814976, 0, 255, 39434, 4147, '4e6f2160a0ff9a0a1033', 'brpk4q72xwf2m63l'),
    (1636681382123, 0, 42, 9350, 77, '2b9550c0742a2486004d', '7gcn3i5m7akae24f'),
    (1636681382123, 1, 42, 9350, 77, '2b9550c0752a2486004d', '7gcn3i5n7akae24f'),
    (1709210096789, 0, 128, 32768, 32768, '3406d6ee4a8080008000', '8i5fftkci4223222');
SELECT v.text_form,
       sno_sql.to_text(sno_sql.from_parts(to_timestamp(v.ms / 1000.0), v.meta, v.part, v.seq, v.tick))
           = v.text_form AS edition_from_parts,
       encode(sno_sql.to_bytea(sno_sql.from_text(v.text_form)), 'hex') = v.hex AS edition_bytes,
       sno_sql.to_text(sno_sql.from_bytea(decode(v.hex, 'hex'))) = v.text_form AS edition_text,
       sno_from_parts(to_timestamp(v.ms / 1000.0), v.meta, v.part, v.seq, v.tick)::text = v.text_form
           AS native_from_parts,
       sno_sql.decode(sno_sql.from_text(v.text_form)) IS NOT DISTINCT FROM sno_decode(v.text_form::sno)
           AS same_parts
FROM vectors AS v ORDER BY v.hex, v.text_form;

-- What each refuses, and how: the SQLSTATE, message and detail of both, for the spec's invalid
-- texts and more.
CREATE FUNCTION pg_temp.native_error(input text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE state text; message text; detail text;
BEGIN
    PERFORM input::sno;
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN state || ': ' || message || ' / ' || detail;
END $$;
CREATE FUNCTION pg_temp.edition_error(input text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE state text; message text; detail text;
BEGIN
    PERFORM sno_sql.from_text(input);
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN state || ': ' || message || ' / ' || detail;
END $$;
SELECT input, pg_temp.edition_error(input) = pg_temp.native_error(input) AS same,
       pg_temp.edition_error(input) AS edition
FROM (VALUES ('brpk4q72xwf2m631'), ('yyyyyyyyyyyyyyyy'), ('0000000000000000'), ('brpk4q72xwf2m63'),
             ('brpk4q72xwf2m63ll'), (''), ('brpk4q72xwf2m6é'), ('brpk4q72xwf2m63é'), (' rpk4q72xwf2m63l'),
             (E'brpk4q72xwf2m63\x01'), ('BRPK4Q72XWF2M63L'), ('brpK4q72xwf2M63l'), ('brpk4q72xwf2m6Y3'))
     AS inputs(input);

-- 100,000 byte strings (md5 of a counter, so that a failure can be re-run), and the extremes:
-- text, bytes, parts and order through both.
CREATE TEMP TABLE random_bytes AS
SELECT n, decode(left(md5(n::text), 20), 'hex') AS bytes FROM generate_series(1, 100000) AS n
UNION ALL SELECT 0, decode('00000000000000000000', 'hex')
UNION ALL SELECT -1, decode('ffffffffffffffffffff', 'hex');
CREATE TEMP TABLE both_editions AS
SELECT n, bytes, bytes::sno AS native, sno_sql.from_bytea(bytes) AS edition FROM random_bytes;
SELECT count(*) AS values,
       count(*) FILTER (WHERE sno_sql.to_text(edition) <> native::text) AS text_differs,
       count(*) FILTER (WHERE sno_sql.to_bytea(edition) <> native::bytea) AS bytes_differ,
       count(*) FILTER (WHERE sno_sql.to_bytea(sno_sql.from_text(native::text)) <> bytes) AS edition_reads_native_text_wrong,
       count(*) FILTER (WHERE sno_sql.to_text(edition)::sno <> native) AS native_reads_edition_text_wrong,
       count(*) FILTER (WHERE sno_sql.to_bytea(sno_sql.from_text(upper(native::text))) <> bytes) AS upper_case_wrong,
       count(*) FILTER (WHERE sno_sql.decode(edition) IS DISTINCT FROM sno_decode(native)) AS parts_differ,
       count(*) FILTER (WHERE sno_sql.min_at(sno_sql."time"(edition)) <> sno_sql.from_bytea(sno_min(sno_time(native))::bytea)
                           OR sno_sql.max_at(sno_sql."time"(edition)) <> sno_sql.from_bytea(sno_max(sno_time(native))::bytea))
           AS bounds_differ
FROM both_editions;
-- Order: the edition sorts as native sno, and as the text forms do.
SELECT count(*) AS order_differs FROM (
    SELECT row_number() OVER (ORDER BY native) AS by_native, row_number() OVER (ORDER BY edition) AS by_edition,
           row_number() OVER (ORDER BY sno_sql.to_text(edition) COLLATE "C") AS by_text
    FROM both_editions) AS ranks
WHERE by_native <> by_edition OR by_native <> by_text;
SELECT sno_sql.to_bytea(sno_sql.min(edition)) = min(native)::bytea AS same_min,
       sno_sql.to_bytea(sno_sql.max(edition)) = max(native)::bytea AS same_max
FROM both_editions;

-- 100,000 random tuples of parts (times over the whole range, both tick-tock timelines)
-- through both constructors.
SELECT setseed(0.46);
CREATE TEMP TABLE random_parts AS
SELECT to_timestamp((1262304000000 + floor(random() * 2199023255548))::bigint / 1000.0) AS at,
       floor(random() * 256)::int AS meta, floor(random() * 65536)::int AS part,
       floor(random() * 65536)::int AS seq, floor(random() * 2)::int AS tick
FROM generate_series(1, 100000);
SELECT count(*) AS tuples,
       count(*) FILTER (WHERE sno_sql.to_bytea(sno_sql.from_parts(at, meta, part, seq, tick))
                               <> sno_from_parts(at, meta, part, seq, tick)::bytea) AS bytes_differ,
       count(*) FILTER (WHERE sno_sql.min_at(at) <> sno_sql.from_bytea(sno_min(at)::bytea)
                           OR sno_sql.max_at(at) <> sno_sql.from_bytea(sno_max(at)::bytea)) AS bounds_differ
FROM random_parts;

-- Out of range, through both: the same SQLSTATE and message.
CREATE FUNCTION pg_temp.error_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE state text; message text;
BEGIN
    EXECUTE statement;
    RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
    RETURN state || ': ' || message;
END $$;
SELECT args, pg_temp.error_of(format('SELECT sno_sql.from_parts(%s)', args))
           = pg_temp.error_of(format('SELECT sno_from_parts(%s)', args)) AS same,
       pg_temp.error_of(format('SELECT sno_sql.from_parts(%s)', args)) AS edition
FROM (VALUES ($$'2009-12-31 23:59:59.999+00', 0, 0, 0$$), ($$'2079-09-07 15:47:35.548999+00', 0, 0, 0$$),
             ($$'2079-09-07 15:47:35.549+00', 0, 0, 0$$), ($$'infinity', 0, 0, 0$$),
             ($$'-infinity', 0, 0, 0$$), ($$now(), 256, 0, 0$$), ($$now(), -1, 0, 0$$),
             ($$now(), 0, 65536, 0$$), ($$now(), 0, 0, -1$$), ($$now(), 0, 0, 65536$$),
             ($$now(), 0, 0, 0, 2$$)) AS cases(args);
SELECT pg_temp.error_of($$SELECT sno_sql.from_bytea('\x0102')$$) = pg_temp.error_of($$SELECT '\x0102'::bytea::sno$$)
    AS same_bytea_error;

-- A literal compared with the column is read by uuid's input: it fails loudly, whatever the
-- search_path, and never matches nothing silently.
CREATE TEMP TABLE edition_ids (id sno_sql.sno PRIMARY KEY);
INSERT INTO edition_ids SELECT edition FROM both_editions WHERE n BETWEEN 1 AND 3;
SELECT count(*) FROM edition_ids WHERE id = 'brpk4q72xwf2m63l';
SET search_path = sno_sql, public;
SELECT count(*) FROM edition_ids WHERE id = 'brpk4q72xwf2m63l';
RESET search_path;
SELECT count(*) FROM edition_ids WHERE id = sno_sql.from_text(sno_sql.to_text((SELECT min(id::text)::uuid FROM edition_ids)));
-- Bytes that are not a sno's (a random uuid) are refused, not stored.
INSERT INTO edition_ids VALUES ('4e6f2160-a0ff-9a0a-1033-000000000001');

-- The plain SQL form is removed with its schema.
DROP SCHEMA sno_sql CASCADE;
