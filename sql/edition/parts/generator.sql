
-- The generator: one per database, no shared memory -------------------------------------------
--
-- The clock is a sequence, because a sequence is the one state PostgreSQL lets SQL change
-- outside transactions: a value nextval handed out is never handed out again, whether the
-- caller commits, rolls back or the server crashes, and a standby replays it. Each value is
--     (time units << 1 | tick-tock) << 23 | counter
-- so that its top 40 bits are the ID's first 5 bytes and its low 16 the ID's sequence. nextval
-- alone makes an ID while the value's unit is not behind the clock and its counter is below
-- 65,536. Otherwise the caller moves the clock on (sno_sql.advance_clock), under a lock
-- (sno_sql.with_generator_lock): to the clock's unit, or to the unit after the last one taken
-- when the clock is behind it (stepped back) or the unit's 65,536 are spent. A move never goes
-- below a value already taken, so the clock never repeats; while the server's clock is behind
-- it, IDs carry the clock's time (they run ahead of real time, a unit per 65,536 IDs, until the
-- clock catches up). The counter's 23 bits leave room for over 8 million values taken and thrown away in one
-- unit while a mover waits for the lock, before one could reach the tick-tock bit.
--
-- The tick-tock bit marks a generator's run: it flips when the server starts (a restart, a
-- crash recovery: values a crash lost were never flushed and may come back), when the WAL
-- timeline changes (a promoted standby, a point-in-time recovery: the old primary may have
-- made IDs after the last WAL the standby received, and may go on) and when sno_sql.configure
-- runs (a copy of the database, whose original goes on). IDs of the new run never equal those
-- of the old in the same units. Like native sno's, the bit has two values: a third server that
-- generates beside the two (a second promoted standby) shares one with one of them.
--
-- A session reads the partition and the run (sno_sql.begin_session) and keeps them for 256
-- units of the clock, about a second; sno_sql.configure moves the clock 256 units past where it
-- was, so that no session ever makes an ID of a new configuration with the partition it read
-- before (two configures in a row would bring its bit back; a role that calls nextval in a
-- loop can carry the counter into the bit).
--
-- Every function that runs as its caller writes each operator with operands of exactly the
-- types of a pg_catalog operator (so 65535::bigint, not 65535): PostgreSQL looks for an exact
-- match along the caller's search_path, and where pg_catalog has none, an operator that a role
-- created in a schema on that path (public) would be taken.

CREATE TABLE sno_sql.configuration (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    "partition" integer NOT NULL CHECK ("partition" BETWEEN 0 AND 65535),
    database_fingerprint text NOT NULL,
    configured_at timestamptz NOT NULL DEFAULT now(),
    configured_by name NOT NULL DEFAULT current_user
);
COMMENT ON TABLE sno_sql.configuration IS
    'this database''s partition and the database it was configured in (sno_sql.configure writes it; pg_dump keeps it)';
COMMENT ON COLUMN sno_sql.configuration.singleton IS 'always true: one row';
COMMENT ON COLUMN sno_sql.configuration."partition" IS 'the partition of every ID sno_sql.generate makes here';
COMMENT ON COLUMN sno_sql.configuration.database_fingerprint IS
    'sno_sql.database_fingerprint() where it was configured: a copy of the database has another and refuses to generate';
COMMENT ON COLUMN sno_sql.configuration.configured_at IS 'when sno_sql.configure was run';
COMMENT ON COLUMN sno_sql.configuration.configured_by IS 'the role that ran sno_sql.configure';

-- The run is one sequence value, (run << 1) | tick-tock, so that a new run and its bit are one
-- write: a move cancelled half-way (a statement timeout, a crash) can never leave the run
-- recorded and the bit unflipped, or flip it twice.
CREATE SEQUENCE sno_sql.clock AS bigint MINVALUE 0 START 0 NO CYCLE;
CREATE SEQUENCE sno_sql.run AS bigint MINVALUE 0 START 0 NO CYCLE;
COMMENT ON SEQUENCE sno_sql.clock IS
    'the generator''s clock: (time units << 1 | tick-tock) << 23 | counter (never set it by hand)';
COMMENT ON SEQUENCE sno_sql.run IS
    'the generator''s run (a hash of the WAL timeline and the server''s start) << 1 | its tick-tock bit';

