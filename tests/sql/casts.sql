-- Casts: to and from bytea (exactly 10 bytes), to timestamptz, and through text.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- Every cast from or to sno and its context (e explicit, a assignment, i implicit): none is
-- implicit, so no expression changes meaning; bytea also assigns (see below).
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
FROM pg_cast
WHERE castsource = 'sno'::regtype OR casttarget = 'sno'::regtype
ORDER BY castsource::regtype::text, casttarget::regtype::text;

-- The 10 bytes, both ways.
SELECT 'brpk4q72xwf2m63l'::sno::bytea;
SELECT '\x4e6f2160a0ff9a0a1033'::bytea::sno;
SELECT sno_to_bytea('brpk4q72xwf2m63l'), sno_from_bytea('\x4e6f2160a0ff9a0a1033');

-- Any other length is an error, 22P02.
SELECT '\x4e6f2160a0ff9a0a10'::bytea::sno;
\echo :LAST_ERROR_SQLSTATE
SELECT '\x4e6f2160a0ff9a0a103300'::bytea::sno;
SELECT ''::bytea::sno;

-- The time: the start of the ID's 4 ms unit, as sno_time.
SELECT '7gcn3i5n7akae24f'::sno::timestamptz, sno_time('7gcn3i5n7akae24f');

-- Through text: the text forms (PostgreSQL's I/O conversion casts).
SELECT 'brpk4q72xwf2m63l'::sno::text, 'BRPK4Q72XWF2M63L'::text::sno;

-- A bytea assigns to a sno column in INSERT and UPDATE: drivers that send byte strings
-- (psycopg, asyncpg, pgJDBC) need no cast in the SQL.
CREATE TABLE assigned (id sno);
INSERT INTO assigned VALUES ('\x4e6f4d6f72654e6f6e65'::bytea);
SELECT id FROM assigned;
UPDATE assigned SET id = '\x00000000000000000000'::bytea;
SELECT id FROM assigned;
-- ... with the same length check.
INSERT INTO assigned VALUES ('\x00'::bytea);
-- In expressions the cast stays explicit: sno and bytea do not compare.
SELECT id = '\x00000000000000000000'::bytea FROM assigned;
\echo :LAST_ERROR_SQLSTATE
SELECT id = '\x00000000000000000000'::bytea::sno FROM assigned;
DROP TABLE assigned;
