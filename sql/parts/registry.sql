
-- The partition registry (docs/generator.md, "A partition from a registry") -------------------
-- Created with the extension in every database; used in the one database that servers with
-- sno.partition_source = 'registry' connect to. Its one promise: no two servers hold one
-- partition at the same time, whatever is copied, restored, promoted or paused; where the
-- registry cannot be sure, the claimant waits (start_after) instead of sharing.
-- - A server is one running postmaster: its instance, a random token it makes at start and
--   keeps across its own crash restarts. A clone, a restored copy or a promoted standby runs
--   another postmaster and has another instance, whatever its address, port, system identifier
--   or timeline (recorded for people, never compared).
-- - A lease is never taken from its holder while it is live; a partition whose lease ended goes
--   on only after the last time its holder's IDs could carry (used_through).
-- - The registry notices when it may have lost rows (a new timeline, a new system identifier, a
--   restart, a restore from a dump, a holder renewing a lease it has no row of: a new epoch)
--   and then makes every partition not renewed since wait past the epoch's floor, by which any
--   lease it granted before has ended and any ID under it is in the past.
-- Written only through the functions below, which run as the extension's owner; EXECUTE on
-- sno_lease_claim, sno_lease_renew and sno_lease_release is granted to the one role the servers
-- connect as, and to no other; the others are the DBA's.
CREATE TABLE sno_partition_leases (
    "partition" integer PRIMARY KEY CHECK ("partition" BETWEEN 0 AND 65535),
    instance uuid NOT NULL,
    system_identifier bigint NOT NULL,
    timeline integer NOT NULL CHECK (timeline > 0),
    address inet,
    port integer NOT NULL CHECK (port BETWEEN 1 AND 65535),
    lease interval NOT NULL,
    claimed_at timestamptz NOT NULL,
    renewed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_through timestamptz NOT NULL,
    started_after timestamptz,
    epoch bigint NOT NULL,
    resume_hash bytea
);
REVOKE ALL ON sno_partition_leases FROM PUBLIC;
-- pg_dump keeps the rows: used_through is what keeps a reused partition's IDs apart.
SELECT pg_catalog.pg_extension_config_dump('sno_partition_leases', '');
COMMENT ON TABLE sno_partition_leases IS
    'the partition registry: which server instance holds which partition until expires_at '
    '(registry clock), the latest time (holder''s clock) any ID of the partition may carry, the '
    'time its holder stays after, and the registry epoch of its last claim or renewal; written '
    'only by sno_lease_claim, sno_lease_renew and sno_lease_release';
COMMENT ON COLUMN sno_partition_leases.instance IS
    'the holder: a token its postmaster made at start (a copy or clone has another)';
COMMENT ON COLUMN sno_partition_leases.address IS
    'where the last claim or renewal came from, for people: never compared';
COMMENT ON COLUMN sno_partition_leases.used_through IS
    'the latest time, by the holder''s clock, that any ID of the partition may carry; never '
    'moves back';
COMMENT ON COLUMN sno_partition_leases.epoch IS
    'the registry epoch (sno_registry_epoch) of the last claim or renewal; a row of an earlier '
    'epoch may be stale, and its partition goes on only after that epoch''s floor';
COMMENT ON COLUMN sno_partition_leases.resume_hash IS
    'SHA-256 of the secret the holder left in its data directory when it gave the lease back: '
    'the next start of that data directory takes the partition back at once';

-- Partitions the registry never leases: those used outside it (sno.backfill_partition, or
-- sno.partition on a server not yet moved to the registry).
CREATE TABLE sno_partition_reservations (
    "partition" integer PRIMARY KEY CHECK ("partition" BETWEEN 0 AND 65535),
    reason text NOT NULL,
    reserved_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    backfill_instance uuid
);
REVOKE ALL ON sno_partition_reservations FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('sno_partition_reservations', '');
COMMENT ON TABLE sno_partition_reservations IS
    'partitions used outside the registry (backfill partitions, sno.partition set by hand), '
    'which it never leases; added with sno_partition_reserve; backfill_instance: the server '
    'instance that may make backfill IDs in it';

