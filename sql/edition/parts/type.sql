-- The edition's ID type, its bytes and its order ----------------------------------------------
--
-- A domain over uuid holding the sno's 10 bytes followed by 6 zero bytes. uuid, not bytea:
-- a literal compared with the column (`WHERE id = 'brpk4q72xwf2m63l'`) is read by the base
-- type's input whatever the search_path, and bytea's would read the 16 characters as 16 bytes
-- and silently match nothing; uuid's refuses them. uuid's btree, hash and BRIN operator classes
-- give sno's order (plain byte order, the zero tail never decides), and its sorts use
-- abbreviated keys, whose 8 bytes are the sno's time. An index is the size of native sno's
-- (an index tuple of 16 or 10 bytes is 24 with its header); a heap row is 6 bytes larger.

GRANT USAGE ON SCHEMA sno_sql TO PUBLIC;

CREATE DOMAIN sno_sql.sno AS uuid
    CONSTRAINT sno_has_10_bytes CHECK (substring(uuid_send(VALUE) FROM 11) = '\x000000000000'::bytea);
COMMENT ON DOMAIN sno_sql.sno IS
    'sno ID (SQL edition): the 10 bytes of a sno and 6 zero bytes, ordered as sno; sno_sql.to_text(id) is its text';

-- The two 40-bit halves of the ID as integers: bytes 0..5 (time units << 1 | tick-tock) and
-- bytes 5..10 (meta << 32 | partition << 16 | sequence). Every other function reads or writes
-- these; each 40-bit half is also exactly 8 characters of the text form.
CREATE FUNCTION sno_sql.high_bits(id sno_sql.sno) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ('x' || left(encode(uuid_send(id), 'hex'), 10))::bit(40)::bigint;
CREATE FUNCTION sno_sql.low_bits(id sno_sql.sno) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN ('x' || substr(encode(uuid_send(id), 'hex'), 11, 10))::bit(40)::bigint;
CREATE FUNCTION sno_sql.from_bits(high bigint, low bigint) RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN encode(int8send((high << 24) | (low >> 16)) || int8send(low << 48), 'hex')::uuid;
-- Newer majors do the same in fewer calls: 18 casts between bytea and bigint, 19 between
-- bytea and uuid. (A server upgraded to them keeps the bodies it had; both give the same.)
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::integer >= 180000 THEN
        CREATE OR REPLACE FUNCTION sno_sql.high_bits(id sno_sql.sno) RETURNS bigint
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN substring(uuid_send(id) FOR 5)::bigint;
        CREATE OR REPLACE FUNCTION sno_sql.low_bits(id sno_sql.sno) RETURNS bigint
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN substring(uuid_send(id) FROM 6 FOR 5)::bigint;
    END IF;
    IF pg_catalog.current_setting('server_version_num')::integer >= 190000 THEN
        CREATE OR REPLACE FUNCTION sno_sql.from_bits(high bigint, low bigint) RETURNS sno_sql.sno
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
            RETURN (((high << 24) | (low >> 16))::bytea || (low << 48)::bytea)::uuid;
    END IF;
END
$$;
COMMENT ON FUNCTION sno_sql.high_bits(sno_sql.sno) IS
    'bytes 0..5 of the ID as an integer: time units << 1 | tick-tock';
COMMENT ON FUNCTION sno_sql.low_bits(sno_sql.sno) IS
    'bytes 5..10 of the ID as an integer: meta << 32 | partition << 16 | sequence';
COMMENT ON FUNCTION sno_sql.from_bits(bigint, bigint) IS
    'the ID of these two 40-bit halves (internal: not checked; use sno_sql.from_parts)';

CREATE FUNCTION sno_sql.to_bytea(id sno_sql.sno) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN substring(uuid_send(id) FOR 10);
CREATE FUNCTION sno_sql.from_bytea(bytes bytea) RETURNS sno_sql.sno
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
BEGIN
    IF pg_catalog.octet_length(bytes) <> 10 THEN
        RAISE EXCEPTION 'invalid bytea for type sno: a binary sno is 10 bytes, not %',
            pg_catalog.octet_length(bytes) USING ERRCODE = 'invalid_text_representation';
    END IF;
    RETURN (pg_catalog.encode(bytes, 'hex') || '000000000000')::pg_catalog.uuid;
END
$$;
COMMENT ON FUNCTION sno_sql.to_bytea(sno_sql.sno) IS 'the 10 bytes of the ID, as native sno''s sno_to_bytea';
COMMENT ON FUNCTION sno_sql.from_bytea(bytea) IS 'the ID of exactly 10 bytes, as native sno''s sno_from_bytea';

-- min and max: uuid has no such aggregates.
CREATE FUNCTION sno_sql.smaller(a sno_sql.sno, b sno_sql.sno) RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN a <= b THEN a ELSE b END;
CREATE FUNCTION sno_sql.larger(a sno_sql.sno, b sno_sql.sno) RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN CASE WHEN a >= b THEN a ELSE b END;
CREATE AGGREGATE sno_sql.min(sno_sql.sno) (
    SFUNC = sno_sql.smaller, STYPE = sno_sql.sno, COMBINEFUNC = sno_sql.smaller, PARALLEL = SAFE);
CREATE AGGREGATE sno_sql.max(sno_sql.sno) (
    SFUNC = sno_sql.larger, STYPE = sno_sql.sno, COMBINEFUNC = sno_sql.larger, PARALLEL = SAFE);
COMMENT ON FUNCTION sno_sql.smaller(sno_sql.sno, sno_sql.sno) IS 'the smaller of two IDs';
COMMENT ON FUNCTION sno_sql.larger(sno_sql.sno, sno_sql.sno) IS 'the larger of two IDs';
COMMENT ON AGGREGATE sno_sql.min(sno_sql.sno) IS 'the smallest (earliest) ID';
COMMENT ON AGGREGATE sno_sql.max(sno_sql.sno) IS 'the largest (latest) ID';
