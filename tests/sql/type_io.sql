-- The type itself: its storage, its text forms, and the errors of bad text.
-- Binary input and output are in copy.sql, the bytea casts in casts.sql.

-- The runner created the extension; this is the version it got.
SELECT extversion FROM pg_extension WHERE extname = 'sno';

-- 10 plain bytes: fixed length, by reference, no alignment padding, never TOASTed.
SELECT typlen, typbyval, typalign, typstorage, typcategory
FROM pg_type WHERE typname = 'sno';
SELECT pg_column_size('brpk4q72xwf2m63l'::sno);

-- Output is the 16 lower-case characters; input also takes upper and mixed case.
SELECT 'brpk4q72xwf2m63l'::sno AS lower, 'BRPK4Q72XWF2M63L'::sno AS upper,
       'bRpK4Q72xWf2M63l'::sno AS mixed;
-- Each end of the alphabet (2-9, a-x) in each case.
SELECT '2299aaxxAAXX2222'::sno;

-- Arrays (drivers bind lists of IDs as arrays).
SELECT '{brpk4q72xwf2m63l,2222222222222222}'::sno[] AS ids,
       ('{brpk4q72xwf2m63l,2222222222222222}'::sno[])[2] AS second;

-- Bad text: 22P02; the message quotes the input, the detail says what is wrong and where.
SELECT 'brpk4q72xwf2m631'::sno;
\echo :LAST_ERROR_SQLSTATE
SELECT 'yyyyyyyyyyyyyyyy'::sno;
SELECT '0000000000000000'::sno;
-- The characters next to the alphabet's ranges.
SELECT '2222222222222:22'::sno;
SELECT '`222222222222222'::sno;
SELECT '222222222222222Y'::sno;
SELECT 'brpk4q72xwf2m63'::sno;
SELECT 'brpk4q72xwf2m63ll'::sno;
SELECT ''::sno;
SELECT ' brpk4q72xwf2m63l'::sno;
-- A non-ASCII character: its first byte is reported (the database is UTF-8).
SELECT 'brpk4q72xwf2m6é'::sno;

-- bytea's hex form of the 10 bytes, `\x` and 20 hex digits in either case (what Go's pgx sends
-- for a []byte); output is still the 16 characters.
SELECT '\x00000000000000000000'::sno AS zero, '\x4E6F4D6F72654E6F6E65'::sno AS upper_hex;
SELECT ('\x' || encode('brpk4q72xwf2m63l'::sno::bytea, 'hex'))::sno AS round_trip;
SELECT '\x0102'::sno;
SELECT '\x0000000000000000000g'::sno;
SELECT '\x000000000000000000000'::sno;
-- `\X` is not the hex form (nor is it bytea's); it is read as 22 bad characters.
SELECT '\X00000000000000000000'::sno;