-- What the registry last knew of itself. Not dumped: a registry restored from a dump finds the
-- record CREATE EXTENSION wrote, which says it was just installed, beside leases, and begins a
-- new epoch.
CREATE TABLE sno_registry_epoch (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    epoch bigint NOT NULL,
    began_at timestamptz NOT NULL,
    reason text NOT NULL,
    floor timestamptz,
    longest_lease interval NOT NULL,
    system_identifier bigint NOT NULL,
    timeline integer NOT NULL,
    postmaster_started timestamptz NOT NULL,
    leases_table oid NOT NULL
);
REVOKE ALL ON sno_registry_epoch FROM PUBLIC;
COMMENT ON TABLE sno_registry_epoch IS
    'the partition registry''s epoch: why it began, and the floor that partitions not claimed '
    'or renewed since stay after (NULL: the registry never lost track of a lease)';

-- Raises 22023 unless the arguments a server sends could describe a lease.
CREATE FUNCTION sno_lease_check_arguments(instance uuid, system_identifier bigint,
    timeline integer, port integer, lease_ms bigint, may_use_until_ms bigint, wanted integer)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
BEGIN
    IF instance IS NULL OR system_identifier IS NULL OR timeline IS NULL OR port IS NULL
            OR lease_ms IS NULL OR may_use_until_ms IS NULL THEN
        RAISE EXCEPTION 'sno lease: only wanted and the partitions may be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF timeline < 1 THEN
        RAISE EXCEPTION 'sno lease: timeline % is not a timeline', timeline
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF port NOT BETWEEN 1 AND 65535 THEN
        RAISE EXCEPTION 'sno lease: port % is not a port', port
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF lease_ms NOT BETWEEN 1000 AND 86400000 THEN
        RAISE EXCEPTION 'sno lease: a lease of % ms is not between 1 second and 1 day', lease_ms
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF may_use_until_ms NOT BETWEEN 0 AND 253402300799999 THEN
        RAISE EXCEPTION 'sno lease: may_use_until_ms % is not a time sno can carry',
                        may_use_until_ms
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF wanted NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno lease: partition % is not a partition (0..65535)', wanted
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$function$;
COMMENT ON FUNCTION sno_lease_check_arguments(uuid, bigint, integer, integer, bigint, bigint,
    integer) IS
    'raises 22023 unless the arguments could describe a lease (sno_lease_claim, sno_lease_renew)';

-- This server as the registry records itself: system identifier, timeline (of the WAL now
-- written), postmaster start and the lease table, with the other columns of an epoch empty.
CREATE FUNCTION sno_registry_identity()
    RETURNS sno_registry_epoch
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    SELECT true, NULL::bigint, NULL::timestamptz, NULL::text, NULL::timestamptz, NULL::interval,
           (pg_control_system()).system_identifier,
           ('x' || substr(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8))::bit(32)::integer,
           pg_postmaster_start_time(), '@extschema@.sno_partition_leases'::regclass::oid;
    END;
COMMENT ON FUNCTION sno_registry_identity() IS
    'what the partition registry records of its own server to tell a restart, a failover or a '
    'restore (sno_registry_epoch)';
REVOKE EXECUTE ON FUNCTION sno_registry_identity() FROM PUBLIC;
-- The record of a registry just installed: its first call begins epoch 1 without a floor if it
-- finds no lease and the same server.
INSERT INTO sno_registry_epoch
SELECT i.singleton, 0, clock_timestamp(), 'installed', NULL, interval '1 second',
       i.system_identifier, i.timeline, i.postmaster_started, i.leases_table
FROM sno_registry_identity() i;

