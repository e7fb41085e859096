-- The partition registry's side: sno_lease_claim, sno_lease_renew and sno_lease_release, which
-- servers with sno.partition_source = 'registry' call in the registry's database, and the DBA's
-- sno_partition_reserve and sno_registry_restored; each rule one at a time. A server is its
-- instance (a token its postmaster makes at start): the uuids here are fixed, one letter per
-- server. Times go in and out as Unix milliseconds; the output shows them as fixed times, as
-- offsets from :t0 (this test's start), or compared with the registry's clock and the epoch's
-- floor, so that it does not change from run to run. pg_regress connects over a Unix socket:
-- every address the registry records here is NULL.
--
-- sno_lease_claim(instance, resume, wanted, lease_ms, may_use_until_ms, system_identifier,
--                 timeline, port, backfill_partition)
-- sno_lease_renew(partition, instance, lease_ms, may_use_until_ms, started_after_ms,
--                 system_identifier, timeline, port, backfill_partition)
-- sno_lease_release(partition, instance, resume_hash)
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
-- Times to and from Unix milliseconds (floor: never later than the time given).
CREATE FUNCTION regress_ms(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT
    RETURN floor(extract(epoch FROM t) * 1000)::bigint;
CREATE FUNCTION regress_at(ms bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE STRICT
    RETURN to_timestamp(ms / 1000.0);
SELECT regress_ms(now()) AS t0 \gset
\set a aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa
\set a0 a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0
\set a1 a1a1a1a1-a1a1-a1a1-a1a1-a1a1a1a1a1a1
\set b bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb
\set c cccccccc-cccc-cccc-cccc-cccccccccccc
\set c0 c0c0c0c0-c0c0-c0c0-c0c0-c0c0c0c0c0c0
\set d dddddddd-dddd-dddd-dddd-dddddddddddd
\set e eeeeeeee-eeee-eeee-eeee-eeeeeeeeeeee
\set e0 e0e0e0e0-e0e0-e0e0-e0e0-e0e0e0e0e0e0
\set f ffffffff-ffff-ffff-ffff-ffffffffffff
\set g 11111111-1111-1111-1111-111111111111
\set h 22222222-2222-2222-2222-222222222222
\set i 33333333-3333-3333-3333-333333333333
\set j 44444444-4444-4444-4444-444444444444
\set k 55555555-5555-5555-5555-555555555555
\set l 66666666-6666-6666-6666-666666666666
\set m 77777777-7777-7777-7777-777777777777
\set x 99999999-9999-9999-9999-999999999999

-- Privileges -----------------------------------------------------------------------------------
-- Nobody but the extension's owner may call the registry's functions or read its tables until
-- granted. The writing functions run as the owner (SECURITY DEFINER) with a fixed search_path;
-- the two checks that write nothing stay callable.
SELECT p.oid::regprocedure AS function,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_call,
       p.prosecdef AS security_definer, p.proconfig AS settings
FROM pg_proc p
WHERE p.proname ~ '^sno_(lease_|registry_|partition_reserve$)'
ORDER BY p.proname;
SELECT t AS "table", has_table_privilege('public', t, 'SELECT') AS public_may_read,
       has_table_privilege('public', t, 'INSERT, UPDATE, DELETE, TRUNCATE') AS public_may_write
FROM unnest(ARRAY['sno_partition_leases', 'sno_partition_reservations',
                  'sno_registry_epoch']::regclass[]) AS t;

CREATE ROLE regress_servers;
CREATE ROLE regress_intruder;
GRANT EXECUTE ON FUNCTION
    sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer, integer, integer),
    sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint, integer, integer, integer),
    sno_lease_release(integer, uuid, bytea) TO regress_servers;

-- A role without the grant can neither claim, renew, release, nor read or write the tables:
-- 42501.
SET ROLE regress_intruder;
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, :t0, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_lease_renew(0, :'x', 60000, :t0, NULL, 7001, 1, 5432, NULL);
SELECT sno_lease_release(0, :'x', NULL);
SELECT * FROM sno_partition_leases;
\echo :LAST_ERROR_SQLSTATE
INSERT INTO sno_partition_reservations VALUES (1, 'mine');
SELECT * FROM sno_registry_epoch;
RESET ROLE;
-- The servers' role can do what servers do, and nothing of the DBA's: no reservation, no epoch
-- by hand, no look at the tables.
SET ROLE regress_servers;
SELECT sno_partition_reserve(1, 'mine');
SELECT * FROM sno_registry_restored();
SELECT * FROM sno_registry_epoch();
SELECT sno_registry_note_lease('1 day');
SELECT * FROM sno_partition_leases;
RESET ROLE;
-- Nothing of that was written: the one epoch record is the one CREATE EXTENSION wrote.
SELECT (SELECT count(*) FROM sno_partition_leases) AS leases,
       (SELECT count(*) FROM sno_partition_reservations) AS reservations,
       (SELECT count(*) FROM sno_registry_epoch) AS epochs;

-- Claims -----------------------------------------------------------------------------------------
-- Three servers start: each gets the lowest partition never leased, with nothing to wait for (no
-- start_after), and a lease that ends one lease from now by the registry's clock.
SET ROLE regress_servers;
SELECT "partition",
       expires_at > now() + '59 seconds' AND expires_at <= clock_timestamp() + '1 minute'
           AS ends_in_a_minute,
       start_after_ms, backfill_reserved
FROM sno_lease_claim(:'a', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
SELECT "partition", start_after_ms, backfill_reserved
FROM sno_lease_claim(:'b', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
SELECT "partition", start_after_ms, backfill_reserved
FROM sno_lease_claim(:'c', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
RESET ROLE;
-- The first call made the registry's first epoch: nothing was lost before it, so no floor.
SELECT epoch, reason, floor, longest_lease,
       system_identifier = (pg_control_system()).system_identifier AS this_system,
       timeline, postmaster_started = pg_postmaster_start_time() AS this_start,
       leases_table = 'sno_partition_leases'::regclass AS this_table
FROM sno_registry_epoch;
-- Each row records the instance and, for people, where it runs; used_through is what it sent.
SELECT "partition", instance, system_identifier, timeline, address, port, lease,
       claimed_at = renewed_at AS claimed_now,
       expires_at = renewed_at + lease AS expires_after_lease,
       used_through - regress_at(:t0) AS used_through_after_t0, started_after, epoch, resume_hash
FROM sno_partition_leases ORDER BY 1;

-- The second server's lease holder restarts (its postmaster did not: the same instance). It gets
-- its own partition back, whatever it asks for and whatever else it says of itself, and keeps
-- the time it stays after (started_after: set here by a renewal). A smaller may_use_until does
-- not move used_through back, and claimed_at stays.
SET ROLE regress_servers;
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(1, :'b', 60000, :t0 + 60000, regress_ms('2020-01-01'), 7001, 1, 5432, NULL);
SELECT "partition", regress_at(start_after_ms) AS start_after
FROM sno_lease_claim(:'b', NULL, 5, 60000, :t0, 8002, 3, 6543, NULL);
RESET ROLE;
SELECT "partition", instance, system_identifier, timeline, port,
       claimed_at < renewed_at AS claimed_before,
       used_through - regress_at(:t0) AS used_through_after_t0, started_after
FROM sno_partition_leases WHERE "partition" = 1;

-- A live lease of another instance is never taken. A clone of the first server (a copy of its
-- files: the same system identifier, timeline and port, and here the same address) asks for the
-- first server's partition: it gets the lowest free one. A promoted standby of the first (a
-- later timeline) likewise: no takeover, but another partition at once, with nothing to wait
-- for.
SET ROLE regress_servers;
SELECT "partition", start_after_ms
FROM sno_lease_claim(:'d', NULL, 0, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
SELECT "partition", start_after_ms
FROM sno_lease_claim(:'e', NULL, 0, 60000, :t0 + 60000, 7001, 2, 5432, NULL);
RESET ROLE;
SELECT "partition", instance, timeline FROM sno_partition_leases WHERE "partition" IN (0, 3, 4)
ORDER BY 1;

-- Renewals ---------------------------------------------------------------------------------------
-- Only the instance that holds the partition renews it; what else it says of itself is neither
-- compared nor recorded (its claim recorded it). The address is recorded, never compared: the
-- row says the first server claimed from 192.0.2.1, and a renewal from elsewhere (here the
-- socket: NULL) extends the lease all the same.
UPDATE sno_partition_leases SET address = '192.0.2.1' WHERE "partition" = 0;
SET ROLE regress_servers;
SELECT renewed_until > now() + '59 seconds' AND renewed_until <= clock_timestamp() + '1 minute'
           AS renewed_for_a_minute,
       backfill_reserved
FROM sno_lease_renew(0, :'a', 60000, :t0 + 60000, NULL, 9009, 7, 6000, NULL);
RESET ROLE;
SELECT "partition", instance, address, system_identifier, timeline, port
FROM sno_partition_leases WHERE "partition" = 0;
-- Another instance (the clone, whatever it says) cannot renew it: 55000, and nothing changes.
SET ROLE regress_servers;
SELECT * FROM sno_lease_renew(0, :'d', 60000, :t0 + 60000, NULL, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT "partition", instance FROM sno_partition_leases WHERE "partition" = 0;

-- used_through and started_after never move back: a renewal with smaller ones keeps the row's,
-- one with greater ones moves them.
SET ROLE regress_servers;
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(0, :'a', 60000, :t0 + 30000, regress_ms('2020-01-03'), 7001, 1, 5432, NULL);
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(0, :'a', 60000, :t0 + 20000, regress_ms('2020-01-02'), 7001, 1, 5432, NULL);
RESET ROLE;
SELECT used_through - regress_at(:t0) AS used_through_after_t0, started_after
FROM sno_partition_leases WHERE "partition" = 0;
SET ROLE regress_servers;
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(0, :'a', 60000, :t0 + 90000, NULL, 7001, 1, 5432, NULL);
RESET ROLE;
SELECT used_through - regress_at(:t0) AS used_through_after_t0, started_after
FROM sno_partition_leases WHERE "partition" = 0;

-- A lease that expired without anyone taking it is renewed: its holder stopped at its fence and
-- goes on from there.
UPDATE sno_partition_leases SET expires_at = now() - interval '1 second' WHERE "partition" = 0;
SET ROLE regress_servers;
SELECT renewed_until > now() AS renewed
FROM sno_lease_renew(0, :'a', 60000, :t0 + 60000, NULL, 7001, 1, 5432, NULL);
RESET ROLE;

-- Epochs -----------------------------------------------------------------------------------------
-- The registry lost the third server's row (here: deleted by hand). Its holder's renewal writes
-- it again from what it sends (its used_through and started_after), and is evidence that rows
-- were lost: a new epoch begins, whose floor is twice the longest lease granted, and 5 seconds,
-- from now. Every row not claimed or renewed since is unconfirmed: its partition goes on only
-- after the floor. The registry cannot know who had the partition while it had no row, so the
-- holder stays after the floor from now on too (start_after_ms, which it applies).
DELETE FROM sno_partition_leases WHERE "partition" = 2;
SET ROLE regress_servers;
SELECT renewed_until > now() AS renewed, backfill_reserved, start_after_ms AS renewal_floor_ms
FROM sno_lease_renew(2, :'c', 60000, :t0 + 45000, regress_ms('2020-01-02'), 7001, 1, 5432, NULL)
\gset
RESET ROLE;
SELECT :'renewed' AS renewed, :'backfill_reserved' AS backfill_reserved;
SELECT "partition", instance, used_through - regress_at(:t0) AS used_through_after_t0,
       started_after = e.floor AND (extract(epoch FROM e.floor) * 1000)::bigint
                                   = :renewal_floor_ms AS stays_after_the_floor, l.epoch
FROM sno_partition_leases l, sno_registry_epoch e WHERE "partition" = 2;
SELECT epoch, reason,
       floor = began_at + 2 * longest_lease + interval '5 seconds' AS floor_as_designed,
       longest_lease
FROM sno_registry_epoch;
SELECT "partition", epoch FROM sno_partition_leases ORDER BY 1;
SELECT (extract(epoch FROM floor) * 1000)::bigint AS floor_ms FROM sno_registry_epoch \gset

-- The second server's lease holder restarts again: its row is of the last epoch, so it stays
-- after the floor (its started_after is earlier). The claim confirms the row, and the floor is
-- its started_after now.
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'b', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
RESET ROLE;
SELECT "partition", started_after = floor AS started_after_floor, l.epoch = e.epoch AS confirmed
FROM sno_partition_leases l, sno_registry_epoch e WHERE "partition" = 1;
-- A partition never leased is handed out after the floor too: the registry cannot tell it from
-- one whose row was lost. A longer lease than any before becomes the longest.
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'f', NULL, NULL, 90000, :t0 + 60000, 7001, 1, 5432, NULL);
RESET ROLE;
SELECT longest_lease FROM sno_registry_epoch;

-- Releases and resuming --------------------------------------------------------------------------
-- The first server shuts down cleanly: its last renewal said its IDs may go 100 seconds ahead,
-- and it stays after 2020-01-03. It leaves a secret in its data directory and releases with it;
-- the registry keeps only its SHA-256. The lease ends now; the row stays, with used_through.
-- Releasing a partition the instance does not hold changes nothing and says so.
SET ROLE regress_servers;
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(0, :'a', 60000, regress_ms(now()) + 100000, regress_ms('2020-01-03'),
                     7001, 1, 5432, NULL);
SELECT sno_lease_release(0, :'d', '\x0d') AS released_by_the_clone,
       sno_lease_release(99, :'a', '\xc0ffee') AS released_not_held,
       sno_lease_release(0, :'a', '\xc0ffee') AS released;
RESET ROLE;
SELECT "partition", instance, expires_at <= now() AS ended,
       used_through > now() AS used_through_ahead,
       resume_hash = sha256('\xc0ffee') AS resume_hash_kept
FROM sno_partition_leases WHERE "partition" = 0;
-- Another server asks for it without the secret: its IDs could still be ahead, so it gets
-- another partition (never leased, so after the floor).
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'g', NULL, 0, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
-- The next start of the first server's data directory (another instance) shows the secret: it
-- gets the partition back at once, staying after its old started_after only: its own generator
-- state keeps its IDs apart from those it made before, and the row is of this epoch. The hash is
-- used up; used_through does not move back.
SELECT "partition", regress_at(start_after_ms) AS start_after
FROM sno_lease_claim(:'a0', '\xc0ffee', 5, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
RESET ROLE;
SELECT "partition", instance, expires_at > now() AS live,
       used_through > now() AS used_through_ahead,
       started_after, resume_hash
FROM sno_partition_leases WHERE "partition" = 0;
-- That server stops without a clean shutdown and its lease expires. A copy of the data directory
-- made while it was stopped (it holds the same secret) starts elsewhere and asks for the
-- partition with it: the first start used the hash up, and the IDs could be ahead, so another
-- partition.
UPDATE sno_partition_leases SET expires_at = now() - interval '1 second' WHERE "partition" = 0;
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'a1', '\xc0ffee', 0, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
RESET ROLE;

-- A lease that ended with its IDs in the past: the server that asks for its partition gets it,
-- and stays after the last time the IDs could carry (used_through), the row being of this epoch.
SET ROLE regress_servers;
SELECT "partition" FROM sno_lease_claim(:'h', NULL, NULL, 60000, regress_ms('2020-01-05'),
                                        7001, 1, 5432, NULL);
SELECT sno_lease_release(8, :'h', NULL) AS released;
SELECT "partition", regress_at(start_after_ms) AS start_after
FROM sno_lease_claim(:'i', NULL, 8, 60000, regress_ms('2020-01-06'), 7001, 1, 5432, NULL);
-- That one releases too, with IDs up to 2020-01-06; the third server shuts down cleanly,
-- leaving a secret.
SELECT sno_lease_release(8, :'i', NULL) AS released;
SELECT sno_lease_release(2, :'c', '\xc2') AS released;
RESET ROLE;
SELECT "partition", instance, expires_at <= now() AS ended, epoch,
       resume_hash IS NOT NULL AS resumable
FROM sno_partition_leases ORDER BY 1;

-- The DBA's word: the registry lost rows in a way PostgreSQL does not show (rows edited, a
-- storage snapshot rolled back). A new epoch, with a floor twice the longest lease (now 90
-- seconds), and 5 seconds, from now.
SELECT epoch, floor >= now() + interval '3 minutes 5 seconds'
           AND floor <= clock_timestamp() + interval '3 minutes 5 seconds' AS floor_in_3_min_5_s
FROM sno_registry_restored();
SELECT epoch, reason,
       floor = began_at + 2 * longest_lease + interval '5 seconds' AS floor_as_designed
FROM sno_registry_epoch;
SELECT (extract(epoch FROM floor) * 1000)::bigint AS floor_ms FROM sno_registry_epoch \gset
-- Now every row is of an earlier epoch, and every partition handed out stays after the floor:
-- the one whose IDs ended in 2020 (asked for)...
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'j', NULL, 8, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
-- ... the lowest never leased...
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'k', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
-- ... a restarted lease holder's own (the clone's)...
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'d', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
-- ... and one resumed with its secret: the third server's next start.
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'c0', '\xc2', NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
-- A release does not confirm a row: only a claim or a renewal says what the holder used. The
-- promoted standby, whose row is of the first epoch, shuts down cleanly now; its next start
-- resumes the partition after the floor as well.
SELECT sno_lease_release(4, :'e', '\xe0') AS released;
RESET ROLE;
SELECT "partition", epoch FROM sno_partition_leases WHERE "partition" = 4;
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim(:'e0', '\xe0', NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
-- A row renewed in this epoch is confirmed: the second server's restart stays after its own
-- started_after (the earlier floor) only.
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(1, :'b', 60000, :t0 + 60000, NULL, 7001, 1, 5432, NULL);
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor,
       start_after_ms < :floor_ms AS earlier
FROM sno_lease_claim(:'b', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, NULL);
RESET ROLE;

-- What else begins an epoch, noticed by the next call of any lease function (here a release that
-- finds nothing): a restart of the registry's server (a restore from a copy of its files looks
-- the same), a new timeline (a failover), a new system identifier (a restore into another
-- cluster), the lease table made again (a restore from a dump), no record at all while leases
-- exist. Edited here to look so. Each time the floor is twice the longest lease, and 5 seconds,
-- from when the epoch began: later than the last. Without a record, the epoch is numbered after
-- the newest row's, so that every row is of an earlier one.
CREATE TABLE regress_epochs AS SELECT * FROM sno_registry_epoch;
UPDATE sno_registry_epoch SET postmaster_started = postmaster_started - interval '1 hour';
SELECT sno_lease_release(65535, :'x', NULL) AS released;
INSERT INTO regress_epochs SELECT * FROM sno_registry_epoch;
UPDATE sno_registry_epoch SET timeline = timeline + 1;
SELECT sno_lease_release(65535, :'x', NULL) AS released;
INSERT INTO regress_epochs SELECT * FROM sno_registry_epoch;
UPDATE sno_registry_epoch SET system_identifier = system_identifier + 1;
SELECT sno_lease_release(65535, :'x', NULL) AS released;
INSERT INTO regress_epochs SELECT * FROM sno_registry_epoch;
UPDATE sno_registry_epoch SET leases_table = 'sno_partition_reservations'::regclass;
SELECT sno_lease_release(65535, :'x', NULL) AS released;
INSERT INTO regress_epochs SELECT * FROM sno_registry_epoch;
DELETE FROM sno_registry_epoch;
SELECT sno_lease_release(65535, :'x', NULL) AS released;
INSERT INTO regress_epochs SELECT * FROM sno_registry_epoch;
-- Then the registry goes on in the last one.
SELECT sno_lease_release(65535, :'x', NULL) AS released;
INSERT INTO regress_epochs SELECT * FROM sno_registry_epoch;
SELECT epoch, reason, floor >= lag(floor) OVER (ORDER BY began_at) AS floor_not_back,
       floor = began_at + 2 * longest_lease + interval '5 seconds' AS floor_as_designed
FROM regress_epochs ORDER BY began_at;
DROP TABLE regress_epochs;
SELECT (extract(epoch FROM floor) * 1000)::bigint AS floor_ms FROM sno_registry_epoch \gset

-- The clock allowance ------------------------------------------------------------------------
-- may_use_until is the holder's clock plus its lease: more than twice the lease and 5 seconds
-- ahead of the registry's clock means the holder's clock runs ahead by more than the lease and 5
-- seconds, past what an epoch's floor covers. Refused with 22023, exactly past the allowance.
SELECT sno_lease_check_clock('2030-01-01 00:02:05+00', '2030-01-01 00:00:00+00', '1 minute')
    AS allowed;
SELECT sno_lease_check_clock('2030-01-01 00:02:05.001+00', '2030-01-01 00:00:00+00', '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- A claim and a renewal from a clock two minutes ahead: refused, and nothing written. The
-- allowance itself is not refused.
SET ROLE regress_servers;
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, regress_ms(now()) + 180500,
                              7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_lease_renew(1, :'b', 60000, regress_ms(now()) + 180500, NULL,
                              7001, 1, 5432, NULL);
SELECT renewed_until IS NOT NULL AS renewed
FROM sno_lease_renew(1, :'b', 60000, regress_ms(now()) + 125000, NULL, 7001, 1, 5432, NULL);
RESET ROLE;
SELECT count(*) AS rows_of_x FROM sno_partition_leases WHERE instance = :'x';

-- Arguments that describe no lease: 22023 or 22004, before anything is locked or written.
SET ROLE regress_servers;
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 999, :t0, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 86400001, :t0, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, -1, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, 253402300800000, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, :t0, 7001, 0, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, :t0, 7001, 1, 0, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, :t0, 7001, 1, 65536, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, 65536, 60000, :t0, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, -1, 60000, :t0, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_renew(65536, :'x', 60000, :t0, NULL, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(NULL, NULL, NULL, 60000, :t0, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, NULL, :t0, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, NULL, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim(:'x', NULL, NULL, 60000, :t0, NULL, 1, 5432, NULL);
SELECT * FROM sno_lease_renew(NULL, :'x', 60000, :t0, NULL, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_lease_renew(1, :'b', 60000, :t0, NULL, 7001, 1, NULL, NULL);
RESET ROLE;
SELECT count(*) AS rows_of_x FROM sno_partition_leases WHERE instance = :'x';

-- Reservations -----------------------------------------------------------------------------------
-- Partitions used outside the registry (a backfill partition; sno.partition set by hand on a
-- server not yet on the registry) are reserved by the DBA, and never leased. This registry began
-- epochs with a floor above (it may have lost rows): a partition without a row may have been
-- leased in a history it lost, so it is reserved only on the DBA's word (55000 without it).
-- Reserving again changes the reason; only a partition never leased can be reserved (55000: its
-- IDs were made under the registry); a partition is 0..65535 (22023).
SELECT sno_partition_reserve(100, 'backfills');
\echo :LAST_ERROR_SQLSTATE
SELECT sno_partition_reserve(100, 'backfills', known_unused => true);
SELECT sno_partition_reserve(100, 'backfills of the orders database', true);
SELECT sno_partition_reserve(10, 'sno.partition of the old primary', true);
SELECT sno_partition_reserve(0, 'taken', true);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_partition_reserve(65536, 'too far', true);
\echo :LAST_ERROR_SQLSTATE
SELECT "partition", reason FROM sno_partition_reservations ORDER BY 1;
-- The lowest partition never leased is 10, but reserved: a claim gets 11. One that asks for
-- a reserved partition does not get it either. backfill_reserved says whether the claimant's
-- backfill partition is reserved, on a claim and on a renewal.
SELECT "partition" FROM generate_series(0, 20) AS "partition"
WHERE "partition" NOT IN (SELECT l."partition" FROM sno_partition_leases l) ORDER BY 1 LIMIT 2;
SET ROLE regress_servers;
SELECT "partition", backfill_reserved
FROM sno_lease_claim(:'l', NULL, NULL, 60000, :t0 + 60000, 7001, 1, 5432, 100);
SELECT "partition", backfill_reserved
FROM sno_lease_claim(:'m', NULL, 100, 60000, :t0 + 60000, 7001, 1, 5432, 101);
SELECT backfill_reserved
FROM sno_lease_renew(11, :'l', 60000, :t0 + 60000, NULL, 7001, 1, 5432, 100);
SELECT backfill_reserved
FROM sno_lease_renew(11, :'l', 60000, :t0 + 60000, NULL, 7001, 1, 5432, 10);
SELECT backfill_reserved
FROM sno_lease_renew(11, :'l', 60000, :t0 + 60000, NULL, 7001, 1, 5432, 13);
-- The permission to make backfill IDs in a reserved partition is one instance's (a clone keeps
-- the setting and the cursors): another instance that asks for 100 is refused.
SELECT backfill_reserved
FROM sno_lease_renew(12, :'m', 60000, :t0 + 60000, NULL, 7001, 1, 5432, 100);
RESET ROLE;
SELECT "partition", backfill_instance = :'l' AS permitted_to_l FROM sno_partition_reservations
ORDER BY 1;
SELECT count(*) AS reserved_leased FROM sno_partition_leases
WHERE "partition" IN (SELECT "partition" FROM sno_partition_reservations);

-- Every partition taken --------------------------------------------------------------------------
-- Every partition held by a live lease or reserved: 54000, and nothing taken.
INSERT INTO sno_partition_leases
SELECT p, md5(p::text)::uuid, 7001, 1, NULL, 5432, '1 minute', now(), now(), now(), now(), NULL,
       (SELECT epoch FROM sno_registry_epoch), NULL
FROM generate_series(0, 65535) AS p
WHERE p NOT IN (SELECT "partition" FROM sno_partition_reservations)
ON CONFLICT ("partition") DO NOTHING;
UPDATE sno_partition_leases SET expires_at = now() + interval '1 hour';
SELECT count(*) AS leases FROM sno_partition_leases;
SET ROLE regress_servers;
SELECT * FROM sno_lease_claim('99999999-9999-9999-9999-000000000001', NULL, NULL, 60000,
                              :t0 + 60000, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- Once leases have ended, a claim takes the one whose IDs end earliest: used_through, or the
-- floor for a row of an earlier epoch; a live lease with IDs ending earlier still is not taken.
UPDATE sno_partition_leases SET expires_at = now() - interval '1 second',
    used_through = regress_at(:t0 + 86400000) WHERE "partition" = 40000;
UPDATE sno_partition_leases SET expires_at = now() - interval '1 second',
    used_through = '2020-01-01', epoch = 1 WHERE "partition" = 50000;
UPDATE sno_partition_leases SET expires_at = now() - interval '1 second',
    used_through = regress_at(:t0 + 3600000) WHERE "partition" = 60000;
UPDATE sno_partition_leases SET used_through = '2020-01-01' WHERE "partition" = 30000;
SET ROLE regress_servers;
SELECT "partition", start_after_ms = :floor_ms AS starts_after_floor
FROM sno_lease_claim('99999999-9999-9999-9999-000000000001', NULL, NULL, 60000,
                     :t0 + 60000, 7001, 1, 5432, NULL);
SELECT "partition", start_after_ms - :t0 AS start_after_after_t0
FROM sno_lease_claim('99999999-9999-9999-9999-000000000002', NULL, NULL, 60000,
                     :t0 + 60000, 7001, 1, 5432, NULL);
SELECT "partition", start_after_ms - :t0 AS start_after_after_t0
FROM sno_lease_claim('99999999-9999-9999-9999-000000000003', NULL, NULL, 60000,
                     :t0 + 60000, 7001, 1, 5432, NULL);
SELECT * FROM sno_lease_claim('99999999-9999-9999-9999-000000000004', NULL, NULL, 60000,
                              :t0 + 60000, 7001, 1, 5432, NULL);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- The floor never moves back, even when the one recorded is later than twice the longest lease
-- and 5 seconds from now.
UPDATE sno_registry_epoch SET floor = '2100-01-01 00:00:00+00';
SELECT * FROM sno_registry_restored();

-- Leave the registry as the extension made it.
TRUNCATE sno_partition_leases, sno_partition_reservations;
DELETE FROM sno_registry_epoch;
REVOKE ALL ON FUNCTION
    sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer, integer, integer),
    sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint, integer, integer, integer),
    sno_lease_release(integer, uuid, bytea) FROM regress_servers;
DROP ROLE regress_servers;
DROP ROLE regress_intruder;
DROP FUNCTION regress_ms(timestamptz), regress_at(bigint);