-- nextval on the clock (USAGE) is every role's; setval (UPDATE) none's: only the functions
-- below, as their owner, move it, and only forward.
REVOKE ALL ON TABLE sno_sql.configuration FROM PUBLIC;
REVOKE ALL ON SEQUENCE sno_sql.clock, sno_sql.run FROM PUBLIC;
GRANT USAGE ON SEQUENCE sno_sql.clock TO PUBLIC;
-- (Operators of equal precedence, such as << and |, group from the left in PostgreSQL:
-- every composition below is parenthesized.)

-- What PostgreSQL shows of which database this is: the cluster's system identifier (initdb
-- makes a new one; physical copies keep it) and the database's oid (a restored dump gets the
-- oid its CREATE DATABASE got). Where pg_control_system() is not permitted, the identifier
-- reads "unknown" and only the oid tells copies apart.
CREATE FUNCTION sno_sql.database_fingerprint() RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    system_identifier text;
BEGIN
    BEGIN
        SELECT c.system_identifier::text INTO system_identifier FROM pg_control_system() AS c;
    EXCEPTION WHEN insufficient_privilege OR undefined_function OR feature_not_supported THEN
        system_identifier := 'unknown';
    END;
    RETURN format('system %s, database %s', system_identifier,
        (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database()));
END
$$;
COMMENT ON FUNCTION sno_sql.database_fingerprint() IS
    'which database this is, as PostgreSQL shows it: the cluster''s system identifier and the database''s oid';