-- The current epoch of the registry, begun anew here when the registry may have lost rows since
-- the last one: another system identifier (a restore into another cluster), another timeline (a
-- failover, point-in-time recovery), another postmaster start (a restore from a file copy cannot
-- be told from a restart), another lease table, leases in a registry whose record says it was
-- just installed (a restore from a dump: the record is not dumped, and CREATE EXTENSION writes a
-- new one), no record at all, a holder renewing a lease it has no row of (lost_row), or a DBA's
-- word (sno_registry_restored). Its floor is then the registry's clock plus twice the longest
-- lease it granted (or the one asked for now, if longer) and 5 seconds: every lease granted
-- before has ended by then on its holder's side, and no ID under one can carry a later time (a
-- claim or renewal whose clock runs ahead of the registry's by more than its lease and 5 seconds
-- is refused). Only a registry whose record says it was just installed, with no lease, and
-- still is the server it was installed on, begins without a floor.
CREATE FUNCTION sno_registry_epoch(lease interval DEFAULT NULL, lost_row boolean DEFAULT false,
    by_hand boolean DEFAULT false)
    RETURNS sno_registry_epoch
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    here @extschema@.sno_registry_epoch := @extschema@.sno_registry_identity();
    recorded @extschema@.sno_registry_epoch;
    same_server boolean;
    longest interval;
BEGIN
    FOR attempt IN 1..2 LOOP
        SELECT * INTO recorded FROM @extschema@.sno_registry_epoch;
        same_server := FOUND AND (recorded.system_identifier, recorded.timeline,
                                  recorded.postmaster_started, recorded.leases_table)
                                 = (here.system_identifier, here.timeline,
                                    here.postmaster_started, here.leases_table);
        IF same_server AND NOT lost_row AND NOT by_hand AND recorded.reason <> 'installed' THEN
            RETURN recorded;
        END IF;
        -- Once more under the lock: another session may have begun the epoch meanwhile.
        EXIT WHEN attempt = 2;
        LOCK TABLE @extschema@.sno_registry_epoch IN EXCLUSIVE MODE;
    END LOOP;
    SELECT greatest(recorded.longest_lease, max(l.lease), sno_registry_epoch.lease) INTO longest
    FROM @extschema@.sno_partition_leases l;
    here.began_at := clock_timestamp();
    here.longest_lease := longest;
    IF same_server AND recorded.reason = 'installed' AND NOT lost_row AND NOT by_hand
            AND NOT EXISTS (SELECT FROM @extschema@.sno_partition_leases) THEN
        -- A new registry, on the server it was installed on: no lease to lose track of.
        here.epoch := 1;
        here.reason := 'a new registry';
    ELSE
        here.epoch := coalesce(greatest(recorded.epoch, (SELECT max(l.epoch)
                                                         FROM @extschema@.sno_partition_leases l)),
                               0) + 1;
        here.floor := greatest(recorded.floor, here.began_at
                               + 2 * coalesce(here.longest_lease, interval '1 second')
                               + interval '5 seconds');
        here.reason := CASE
            WHEN by_hand THEN 'sno_registry_restored() was called'
            WHEN lost_row THEN 'a server renewed a lease the registry had no row of'
            WHEN recorded IS NULL THEN 'no record of the registry''s last epoch'
            WHEN recorded.system_identifier <> here.system_identifier
                THEN 'a new system identifier (a restore into another cluster)'
            WHEN recorded.timeline <> here.timeline
                THEN 'a new timeline (a failover or a point-in-time recovery)'
            WHEN recorded.postmaster_started <> here.postmaster_started
                THEN 'the registry''s server started (a restart, or a restore from a copy of '
                     'its files)'
            WHEN recorded.leases_table <> here.leases_table
                THEN 'the lease table was created again'
            ELSE 'leases in a registry just installed (a restore from a dump)' END;
        RAISE LOG 'sno registry: epoch % begins: %; partitions not claimed or renewed since '
                  'stay after %', here.epoch, here.reason, here.floor;
    END IF;
    here.longest_lease := coalesce(here.longest_lease, interval '1 second');
    DELETE FROM @extschema@.sno_registry_epoch;
    INSERT INTO @extschema@.sno_registry_epoch VALUES (here.*);
    RETURN here;
