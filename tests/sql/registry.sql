-- The partition registry's side (issue 32, item 2): sno_lease_claim, sno_lease_renew and
-- sno_lease_release in the database that servers with sno.partition_source = 'registry'
-- connect to. pg_regress connects over a Unix socket, so every claimant's address is NULL here:
-- servers are told apart by system identifier, timeline and port. Times are the registry's.
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

-- Nobody but the extension's owner may call the functions or touch the table until granted.
SELECT p.oid::regprocedure AS function,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_call,
       p.prosecdef AS security_definer, p.proconfig AS settings
FROM pg_proc p
WHERE p.proname LIKE 'sno\_lease\_%'
ORDER BY p.proname;
SELECT has_table_privilege('public', 'sno_partition_leases', 'SELECT') AS public_may_read,
       has_table_privilege('public', 'sno_partition_leases', 'UPDATE') AS public_may_write;

CREATE ROLE regress_servers LOGIN;
CREATE ROLE regress_intruder LOGIN;
GRANT EXECUTE ON FUNCTION sno_lease_claim(bigint, integer, integer, interval, timestamptz, integer),
    sno_lease_renew(integer, bigint, integer, integer, interval, timestamptz),
    sno_lease_release(integer, bigint, integer, integer) TO regress_servers;

-- A role without the grant can neither claim, renew nor write the table: 42501.
SET ROLE regress_intruder;
SELECT * FROM sno_lease_claim(1, 1, 5432, '1 minute', now() + '1 minute', 7);
\echo :LAST_ERROR_SQLSTATE
SELECT sno_lease_renew(0, 1, 1, 5432, '1 day', 'infinity');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO sno_partition_leases VALUES (7, 1, 1, NULL, 5432, now(), now(), 'infinity', now(), NULL);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

SET ROLE regress_servers;
-- Three servers start: the lowest partitions never leased, in turn, none to wait for.
SELECT "partition", expires_at > now() + '59 seconds' AS live_for_a_minute, start_after
FROM sno_lease_claim(101, 1, 5432, '1 minute', now() + '1 minute');
SELECT "partition", start_after FROM sno_lease_claim(202, 1, 5432, '1 minute', now() + '1 minute');
-- A clone of the second (same system identifier and timeline) on another port is another server.
SELECT "partition", start_after FROM sno_lease_claim(202, 1, 5433, '1 minute', now() + '1 minute');
-- The first restarts: it keeps its partition, whatever it asks for.
SELECT "partition", start_after FROM sno_lease_claim(101, 1, 5432, '1 minute', now() + '1 minute', 2);
RESET ROLE;
SELECT "partition", system_identifier, timeline, address, port,
       claimed_at <= renewed_at AS claimed_first, expires_at - renewed_at AS lease
FROM sno_partition_leases ORDER BY 1;

SET ROLE regress_servers;
-- Renewing moves the expiry by the registry's clock and never lowers used_through.
SELECT sno_lease_renew(1, 202, 1, 5432, '1 hour', '2030-01-01 00:00:00+00') > now() + '59 minutes'
    AS renewed_for_an_hour;
SELECT sno_lease_renew(1, 202, 1, 5432, '1 hour', '2029-01-01 00:00:00+00') IS NOT NULL AS renewed;
-- Another server's partition: 55000.
SELECT sno_lease_renew(1, 101, 1, 5432, '1 minute', now());
\echo :LAST_ERROR_SQLSTATE
-- A fourth server asks for partition 1, which a live lease holds: it gets the next free one.
SELECT "partition", start_after FROM sno_lease_claim(404, 1, 5432, '1 minute', now() + '1 minute', 1);
RESET ROLE;
SELECT "partition", used_through FROM sno_partition_leases WHERE "partition" = 1;

-- The second server stops renewing and its lease runs out, with the last time it could have
-- used still ahead: a server that asks for it gets another partition (it would have to wait).
UPDATE sno_partition_leases SET expires_at = now() - interval '1 second' WHERE "partition" = 1;
SET ROLE regress_servers;
SELECT "partition", start_after FROM sno_lease_claim(606, 1, 5432, '1 minute', now() + '1 minute', 1);
RESET ROLE;
DELETE FROM sno_partition_leases WHERE system_identifier = 606;
-- Once that time has passed:
UPDATE sno_partition_leases SET used_through = '2026-01-01 00:00:00+00' WHERE "partition" = 1;
SET ROLE regress_servers;
-- A fifth server that asks for it gets it, and must start after the last time the second
-- could have used.
SELECT "partition", start_after FROM sno_lease_claim(505, 1, 5432, '1 minute', now() + '1 minute', 1);
-- If it restarts before its state file covered that, its claim says it again.
SELECT "partition", start_after FROM sno_lease_claim(505, 1, 5432, '1 minute', now() + '1 minute');
-- The second comes back: its renewal fails, and a claim gets it a partition of its own.
SELECT sno_lease_renew(1, 202, 1, 5432, '1 minute', now() + '1 minute');
\echo :LAST_ERROR_SQLSTATE
SELECT "partition", start_after FROM sno_lease_claim(202, 1, 5432, '1 minute', now() + '1 minute', 1);

