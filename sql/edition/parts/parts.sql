
-- The parts of an ID, and IDs from parts and times --------------------------------------------

CREATE FUNCTION sno_sql."time"(id sno_sql.sno) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN to_timestamp(((sno_sql.high_bits(id) >> 1) * 4 + 1262304000000)::double precision / 1000);
CREATE FUNCTION sno_sql.tick_tock(id sno_sql.sno) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (sno_sql.high_bits(id) & 1)::integer;
CREATE FUNCTION sno_sql.meta(id sno_sql.sno) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (sno_sql.low_bits(id) >> 32)::integer;
CREATE FUNCTION sno_sql."partition"(id sno_sql.sno) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ((sno_sql.low_bits(id) >> 16) & 65535)::integer;
CREATE FUNCTION sno_sql."sequence"(id sno_sql.sno) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (sno_sql.low_bits(id) & 65535)::integer;
CREATE FUNCTION sno_sql.decode(id sno_sql.sno,
    OUT "time" timestamptz, OUT tick_tock integer, OUT meta integer,
    OUT "partition" integer, OUT "sequence" integer)
    RETURNS record
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    BEGIN ATOMIC
        SELECT sno_sql."time"(id), sno_sql.tick_tock(id), sno_sql.meta(id),
               sno_sql."partition"(id), sno_sql."sequence"(id);
    END;
COMMENT ON FUNCTION sno_sql."time"(sno_sql.sno) IS 'the start of the 4 ms unit the ID was made in';
COMMENT ON FUNCTION sno_sql.tick_tock(sno_sql.sno) IS
    'the tick-tock bit (0 or 1): flips when the generator begins a new timeline';
COMMENT ON FUNCTION sno_sql.meta(sno_sql.sno) IS 'the metabyte (0..255): the caller''s, e.g. which table';
COMMENT ON FUNCTION sno_sql."partition"(sno_sql.sno) IS 'the partition (0..65535): which generator made the ID';
COMMENT ON FUNCTION sno_sql."sequence"(sno_sql.sno) IS 'the sequence (0..65535) within the 4 ms unit';
COMMENT ON FUNCTION sno_sql.decode(sno_sql.sno) IS 'all parts of the ID as one record';

-- The 4 ms unit of a time: an error outside 2010-01-01 .. 2079-09-07 15:47:35.548 (UTC), as
-- native sno (SPEC.md section 1: never a wrapped, wrong ID).
CREATE FUNCTION sno_sql.unit_of(at timestamptz) RETURNS bigint
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
DECLARE
    unix_ms numeric := pg_catalog.floor(EXTRACT(EPOCH FROM at) * 1000::numeric);
BEGIN
    -- (Operands of exactly a pg_catalog operator's types: generator.sql's head says why.)
    IF unix_ms < 1262304000000::numeric OR unix_ms > 3461327255548::numeric THEN
        RAISE EXCEPTION 'timestamp out of range for sno'
            USING ERRCODE = 'datetime_field_overflow',
                  DETAIL = 'A sno holds times from 2010-01-01 00:00:00+00 to 2079-09-07 15:47:35.548+00.';
    END IF;
    RETURN pg_catalog.div(unix_ms - 1262304000000::numeric, 4::numeric)::bigint;
END
$$;
COMMENT ON FUNCTION sno_sql.unit_of(timestamptz) IS
    'the 4 ms unit since 2010 that contains the time (an error outside sno''s range)';

CREATE FUNCTION sno_sql.from_parts(at timestamptz, meta integer, "partition" integer,
    "sequence" integer, tick_tock integer DEFAULT 0) RETURNS sno_sql.sno
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
BEGIN
    IF meta NOT BETWEEN 0 AND 255 THEN
        RAISE EXCEPTION 'sno meta % is out of range 0..255', meta USING ERRCODE = 'numeric_value_out_of_range';
    ELSIF "partition" NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno partition % is out of range 0..65535', "partition"
            USING ERRCODE = 'numeric_value_out_of_range';
    ELSIF "sequence" NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'sno sequence % is out of range 0..65535', "sequence"
            USING ERRCODE = 'numeric_value_out_of_range';
    ELSIF tick_tock NOT BETWEEN 0 AND 1 THEN
        RAISE EXCEPTION 'sno tick_tock % is out of range 0..1', tick_tock
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    RETURN sno_sql.from_bits((sno_sql.unit_of(at) << 1) | tick_tock::bigint,
        (meta::bigint << 32) | ("partition"::bigint << 16) | "sequence"::bigint);
END
$$;
CREATE FUNCTION sno_sql.min_at(at timestamptz) RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sno_sql.from_bits(sno_sql.unit_of(at) << 1, 0);
CREATE FUNCTION sno_sql.max_at(at timestamptz) RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sno_sql.from_bits((sno_sql.unit_of(at) << 1) | 1, 1099511627775);
COMMENT ON FUNCTION sno_sql.from_parts(timestamptz, integer, integer, integer, integer) IS
    'the ID made of these parts; the time is truncated to its 4 ms unit';
COMMENT ON FUNCTION sno_sql.min_at(timestamptz) IS
    'the smallest ID of the 4 ms unit containing the time: an inclusive lower bound (native sno_min)';
COMMENT ON FUNCTION sno_sql.max_at(timestamptz) IS
    'the largest ID of the 4 ms unit containing the time: an inclusive upper bound (native sno_max)';