END
$function$;
COMMENT ON FUNCTION sno_registry_epoch(interval, boolean, boolean) IS
    'the partition registry''s current epoch, begun anew when the registry may have lost rows '
    '(called by the lease functions)';
REVOKE EXECUTE ON FUNCTION sno_registry_epoch(interval, boolean, boolean) FROM PUBLIC;

-- The DBA's word that the registry lost rows in a way PostgreSQL does not show (rows deleted or
-- edited by hand, a storage snapshot rolled back under a running server): a new epoch begins.
CREATE FUNCTION sno_registry_restored(OUT epoch bigint, OUT floor timestamptz)
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    SELECT e.epoch, e.floor FROM @extschema@.sno_registry_epoch(by_hand => true) e;
    END;
COMMENT ON FUNCTION sno_registry_restored() IS
    'begins a new registry epoch by hand (after rows were lost in a way PostgreSQL does not '
    'show): partitions not renewed since stay after its floor';
REVOKE EXECUTE ON FUNCTION sno_registry_restored() FROM PUBLIC;

-- Reserves a partition that is used outside the registry, so that it is never leased: a backfill
-- partition (sno.backfill_partition) or one set by hand (sno.partition) on a server not yet
-- moved to the registry. A partition with a lease row was used under the registry: 55000. Once
-- the registry may have lost rows (an epoch with a floor), a partition without a row may have
-- been leased too: 55000 unless the DBA says it is known unused (known_unused). Reserving again
-- takes the backfill permission from the instance that had it (its server is gone: a crash
-- restart or a copy does not get it back by itself).
CREATE FUNCTION sno_partition_reserve("partition" integer, reason text,
    known_unused boolean DEFAULT false)
    RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    epoch_now @extschema@.sno_registry_epoch;
BEGIN
    IF "partition" NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno lease: partition % is not a partition (0..65535)', "partition"
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    epoch_now := @extschema@.sno_registry_epoch();
    LOCK TABLE @extschema@.sno_partition_leases IN SHARE ROW EXCLUSIVE MODE;
    IF EXISTS (SELECT FROM @extschema@.sno_partition_leases l
               WHERE l."partition" = sno_partition_reserve."partition") THEN
        RAISE EXCEPTION 'sno lease: partition % was leased, and cannot be reserved', "partition"
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'IDs of it were made under the registry: another use would repeat them.',
                  HINT = 'Reserve a partition that was never leased.';
    END IF;
    IF epoch_now.floor IS NOT NULL AND NOT known_unused THEN
        RAISE EXCEPTION 'sno lease: the registry may have lost leases, and partition % may have '
                        'been one', "partition"
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Epoch %s began because %s.', epoch_now.epoch, epoch_now.reason),
                  HINT = 'Reserve it with known_unused => true once no server has IDs of it '
                         '(sno_partition() of their keys).';
    END IF;
    INSERT INTO @extschema@.sno_partition_reservations AS r VALUES ("partition", reason)
    ON CONFLICT ON CONSTRAINT sno_partition_reservations_pkey
    DO UPDATE SET reason = excluded.reason, backfill_instance = NULL;
END
$function$;
COMMENT ON FUNCTION sno_partition_reserve(integer, text, boolean) IS
    'keeps a partition used outside the registry (a backfill partition, sno.partition set by '
    'hand) from ever being leased; refuses one that was leased, or may have been';
REVOKE EXECUTE ON FUNCTION sno_partition_reserve(integer, text, boolean) FROM PUBLIC;