-- This server's run: the WAL timeline it writes (it grows at each promotion and point-in-time
-- recovery; 0 where the service does not show it) and when it started, hashed into 61 bits.
CREATE FUNCTION sno_sql.current_run() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    timeline bigint;
BEGIN
    IF pg_is_in_recovery() THEN
        RAISE EXCEPTION 'sno_sql cannot generate IDs on a standby'
            USING ERRCODE = 'read_only_sql_transaction',
                  HINT = 'Generate on the primary; a standby''s IDs come from it.';
    END IF;
    BEGIN
        timeline := ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint;
    EXCEPTION WHEN insufficient_privilege OR undefined_function OR feature_not_supported THEN
        timeline := 0;
    END;
    RETURN hashtextextended(format('timeline %s, started %s', timeline,
        to_char(pg_postmaster_start_time() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')), 0)
        & 2305843009213693951::bigint;
END
$$;
COMMENT ON FUNCTION sno_sql.current_run() IS
    'this server''s run: its WAL timeline (0 where the service does not show it) and its start, hashed';

-- The 4 ms unit of the server's clock (clock_timestamp(), not the transaction's start).
CREATE FUNCTION sno_sql.clock_unit() RETURNS bigint
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN floor((date_part('epoch', clock_timestamp()) - 1262304000) * 250)::bigint;
COMMENT ON FUNCTION sno_sql.clock_unit() IS 'the 4 ms unit since 2010 of the server''s clock now';

-- Whether a 4 ms unit is not yet past by the server's clock: the clock is before the unit's
-- end, in seconds since 1970. (A third of clock_unit()'s instructions, which reads 'epoch' and
-- works out 1970 at each call. The end as a double is within 0.2 us of the exact one, and
-- to_timestamp rounds it to the microsecond, which is clock_timestamp()'s resolution.)
CREATE FUNCTION sno_sql.unit_not_past(unit bigint) RETURNS boolean
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN clock_timestamp()
        < to_timestamp(unit::double precision * 0.004::double precision + 1262304000.004::double precision);
COMMENT ON FUNCTION sno_sql.unit_not_past(bigint) IS
    'whether this 4 ms unit since 2010 has not yet ended by the server''s clock (internal)';

-- Whether a value of the clock makes a fresh ID in the tick-tock bit given: its counter within
-- the unit's 65,536 (bits 16 to 22 clear), its bit the one given (bit 23), its unit not past.
-- (move_clock's test of a move that another session may have made already.)
CREATE FUNCTION sno_sql.clock_value_fresh(value bigint, tick bigint) RETURNS boolean
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN (value & 16711680::bigint) = (tick << 23) AND sno_sql.unit_not_past(value >> 24);
COMMENT ON FUNCTION sno_sql.clock_value_fresh(bigint, bigint) IS
    'whether a value of the generator''s clock makes a fresh ID in this tick-tock bit now (internal)';

-- A session's state, which sno_sql.begin_session works out and the session keeps in the
-- setting sno_sql.session:
--     (until << 24) | (tick-tock << 23) | partition
-- laid out as the clock's values are, so that one test reads it: the session's IDs take its
-- partition and bit while the clock's unit is below until, the clock's unit when the session
-- read them plus 256 (about a second); from there it reads them again. sno_sql.configure moves
-- the clock 256 units past where it was, so that no session ever takes a value of the new
-- configuration with the partition it read before, however many times configure runs, whatever
-- bit the value has (a role calling nextval can carry the counter into the bit).
--
-- Whether a value makes an ID in a session of this state (generate's one test): fresh, in the
-- session's bit, before its until.
CREATE FUNCTION sno_sql.clock_value_usable(value bigint, session_state bigint) RETURNS boolean
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN (value & 16711680::bigint) = (session_state & 8388608::bigint)
        AND value < (session_state & (-16777216)::bigint)
        AND sno_sql.unit_not_past(value >> 24);
COMMENT ON FUNCTION sno_sql.clock_value_usable(bigint, bigint) IS
    'whether a value of the generator''s clock makes an ID now in a session of this state (internal)';

-- The ID of a value of the clock, in a session of this state: its first 8 bytes the value's top
-- 40 bits (unit, tick-tock), the metabyte and the session's partition, then the value's 16-bit
-- counter and the 6 zero bytes (value << 48). Straight from the two integers rather than through
-- from_bits: 15 to 17 have only int8send and the uuid's text input, 18 casts bigint to bytea, 19
-- bytea to uuid.
CREATE FUNCTION sno_sql.id_of_clock_value(value bigint, meta integer, session_state bigint)
    RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN encode(int8send(((value >> 23) << 24) | (meta::bigint << 16) | (session_state & 65535::bigint))
        || int8send(value << 48), 'hex')::uuid;
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::integer >= 190000 THEN
        CREATE OR REPLACE FUNCTION sno_sql.id_of_clock_value(value bigint, meta integer, session_state bigint)
            RETURNS sno_sql.sno
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            RETURN ((((value >> 23) << 24) | (meta::bigint << 16) | (session_state & 65535::bigint))::bytea
                || (value << 48)::bytea)::uuid;
    ELSIF pg_catalog.current_setting('server_version_num')::integer >= 180000 THEN
        CREATE OR REPLACE FUNCTION sno_sql.id_of_clock_value(value bigint, meta integer, session_state bigint)
            RETURNS sno_sql.sno
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            RETURN encode((((value >> 23) << 24) | (meta::bigint << 16) | (session_state & 65535::bigint))::bytea
                || (value << 48)::bytea, 'hex')::uuid;
    END IF;
END
$$;
COMMENT ON FUNCTION sno_sql.id_of_clock_value(bigint, integer, bigint) IS
    'the ID of a value of the generator''s clock, with this metabyte, in a session of this state (internal)';

-- Moves the clock to a fresh unit of the run's tick-tock bit (see the head of this part), past
-- after_unit. Only forward: the new value is above every value taken.
CREATE FUNCTION sno_sql.move_clock(after_unit bigint DEFAULT -1) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    -- The value nextval returns next: its unit, bit and counter say whether it is fresh.
    next bigint := coalesce(pg_sequence_last_value('sno_sql.clock'::regclass), -1) + 1;
    now_unit bigint := sno_sql.clock_unit();
    tick bigint := coalesce(pg_sequence_last_value('sno_sql.run'::regclass), 0) & 1;
    unit bigint;
BEGIN
    IF sno_sql.clock_value_fresh(next, tick) AND next >> 24 > after_unit THEN
        RETURN; -- another session moved it while this one waited for the lock
    END IF;
    -- Two units on from a clock ahead of the server's: the values that waiting sessions (or a
    -- role calling nextval) take meanwhile may carry into the next unit.
    unit := greatest(now_unit, (next >> 24) + 2, after_unit + 1);
    IF unit > 549755813887 THEN
        RAISE EXCEPTION 'sno_sql''s clock is past 2079-09-07 15:47:35.548+00, the last time a sno holds'
            USING ERRCODE = 'datetime_field_overflow';
    END IF;
    -- The next nextval returns the new unit's counter 0.
    PERFORM setval('sno_sql.clock'::regclass, (((unit << 1) | tick) << 23) - 1, true);
END
$$;
REVOKE EXECUTE ON FUNCTION sno_sql.move_clock(bigint) FROM PUBLIC;
COMMENT ON FUNCTION sno_sql.move_clock(bigint) IS
    'moves the generator''s clock forward to a fresh unit of the run''s tick-tock bit, past after_unit (internal; call under the generator''s lock)';

-- The lock that serializes moves of the clock: sno_sql.generator_lock in EXCLUSIVE mode, taken
-- in a subtransaction that then ends in an error of its own making. Its end lets the lock go
-- at once (a subtransaction that commits would pass it on to the caller's transaction, held
-- to its end), and what was done to the sequences stays (they ignore rollbacks). A table lock
-- writes no WAL (a row lock would, at every move). Not an advisory lock: any role may take
-- any advisory lock and hold it, and every session's generator would wait behind it; this
-- table only the owner may lock.
CREATE TABLE sno_sql.generator_lock (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton));
INSERT INTO sno_sql.generator_lock DEFAULT VALUES;
REVOKE ALL ON TABLE sno_sql.generator_lock FROM PUBLIC;
COMMENT ON TABLE sno_sql.generator_lock IS
    'one row, locked while the generator''s clock moves (so that two moves never interleave)';
COMMENT ON COLUMN sno_sql.generator_lock.singleton IS 'always true: one row';

CREATE FUNCTION sno_sql.with_generator_lock(run bigint, new_run boolean,
    after_unit bigint DEFAULT -1) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    recorded bigint;
BEGIN
    BEGIN
        LOCK TABLE sno_sql.generator_lock IN EXCLUSIVE MODE;
        recorded := pg_sequence_last_value('sno_sql.run'::regclass);
        IF run IS NOT NULL AND (new_run OR recorded IS NULL OR recorded >> 1 <> run) THEN
            -- A first run keeps the bit (0); another flips it. One write.
            PERFORM setval('sno_sql.run'::regclass,
                (run << 1) | CASE WHEN recorded IS NULL THEN 0 ELSE 1 - (recorded & 1) END, true);
        END IF;
        PERFORM sno_sql.move_clock(after_unit);
        RAISE EXCEPTION USING ERRCODE = 'SNOQ1';  -- the move is done: end the subtransaction
    EXCEPTION WHEN SQLSTATE 'SNOQ1' THEN
        NULL;
    END;
END
$$;
REVOKE EXECUTE ON FUNCTION sno_sql.with_generator_lock(bigint, boolean, bigint) FROM PUBLIC;
COMMENT ON FUNCTION sno_sql.with_generator_lock(bigint, boolean, bigint) IS
    'moves the clock under the generator''s lock; with a run, begins it if it is new (internal)';

-- What sno_sql.generate calls when the clock is behind or its unit spent: every role may.
CREATE FUNCTION sno_sql.advance_clock() RETURNS void
    LANGUAGE sql VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    BEGIN ATOMIC
        SELECT sno_sql.with_generator_lock(NULL, false);
    END;
COMMENT ON FUNCTION sno_sql.advance_clock() IS
    'moves the generator''s clock to a fresh unit, never back (called by sno_sql.generate)';

-- Before a session's first ID, and again when its state's until is reached (about a second
-- on): this database's partition, refused in a copy of the database and before
-- sno_sql.configure; a new run begins here (the first session after a start or a promotion).
-- Returns the session's state (see sno_sql.clock_value_usable), which the session keeps in the
-- setting sno_sql.session.
CREATE FUNCTION sno_sql.begin_session() RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    configured sno_sql.configuration;
    here text := sno_sql.database_fingerprint();
    run bigint := sno_sql.current_run();
    recorded bigint;
    state bigint;
BEGIN
    BEGIN
        -- A configure in progress has begun its run already (sequences ignore transactions)
        -- and holds its new partition until it commits: wait for it to end, so that the
        -- partition and the run read here are of one configuration, and keep configure from
        -- starting until they are read (SHARE conflicts with its ROW EXCLUSIVE). A
        -- subtransaction, ended below by an error of its own making, lets the lock go at once.
        LOCK TABLE sno_sql.configuration IN SHARE MODE;
        -- In REPEATABLE READ and SERIALIZABLE the transaction's snapshot may be older than a
        -- configure that has committed since, whose run has begun (sequences ignore snapshots):
        -- the row lock fails such a read with a serialization failure (40001), as any
        -- concurrent update does, and the retried transaction reads the new partition. (In READ
        -- COMMITTED each statement reads the latest, after the table lock; no row lock, which
        -- would cost a transaction ID.)
        IF current_setting('transaction_isolation') = 'read committed' THEN
            SELECT * INTO configured FROM sno_sql.configuration;
        ELSE
            SELECT * INTO configured FROM sno_sql.configuration FOR SHARE;
        END IF;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'sno_sql has no partition in database "%"', current_database()
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Run SELECT sno_sql.configure(PARTITION) as the owner of sno_sql, with a partition that no other database or server uses.';
        END IF;
        IF configured.database_fingerprint IS DISTINCT FROM here THEN
            RAISE EXCEPTION 'sno_sql''s partition % was configured in another database', configured."partition"
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('It was configured in %s on %s; this is %s: a restored dump or a copy of that database, or the database after pg_upgrade.',
                          configured.database_fingerprint, configured.configured_at, here),
                      HINT = 'Give this database a partition of its own with SELECT sno_sql.configure(PARTITION); the same partition only if the database it came from makes no more IDs (after pg_upgrade: the same).';
        END IF;
        recorded := pg_sequence_last_value('sno_sql.run'::regclass);
        -- The generator's lock only when there is something to do: a new run, or a clock in
        -- another bit.
        IF recorded IS NULL OR recorded >> 1 <> run
            OR ((coalesce(pg_sequence_last_value('sno_sql.clock'::regclass), -1) + 1) >> 23) & 1
                <> recorded & 1 THEN
            PERFORM sno_sql.with_generator_lock(run, false);
            recorded := pg_sequence_last_value('sno_sql.run'::regclass);
        END IF;
        -- until: 256 units past the clock's next value, read last (configure, which moves the
        -- clock past it, cannot start before this block ends).
        state := (least(((coalesce(pg_sequence_last_value('sno_sql.clock'::regclass), -1) + 1) >> 24) + 256,
                         549755813887) << 24)
            | ((recorded & 1) << 23) | configured."partition"::bigint;
        RAISE EXCEPTION USING ERRCODE = 'SNOQ2';  -- read: end the subtransaction
    EXCEPTION WHEN SQLSTATE 'SNOQ2' THEN
        NULL;
    END;
    -- (After the block: a setting made in a subtransaction that ends in an error goes with it.)
    PERFORM set_config('sno_sql.session', state::text, false);
    RETURN state;
END
$$;
COMMENT ON FUNCTION sno_sql.begin_session() IS
    'checks this database''s partition before a session''s first ID (and about every second after) and begins a new run if the server''s is (called by sno_sql.generate)';

-- What sno_sql.generate does when its one test fails on the value it took: a bad metabyte, a
-- session's first ID or the end of its state's until, a clock behind the server's or a unit
-- spent, another run. Takes values until one makes an ID (the first, when only the state was
-- to be read again).
CREATE FUNCTION sno_sql.generate_with_checks(meta integer, value bigint) RETURNS sno_sql.sno
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    AS $$
DECLARE
    session_state bigint := NULLIF(pg_catalog.current_setting('sno_sql.session', true), '')::bigint;
BEGIN
    IF meta < 0 OR meta > 255 THEN
        RAISE EXCEPTION 'sno meta % is out of range 0..255', meta USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    LOOP
        IF session_state IS NULL OR value >= (session_state & (-16777216)::bigint)
            OR (value & 8388608::bigint) <> (session_state & 8388608::bigint) THEN
            -- The session's first ID, its until reached, or a value of another run (one that
            -- began since, or a value taken before begin_session moved the clock): read the
            -- partition and the run again.
            session_state := sno_sql.begin_session();
        END IF;
        EXIT WHEN sno_sql.clock_value_usable(value, session_state);
        IF (value & 8388608::bigint) = (session_state & 8388608::bigint) THEN
            -- Behind the server's clock, or the unit's 65,536 spent: move the clock on.
            PERFORM sno_sql.advance_clock();
        END IF;  -- (else a value of the run before, taken before begin_session: the next)
        value := pg_catalog.nextval('sno_sql.clock'::pg_catalog.regclass);
    END LOOP;
    RETURN sno_sql.id_of_clock_value(value, meta, session_state);
END
$$;
COMMENT ON FUNCTION sno_sql.generate_with_checks(integer, bigint) IS
    'sno_sql.generate when its one test fails on the value it took: checks, begins the session, moves the clock (internal)';

-- One nextval, the session's state, one test: an ID. Anything else goes through
-- sno_sql.generate_with_checks, with the value. Three expressions, the fewest that read the
-- state once: in a VOLATILE function PL/pgSQL takes a snapshot for each (about 400 of a call's
-- 11,000 instructions).
CREATE FUNCTION sno_sql.generate(meta integer DEFAULT 0) RETURNS sno_sql.sno
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    AS $$
DECLARE
    value bigint := pg_catalog.nextval('sno_sql.clock'::pg_catalog.regclass);
    session_state bigint := NULLIF(pg_catalog.current_setting('sno_sql.session', true), '')::bigint;
BEGIN
    RETURN CASE WHEN meta BETWEEN 0 AND 255 AND sno_sql.clock_value_usable(value, session_state)
        THEN sno_sql.id_of_clock_value(value, meta, session_state)
        ELSE sno_sql.generate_with_checks(meta, value) END;
END
$$;
COMMENT ON FUNCTION sno_sql.generate(integer) IS
    'a new ID with this metabyte: never equal to another of this database''s, ordered by time';

-- The owner's: which partition this database's IDs carry. SECURITY DEFINER, EXECUTE for the
-- owner alone (and whom the owner grants it): a trusted extension's objects belong to the
-- bootstrap superuser, and the role that created it is given EXECUTE (extension-owner.sql).
-- A new run, 256 units (about a second) past the clock: every session that read the
-- configuration before, here or in the database this one was copied from, reads it again
-- before its next ID (see sno_sql.clock_value_usable). The clock runs up to a second ahead of
-- the server's until it catches up.
CREATE FUNCTION sno_sql.configure("partition" integer) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    IF "partition" NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno partition % is out of range 0..65535', "partition"
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    -- (Its ROW EXCLUSIVE lock waits for sessions reading the configuration: begin_session.)
    INSERT INTO sno_sql.configuration AS c ("partition", database_fingerprint)
        VALUES ("partition", sno_sql.database_fingerprint())
        ON CONFLICT (singleton) DO UPDATE
            SET "partition" = excluded."partition", database_fingerprint = excluded.database_fingerprint,
                configured_at = now(), configured_by = current_user;
    PERFORM sno_sql.with_generator_lock(sno_sql.current_run(), true,
        ((coalesce(pg_sequence_last_value('sno_sql.clock'::regclass), -1) + 1) >> 24) + 255);
    PERFORM set_config('sno_sql.session', '', false);
END
$$;
REVOKE EXECUTE ON FUNCTION sno_sql.configure(integer) FROM PUBLIC;
COMMENT ON FUNCTION sno_sql.configure(integer) IS
    'sets this database''s partition and begins a new run (the owner''s)';

-- The owner's, after moving IDs in from elsewhere (native sno, another database): the next ID
-- this database makes comes after the given one, whatever the clock says. Not past a day
-- ahead: the clock would stay there (and near 2079, stop).
CREATE FUNCTION sno_sql.start_after(id sno_sql.sno) RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    IF sno_sql."time"(id) > clock_timestamp() + interval '1 day' THEN
        RAISE EXCEPTION 'sno_sql.start_after: % is more than a day ahead of the clock', sno_sql.to_text(id)
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its time is %s.', sno_sql."time"(id));
    END IF;
    PERFORM sno_sql.with_generator_lock(NULL, false, sno_sql.high_bits(id) >> 1);
END
$$;
REVOKE EXECUTE ON FUNCTION sno_sql.start_after(sno_sql.sno) FROM PUBLIC;
COMMENT ON FUNCTION sno_sql.start_after(sno_sql.sno) IS
    'moves the generator on so that every ID it makes from now on sorts after this one (the owner''s; at most a day ahead)';
