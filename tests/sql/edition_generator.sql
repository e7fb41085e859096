-- The SQL edition's generator (sno_sql.generate, issue 46) in one session and between roles:
-- before and after configuration, a copy of the database, a clock behind the generator's, a
-- spent unit, privileges. Whole-server cases (concurrency, crashes, promotion, dump and
-- restore) are tests/t/046_edition_generator.pl.
\getenv abs_builddir PG_ABS_BUILDDIR
\set edition :abs_builddir '/edition/sno_sql.sql'
\set ECHO none
\set QUIET on
\i :edition
\set QUIET off
\set ECHO all
SET client_min_messages = warning;

-- Before configuration: refused, saying what to do.
SELECT sno_sql.generate(1);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_sql.configure(65536);
SELECT sno_sql.configure(-1);
SELECT sno_sql.configure(4244);
SELECT "partition", database_fingerprint = sno_sql.database_fingerprint() AS here, configured_by
FROM sno_sql.configuration;

-- IDs of one session: distinct, increasing, of this partition and meta, near the clock.
CREATE TEMP TABLE made AS
SELECT n, sno_sql.generate(7) AS id FROM generate_series(1, 20000) AS n;
SELECT count(DISTINCT id) AS distinct_ids,
       count(*) FILTER (WHERE sno_sql."partition"(id) <> 4244 OR sno_sql.meta(id) <> 7) AS wrong_parts,
       bool_and(abs(extract(epoch FROM sno_sql."time"(id) - clock_timestamp())) < 60) AS near_the_clock
FROM made;
SELECT count(*) AS out_of_order FROM (
    SELECT id, lag(id) OVER (ORDER BY n) AS previous FROM made) AS pairs
WHERE id <= previous;
SELECT sno_sql.generate(256);
SELECT sno_sql.generate(-1);
SELECT sno_sql.generate(NULL) IS NULL AS strict;

-- A clock behind the generator's (a server clock stepped back, simulated by moving the
-- generator on): IDs go on after the last one, in its unit, and never repeat.
SELECT sno_sql.start_after(sno_sql.from_parts(now() + interval '1 hour', 255, 65535, 65535, 1));
SELECT sno_sql."time"(id) > now() + interval '59 minutes' AS ahead, sno_sql."sequence"(id) AS "sequence"
FROM (SELECT sno_sql.generate(1) AS id) AS one;
SELECT count(DISTINCT id) AS distinct_ids, count(*) FROM (
    SELECT sno_sql.generate(1) AS id FROM generate_series(1, 70000)) AS many;
-- ... 65,536 IDs a unit: the 70,000 spent one and went on in the next, these fill it and go on.
SELECT count(DISTINCT sno_sql."time"(id)) AS units FROM (
    SELECT sno_sql.generate(1) AS id FROM generate_series(1, 65537)) AS many;