-- Whether `instance` may make backfill IDs in `backfill_partition`: a reserved partition, whose
-- permission goes to the first instance that asks, and passes on only to the next start of its
-- data directory (resume: claim) or by reserving it again. Two servers with one backfill
-- partition (a clone keeps the setting and the backfill cursors) would repeat each other's IDs.
CREATE FUNCTION sno_backfill_permitted(backfill_partition integer, instance uuid)
    RETURNS boolean
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    WITH taken AS (
        UPDATE @extschema@.sno_partition_reservations r
        SET backfill_instance = sno_backfill_permitted.instance
        WHERE r."partition" = sno_backfill_permitted.backfill_partition
          AND (r.backfill_instance IS NULL
               OR r.backfill_instance = sno_backfill_permitted.instance)
        RETURNING 1)
    SELECT EXISTS (SELECT FROM taken);
    END;
COMMENT ON FUNCTION sno_backfill_permitted(integer, uuid) IS
    'whether a server instance may make backfill IDs in a reserved partition (one instance at '
    'a time; called by sno_lease_claim and sno_lease_renew)';
REVOKE EXECUTE ON FUNCTION sno_backfill_permitted(integer, uuid) FROM PUBLIC;

-- Claims are serialised by a lock on the table, so servers starting at once never get the same
-- partition. In order: the lease of this instance (its lease holder restarted); the lease its
-- data directory gave back at its last clean shutdown (resume: the secret it left there), at
-- once; the partition it asks for (its state file's) if nobody holds it and no ID of it can be
-- ahead; the lowest partition never leased; the one whose IDs ended earliest. A live lease of
-- another instance is never taken: a promoted standby, a clone or a restored copy gets another
-- partition at once. start_after: the claimant makes no ID at or before it (the previous
-- holder's used_through, and the epoch's floor for a row not renewed in this epoch); the row
-- keeps it (started_after), so that a restart that gets the partition back stays after it too.
-- Reserved partitions are never leased; backfill_reserved says whether the claimant's backfill
-- partition is reserved (sno_generate_at uses it only then).
CREATE FUNCTION sno_lease_claim(instance uuid, resume bytea, wanted integer,
    lease_ms bigint, may_use_until_ms bigint, system_identifier bigint, timeline integer,
    port integer, backfill_partition integer,
    OUT "partition" integer, OUT expires_at timestamptz, OUT start_after_ms bigint,
    OUT backfill_reserved boolean)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    granted interval := lease_ms * interval '1 millisecond';
    use_until timestamptz := to_timestamp(may_use_until_ms / 1000.0);
    now_here timestamptz;
    epoch_now @extschema@.sno_registry_epoch;
    held @extschema@.sno_partition_leases;
    start_after timestamptz;
BEGIN
    PERFORM @extschema@.sno_lease_check_arguments(instance, system_identifier, timeline, port,
                                                  lease_ms, may_use_until_ms, wanted);
    PERFORM @extschema@.sno_registry_epoch(granted);
    LOCK TABLE @extschema@.sno_partition_leases IN SHARE ROW EXCLUSIVE MODE;
    SELECT * INTO epoch_now FROM @extschema@.sno_registry_epoch;
    now_here := clock_timestamp();
    PERFORM @extschema@.sno_lease_check_clock(use_until, now_here, granted);
    -- This instance's own lease (the newest, should a restored row name it too).
    SELECT * INTO held FROM @extschema@.sno_partition_leases l
    WHERE l.instance = sno_lease_claim.instance
    ORDER BY l.renewed_at DESC LIMIT 1;
    IF FOUND THEN
        "partition" := held."partition";
        start_after := greatest(held.started_after,
                                CASE WHEN held.epoch < epoch_now.epoch THEN epoch_now.floor END);
    END IF;
    -- The lease this data directory gave back at its last clean shutdown.
    IF "partition" IS NULL AND resume IS NOT NULL THEN
        SELECT * INTO held FROM @extschema@.sno_partition_leases l
        WHERE l.resume_hash = sha256(resume) AND l.expires_at <= now_here;
        IF FOUND THEN
            "partition" := held."partition";
            start_after := CASE WHEN held.epoch = epoch_now.epoch THEN held.started_after
                                ELSE greatest(held.started_after, held.used_through,
                                              epoch_now.floor) END;
            -- The same data directory: its backfill permission comes with it.
            UPDATE @extschema@.sno_partition_reservations r SET backfill_instance = instance
            WHERE r.backfill_instance = held.instance;
        END IF;
    END IF;
    -- The partition it asks for, if no lease holds it and none of its IDs can be ahead.
    IF "partition" IS NULL AND wanted IS NOT NULL AND NOT EXISTS (
            SELECT FROM @extschema@.sno_partition_reservations r WHERE r."partition" = wanted) THEN
        SELECT * INTO held FROM @extschema@.sno_partition_leases l WHERE l."partition" = wanted;
        IF NOT FOUND THEN
            "partition" := wanted;
            start_after := epoch_now.floor;
        ELSIF held.expires_at <= now_here AND held.used_through <= now_here THEN
            "partition" := wanted;
            start_after := greatest(held.used_through,
                                    CASE WHEN held.epoch < epoch_now.epoch THEN epoch_now.floor END);
        END IF;
    END IF;
    -- The lowest partition never leased nor reserved.
    IF "partition" IS NULL THEN
        SELECT p INTO "partition" FROM generate_series(0, 65535) AS p
        WHERE NOT EXISTS (SELECT FROM @extschema@.sno_partition_leases l WHERE l."partition" = p)
          AND NOT EXISTS (SELECT FROM @extschema@.sno_partition_reservations r
                          WHERE r."partition" = p)
        ORDER BY p LIMIT 1;
        start_after := epoch_now.floor;
    END IF;
    -- The ended lease whose IDs end earliest.
    IF "partition" IS NULL THEN
        SELECT l."partition", greatest(l.used_through,
                                       CASE WHEN l.epoch < epoch_now.epoch THEN epoch_now.floor END)
        INTO "partition", start_after
        FROM @extschema@.sno_partition_leases l
        WHERE l.expires_at <= now_here
          AND NOT EXISTS (SELECT FROM @extschema@.sno_partition_reservations r
                          WHERE r."partition" = l."partition")
        ORDER BY 2, 1 LIMIT 1;
    END IF;
    IF "partition" IS NULL THEN
        RAISE EXCEPTION 'sno lease: all 65536 partitions are held by live leases or reserved'
            USING ERRCODE = 'program_limit_exceeded';
    END IF;
    INSERT INTO @extschema@.sno_partition_leases AS l VALUES ("partition", instance,
        system_identifier, timeline, inet_client_addr(), port, granted, now_here, now_here,
        now_here + granted, use_until, start_after, epoch_now.epoch, NULL)
    ON CONFLICT ON CONSTRAINT sno_partition_leases_pkey DO UPDATE
    SET instance = excluded.instance, system_identifier = excluded.system_identifier,
        timeline = excluded.timeline, address = excluded.address, port = excluded.port,
        lease = excluded.lease,
        claimed_at = CASE WHEN l.instance = excluded.instance THEN l.claimed_at
                          ELSE excluded.claimed_at END,
        renewed_at = excluded.renewed_at, expires_at = excluded.expires_at,
        used_through = greatest(l.used_through, excluded.used_through),
        started_after = excluded.started_after, epoch = excluded.epoch, resume_hash = NULL
    RETURNING l.expires_at INTO expires_at;
    PERFORM @extschema@.sno_registry_note_lease(granted);
    start_after_ms := (extract(epoch FROM start_after) * 1000)::bigint;
    backfill_reserved := coalesce(@extschema@.sno_backfill_permitted(backfill_partition,
                                                                      instance), false);
END
$function$;
COMMENT ON FUNCTION sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer,
    integer, integer) IS
    'a server with sno.partition_source = ''registry'' takes a partition for lease; '
    'start_after_ms, when set, is the time its IDs stay after (docs/generator.md)';
