-- Who may backfill (issue 22, item 4). sno_generate_at moves server-wide cursors that the state
-- file and the WAL keep, and may force a durable write per call, so PUBLIC may not call it: an
-- administrator grants it to the roles that backfill. Retiring a cursor is for superusers.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

SELECT p.oid::regprocedure AS function,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_call
FROM pg_proc p
WHERE p.proname IN ('sno_generate', 'sno_generate_at', 'sno_backfill_cursors',
                    'sno_retire_backfill_cursor')
ORDER BY p.proname;

CREATE ROLE regress_app;
CREATE ROLE regress_backfiller;

-- A role without the grant: 42501, for both.
SET ROLE regress_app;
SELECT sno_generate_at(50, '2024-05-01 00:00:00+00');
\echo :LAST_ERROR_SQLSTATE
SELECT sno_retire_backfill_cursor(50);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- A role the administrator granted sno_generate_at to backfills.
GRANT EXECUTE ON FUNCTION sno_generate_at(integer, timestamptz) TO regress_backfiller;
SET ROLE regress_backfiller;
SELECT sno_generate_at(50, '2024-05-01 00:00:00+00') AS first_id \gset
SELECT * FROM sno_decode(:'first_id');
-- Two passes back from far ahead leave meta 50 with no way back to 2024: 55000, for good.
SELECT sno_tick_tock(sno_generate_at(50, '2030-01-01 00:00:00+00')) AS tick_tock;
SELECT sno_tick_tock(sno_generate_at(50, '2029-12-31 00:00:00+00')) AS tick_tock;
SELECT sno_generate_at(50, '2024-05-02 00:00:00+00');
\echo :LAST_ERROR_SQLSTATE
-- ... and only a superuser can retire the cursor.
SELECT sno_retire_backfill_cursor(50);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- The superuser sees the cursor, retires it (true), and it is gone; a second time, or a meta
-- never used: false. A meta outside a byte: 22003; NULL: NULL (STRICT).
SELECT * FROM sno_backfill_cursors() WHERE meta = 50;
SELECT sno_retire_backfill_cursor(50) AS retired;
SELECT count(*) AS cursors_of_meta_50 FROM sno_backfill_cursors() WHERE meta = 50;
SELECT sno_retire_backfill_cursor(50) AS retired_again, sno_retire_backfill_cursor(51) AS unused;
SELECT sno_retire_backfill_cursor(256);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_retire_backfill_cursor(NULL) IS NULL AS null_meta;

-- Backfills of meta 50 start afresh, and that is the risk the function's comment names: the
-- first ID for the same time is the one made before the cursor was retired.
SET ROLE regress_backfiller;
SELECT sno_generate_at(50, '2024-05-01 00:00:00+00') = :'first_id' AS repeats_the_first_id;
RESET ROLE;

-- Leaves no cursor behind for the tests that list them.
SELECT sno_retire_backfill_cursor(50) AS retired;
REVOKE EXECUTE ON FUNCTION sno_generate_at(integer, timestamptz) FROM regress_backfiller;
DROP ROLE regress_backfiller;
DROP ROLE regress_app;