-- A promotion: the first server's standby (same system identifier, timeline 2) takes over the
-- partition its primary's WAL records at once, though the lease is live; the old primary can no
-- longer renew, so the two share it for one lease at most.
SELECT "partition", start_after FROM sno_lease_claim(101, 2, 5432, '1 minute', now() + '1 minute', 0);
SELECT sno_lease_renew(0, 101, 1, 5432, '1 minute', now() + '1 minute');
\echo :LAST_ERROR_SQLSTATE
-- The other way round (an earlier timeline) takes nothing live.
SELECT "partition", start_after FROM sno_lease_claim(101, 1, 5432, '1 minute', now() + '1 minute', 0);

-- A clean shutdown releases now; the row stays, so the next holder starts after used_through.
SELECT sno_lease_release(4, 505, 1, 5432) AS released_not_held,
       sno_lease_release(1, 505, 1, 5432) AS released;
RESET ROLE;
SELECT "partition", expires_at <= now() AS expired, used_through > now() AS used_through_ahead
FROM sno_partition_leases WHERE "partition" = 1;
-- A server that asks for it gets another partition until used_through has passed.
SET ROLE regress_servers;
SELECT "partition", start_after FROM sno_lease_claim(606, 1, 5432, '1 minute', now() + '1 minute', 1);
RESET ROLE;

-- Arguments that describe no lease: 22023 or 22004, before anything is locked or written.
SET ROLE regress_servers;
SELECT * FROM sno_lease_claim(1, 1, 5432, '0 seconds', '2026-01-01 00:00:00+00');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM sno_lease_claim(1, 0, 5432, '1 minute', '2026-01-01 00:00:00+00');
SELECT * FROM sno_lease_claim(1, 1, 70000, '1 minute', '2026-01-01 00:00:00+00');
SELECT * FROM sno_lease_claim(1, 1, 5432, '1 minute', 'infinity');
SELECT * FROM sno_lease_claim(1, 1, 5432, '1 minute', '2026-01-01 00:00:00+00', 65536);
SELECT * FROM sno_lease_claim(1, 1, 5432, NULL, '2026-01-01 00:00:00+00');
\echo :LAST_ERROR_SQLSTATE
SELECT sno_lease_renew(NULL, 1, 1, 5432, '1 minute', '2026-01-01 00:00:00+00');
RESET ROLE;

-- Every partition held by a live lease: 54000, and nothing taken.
INSERT INTO sno_partition_leases
SELECT p, 9000 + p, 1, NULL, 5432, now(), now(), now() + '1 hour', now(), NULL
FROM generate_series(0, 65535) AS p
ON CONFLICT ("partition") DO UPDATE SET expires_at = excluded.expires_at;
SET ROLE regress_servers;
SELECT * FROM sno_lease_claim(777, 1, 5432, '1 minute', now());
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) FROM sno_partition_leases WHERE system_identifier = 777;
-- Once one has expired, the claim takes the lease that expired first.
UPDATE sno_partition_leases SET expires_at = now() - interval '1 minute', used_through = '2031-01-01'
WHERE "partition" = 40000;
UPDATE sno_partition_leases SET expires_at = now() - interval '2 minutes', used_through = '2032-01-01'
WHERE "partition" = 50000;
SET ROLE regress_servers;
SELECT "partition", start_after FROM sno_lease_claim(777, 1, 5432, '1 minute', now());
RESET ROLE;

TRUNCATE sno_partition_leases;
REVOKE ALL ON FUNCTION sno_lease_claim(bigint, integer, integer, interval, timestamptz, integer),
    sno_lease_renew(integer, bigint, integer, integer, interval, timestamptz),
    sno_lease_release(integer, bigint, integer, integer) FROM regress_servers;
DROP ROLE regress_servers;
DROP ROLE regress_intruder;