REVOKE EXECUTE ON FUNCTION sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer,
    integer, integer) FROM PUBLIC;

-- Refuses (22023) a claim or renewal whose may_use_until runs ahead of the registry's clock by
-- more than twice the lease and 5 seconds: the holder's clock is ahead of the registry's by
-- more than its lease and 5 seconds, and an epoch's floor could not cover its IDs.
CREATE FUNCTION sno_lease_check_clock(may_use_until timestamptz, now_here timestamptz,
    lease interval)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $function$
BEGIN
    IF may_use_until > now_here + 2 * lease + interval '5 seconds' THEN
        RAISE EXCEPTION 'sno lease: this server''s clock is % s ahead of the registry''s',
                        round(extract(epoch FROM may_use_until - lease - now_here))
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The registry allows a server''s clock to run ahead of its own by at '
                           'most the lease and 5 seconds.',
                  HINT = 'Set the clocks right (NTP); the server claims again by itself.';
    END IF;
END
$function$;
COMMENT ON FUNCTION sno_lease_check_clock(timestamptz, timestamptz, interval) IS
    'raises 22023 when a server''s clock runs ahead of the registry''s by more than its lease '
    'and 5 seconds';

-- Records the longest lease granted: the floor of the next epoch is twice it and 5 seconds.
CREATE FUNCTION sno_registry_note_lease(lease interval)
    RETURNS void
    LANGUAGE sql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
    UPDATE @extschema@.sno_registry_epoch e SET longest_lease = sno_registry_note_lease.lease
    WHERE e.longest_lease < sno_registry_note_lease.lease;
    END;
