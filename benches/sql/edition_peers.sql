-- What a service without extensions offers instead of sno's SQL edition, in their best-known
-- plain-SQL forms, as fast as plain SQL makes them, so that the edition is compared with the
-- real alternative rather than a strawman: a UUIDv7 and a ULID. Needs pgcrypto (the ULID's
-- random bytes). Installed by benches/sql/edition_setup.sh.

-- UUIDv7 (RFC 9562) in one SQL expression, so that the planner inlines it into the caller:
-- a version 4 UUID's 16 bytes (122 random bits, the variant already right) with the first 6
-- bytes replaced by the big-endian Unix milliseconds, and the version nibble turned from 4
-- (0100) into 7 (0111) by setting its two low bits (bits 52 and 53 of the bytea, counted
-- from the low bit of each byte). date_part is float8, exact to the microsecond for these
-- epochs, where extract() would go through numeric.
CREATE FUNCTION uuidv7_sql() RETURNS uuid
    LANGUAGE sql VOLATILE PARALLEL SAFE
    RETURN encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
        PLACING substring(int8send(floor(date_part('epoch', clock_timestamp()) * 1000)::bigint) FROM 3)
        FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid;

-- ULID: 26 characters of Crockford's base 32, the 48-bit Unix milliseconds (10 characters,
-- the first holding 3 bits) then 80 random bits (16). Each 40 bits are 8 characters, 5 bits
-- each, most significant first; the same table look-up as sno_sql's text form, so the two
-- texts cost alike per character. A SQL function of its argument, inlined where the argument
-- is a PL/pgSQL variable.
CREATE FUNCTION ulid_chars(bits bigint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 35) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 30) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 25) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 20) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 15) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 10) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((bits >> 5) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (bits & 31)::integer + 1, 1);
-- PL/pgSQL for the variables: the time and the random bytes are each read once and used in
-- several places, which a SQL function could only do by calling them again.
CREATE FUNCTION ulid_sql() RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL SAFE
    AS $$
DECLARE
    ms bigint := floor(date_part('epoch', clock_timestamp()) * 1000);
    random_bits bit(80) := ('x' || encode(gen_random_bytes(10), 'hex'))::bit(80);
    high bigint := substring(random_bits FROM 1 FOR 40)::bit(40)::bigint;
    low bigint := substring(random_bits FROM 41 FOR 40)::bit(40)::bigint;
    top bigint := ms >> 40;
BEGIN
    RETURN substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((top >> 5) & 31)::integer + 1, 1)
        || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (top & 31)::integer + 1, 1)
        || ulid_chars(ms) || ulid_chars(high) || ulid_chars(low);
END
$$;