-- A role's operators in a schema on the caller's search_path, of the operand types that have
-- no exact match in pg_catalog (bigint & integer, numeric * integer, ...), are never taken:
-- every operator the caller's functions write has operands of exactly pg_catalog's types.
CREATE FUNCTION public.hostile_bigint(bigint, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION public.hostile_numeric(numeric, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION public.hostile_numeric_integer(numeric, integer) RETURNS numeric LANGUAGE sql AS 'SELECT 0::numeric';
CREATE FUNCTION public.hostile_numeric_bigint(numeric, bigint) RETURNS numeric LANGUAGE sql AS 'SELECT 0::numeric';
CREATE OPERATOR public.& (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = public.hostile_bigint);
CREATE OPERATOR public.| (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = public.hostile_bigint);
CREATE OPERATOR public.< (LEFTARG = numeric, RIGHTARG = bigint, FUNCTION = public.hostile_numeric);
CREATE OPERATOR public.> (LEFTARG = numeric, RIGHTARG = bigint, FUNCTION = public.hostile_numeric);
CREATE OPERATOR public.* (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = public.hostile_numeric_integer);
CREATE OPERATOR public.- (LEFTARG = numeric, RIGHTARG = bigint, FUNCTION = public.hostile_numeric_bigint);
RESET sno_sql.session;  -- a new session's first ID, through begin_session
SELECT count(DISTINCT id) AS distinct_ids, count(*) FILTER (WHERE sno_sql."partition"(id) <> 4244) AS wrong_partition
FROM (SELECT sno_sql.generate(1) AS id FROM generate_series(1, 1000)) AS many;
SELECT sno_sql.to_text(sno_sql.from_parts('2021-11-12T01:43:02.123Z', 42, 9350, 77, 1)) AS vector,
       sno_sql.to_text(sno_sql.max_at('2024-02-29T12:34:56.789Z')) AS bound;
SELECT sno_sql.min_at('2009-12-31 23:59:59.999+00');
DROP FUNCTION public.hostile_bigint(bigint, integer), public.hostile_numeric(numeric, bigint),
    public.hostile_numeric_integer(numeric, integer), public.hostile_numeric_bigint(numeric, bigint) CASCADE;

-- configure begins a new run: the tick-tock bit flips, IDs go on after the last, and a session
-- that generated before reads the new run at its next ID.
SELECT sno_sql.tick_tock(sno_sql.generate(1)) AS tick_before \gset
SELECT sno_sql.generate(1) AS last_before \gset
SELECT sno_sql.configure(4244);
SELECT sno_sql.tick_tock(id) <> :tick_before AS flipped, id > :'last_before' AS after
FROM (SELECT sno_sql.generate(1) AS id) AS one;
SELECT sno_sql.start_after(sno_sql.from_parts('2070-01-01 00:00:00+00', 0, 0, 0));

-- A copy of the database (its fingerprint differs from the configured one; here written by
-- hand, as a restored dump brings it): refused until configured again.
UPDATE sno_sql.configuration SET database_fingerprint = 'system 1, database 1';
RESET sno_sql.session;
\set VERBOSITY terse
SELECT sno_sql.generate(1);
\set VERBOSITY default
\echo :LAST_ERROR_SQLSTATE
SELECT sno_sql.configure(4245);
SELECT sno_sql."partition"(sno_sql.generate(1));
-- A session that read its partition before two configures in a row (the second brings its
-- tick-tock bit back; here its state is put back by hand, as such a session still has it):
-- its next ID reads the new partition, whose run begins past the state's until.
SELECT current_setting('sno_sql.session') AS state_before \gset
SELECT sno_sql.configure(4246);
SELECT sno_sql.configure(4247);
SELECT set_config('sno_sql.session', :'state_before', false) = :'state_before' AS state_put_back;
SELECT sno_sql."partition"(sno_sql.generate(1));

-- Another role: may generate, may not configure or move the clock.
CREATE ROLE sno_sql_app;
SET ROLE sno_sql_app;
SELECT sno_sql."partition"(sno_sql.generate(1));
SELECT sno_sql.configure(1);
SELECT setval('sno_sql.clock', 1);
SELECT sno_sql.start_after(sno_sql.min_at(now()));
SELECT sno_sql.move_clock(0);
SELECT * FROM sno_sql.configuration;
UPDATE sno_sql.configuration SET "partition" = 1;
-- ... nor hold the lock that moves of the clock take (an advisory lock would be anyone's).
BEGIN;
LOCK TABLE sno_sql.generator_lock IN ACCESS SHARE MODE;
ROLLBACK;
-- nextval is every role's (sno_sql.generate needs it): it only ever moves the clock forward.
SELECT nextval('sno_sql.clock') > 0 AS forward;
-- A session's own setting (sno_sql.session) names its partition only for that session's IDs,
-- as any role may write any ID with sno_sql.from_parts.
RESET ROLE;
DROP ROLE sno_sql_app;

-- Markings: what each function is (the planner trusts these).
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility, p.proparallel AS parallel,
       p.proisstrict AS strict, p.prosecdef AS security_definer,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_run,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc AS p WHERE p.pronamespace = 'sno_sql'::regnamespace ORDER BY p.oid::regprocedure::text;
SELECT count(*) AS uncommented FROM pg_class AS c
WHERE c.relnamespace = 'sno_sql'::regnamespace AND c.relkind IN ('r', 'S')
  AND obj_description(c.oid, 'pg_class') IS NULL;

-- The plain SQL form is removed with its schema.
DROP SCHEMA sno_sql CASCADE;