COMMENT ON FUNCTION sno_registry_note_lease(interval) IS
    'records the longest lease the registry granted (the next epoch''s floor is twice it and 5 '
    'seconds)';
REVOKE EXECUTE ON FUNCTION sno_registry_note_lease(interval) FROM PUBLIC;

-- Extends the lease of this instance from now, by the registry's clock, and raises 55000 if
-- another instance holds the partition. An expired lease that no other server took is extended
-- too: its holder stopped at its fence, and goes on from there. A lease the registry has no row
-- of (it lost rows) is written again from what the holder sends, and a new epoch begins. Where
-- the registry cannot know that nobody else had the partition meanwhile (its row is missing, or
-- is of an earlier epoch and had ended), the holder stays after the epoch's floor from now on:
-- start_after_ms, NULL otherwise.
CREATE FUNCTION sno_lease_renew("partition" integer, instance uuid, lease_ms bigint,
    may_use_until_ms bigint, started_after_ms bigint, system_identifier bigint,
    timeline integer, port integer, backfill_partition integer,
    OUT renewed_until timestamptz, OUT backfill_reserved boolean, OUT start_after_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
DECLARE
    granted interval := lease_ms * interval '1 millisecond';
    use_until timestamptz := to_timestamp(may_use_until_ms / 1000.0);
    floor_sent timestamptz := to_timestamp(started_after_ms / 1000.0);
    epoch_now @extschema@.sno_registry_epoch;
    raised timestamptz;
BEGIN
    PERFORM @extschema@.sno_lease_check_arguments(instance, system_identifier, timeline, port,
                                                  lease_ms, may_use_until_ms, "partition");
    IF "partition" IS NULL THEN
        RAISE EXCEPTION 'sno lease: partition must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    epoch_now := @extschema@.sno_registry_epoch(granted);
    PERFORM @extschema@.sno_lease_check_clock(use_until, clock_timestamp(), granted);
    IF NOT EXISTS (SELECT FROM @extschema@.sno_partition_leases l
                   WHERE l."partition" = sno_lease_renew."partition") THEN
        -- The registry lost the row: a new epoch, then the row again, under the claims' lock,
        -- taken first: a claim holds it when it writes the epoch's record (the longest lease).
        LOCK TABLE @extschema@.sno_partition_leases IN SHARE ROW EXCLUSIVE MODE;
        epoch_now := @extschema@.sno_registry_epoch(granted, lost_row => true);
        IF EXISTS (SELECT FROM @extschema@.sno_partition_reservations r
                   WHERE r."partition" = sno_lease_renew."partition") THEN
            RAISE EXCEPTION 'sno lease: partition % is reserved', "partition"
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'The registry lost its row, and the partition was reserved since.',
                      HINT = 'The server stops generating with it and claims a partition again.';
        END IF;
        raised := epoch_now.floor;
        INSERT INTO @extschema@.sno_partition_leases VALUES ("partition", instance,
            system_identifier, timeline, inet_client_addr(), port, granted, clock_timestamp(),
            clock_timestamp(), clock_timestamp() + granted, use_until,
            greatest(floor_sent, raised), epoch_now.epoch, NULL)
        ON CONFLICT ON CONSTRAINT sno_partition_leases_pkey DO NOTHING;
    ELSE
        SELECT epoch_now.floor INTO raised FROM @extschema@.sno_partition_leases l
        WHERE l."partition" = sno_lease_renew."partition"
          AND l.instance = sno_lease_renew.instance
          AND l.epoch < epoch_now.epoch AND l.expires_at <= clock_timestamp();
    END IF;
    UPDATE @extschema@.sno_partition_leases l
    SET renewed_at = clock_timestamp(), expires_at = clock_timestamp() + granted,
        lease = granted, used_through = greatest(l.used_through, use_until),
        started_after = greatest(l.started_after, floor_sent, raised),
        epoch = epoch_now.epoch, address = inet_client_addr(), resume_hash = NULL
    WHERE l."partition" = sno_lease_renew."partition" AND l.instance = sno_lease_renew.instance
    RETURNING l.expires_at INTO renewed_until;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sno lease: partition % is held by another server', "partition"
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Its lease expired and another server claimed it.',
                  HINT = 'The server stops generating with it and claims a partition again.';
    END IF;
    PERFORM @extschema@.sno_registry_note_lease(granted);
    backfill_reserved := coalesce(@extschema@.sno_backfill_permitted(backfill_partition,
                                                                      instance), false);
    start_after_ms := (extract(epoch FROM raised) * 1000)::bigint;
END
$function$;
COMMENT ON FUNCTION sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint, integer,
    integer, integer) IS
    'a server extends its lease of a partition; raises 55000 when another server holds it now';
REVOKE EXECUTE ON FUNCTION sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint,
    integer, integer, integer) FROM PUBLIC;

-- Ends the lease now (a clean shutdown), keeping the row: the next holder starts after
-- used_through, except the next start of the same data directory, which shows the secret
-- `resume` (the row keeps only its SHA-256) and takes it back at once. Returns whether this
-- instance held it.
CREATE FUNCTION sno_lease_release("partition" integer, instance uuid, resume bytea)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $function$
BEGIN
    -- A new epoch begins here as anywhere; the row keeps its own: a release does not say what the
    -- holder used (a renewal lost with the row may have said more), so it confirms nothing.
    PERFORM @extschema@.sno_registry_epoch();
    UPDATE @extschema@.sno_partition_leases l
    SET expires_at = least(l.expires_at, clock_timestamp()),
        resume_hash = sha256(sno_lease_release.resume)
    WHERE l."partition" = sno_lease_release."partition"
      AND l.instance = sno_lease_release.instance;
    RETURN FOUND;
END
$function$;
COMMENT ON FUNCTION sno_lease_release(integer, uuid, bytea) IS
    'a server gives up its lease of a partition now (at a clean shutdown); the row stays, so '
    'that the next holder starts after the last time it could have used';
REVOKE EXECUTE ON FUNCTION sno_lease_release(integer, uuid, bytea) FROM PUBLIC;
