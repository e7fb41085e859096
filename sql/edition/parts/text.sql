
-- The text form: 16 characters of 2-9, a-x ---------------------------------------------------

-- 8 characters: 5 bits each, most significant first (SPEC.md section 2).
CREATE FUNCTION sno_sql.text_of_bits(bits bigint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 35) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 30) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 25) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 20) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 15) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 10) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', ((bits >> 5) & 31)::integer + 1, 1)
        || substr('23456789abcdefghijklmnopqrstuvwx', (bits & 31)::integer + 1, 1);
COMMENT ON FUNCTION sno_sql.text_of_bits(bigint) IS
    '8 characters of the text form for 40 bits (internal)';

CREATE FUNCTION sno_sql.text_of_halves(high bigint, low bigint) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sno_sql.text_of_bits(high) || sno_sql.text_of_bits(low);
COMMENT ON FUNCTION sno_sql.text_of_halves(bigint, bigint) IS
    'the text form of the ID of these two 40-bit halves (internal)';

-- PL/pgSQL, not SQL: text_of_bits names its argument 8 times, and PostgreSQL inlines a SQL
-- function only when such an argument is cheap; here it is a variable, so both calls inline.
CREATE FUNCTION sno_sql.to_text(id sno_sql.sno) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
DECLARE
    high bigint := sno_sql.high_bits(id);
    low bigint := sno_sql.low_bits(id);
BEGIN
    RETURN sno_sql.text_of_halves(high, low);
END
$$;

-- Validates as native sno does (SPEC.md section 2): the error says which character or byte is
-- wrong and where; upper case is accepted.
CREATE FUNCTION sno_sql.from_text_checked(text_form text) RETURNS sno_sql.sno
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
DECLARE
    bytes bytea := pg_catalog.textsend(text_form);
    symbol integer;
    value bigint;
    high bigint := 0;
    low bigint := 0;
BEGIN
    IF pg_catalog.octet_length(bytes) <> 16 THEN
        RAISE EXCEPTION 'invalid input syntax for type sno: "%"', text_form
            USING ERRCODE = 'invalid_text_representation',
                  DETAIL = pg_catalog.format('a sno is 16 characters long, not %s',
                      pg_catalog.octet_length(bytes));
    END IF;
    FOR place IN 0..15 LOOP
        symbol := pg_catalog.get_byte(bytes, place);
        value := CASE WHEN symbol BETWEEN 50 AND 57 THEN symbol - 50   -- '2'..'9'
                      WHEN symbol BETWEEN 97 AND 120 THEN symbol - 89  -- 'a'..'x'
                      WHEN symbol BETWEEN 65 AND 88 THEN symbol - 57   -- 'A'..'X'
                 END;
        IF value IS NULL THEN
            RAISE EXCEPTION 'invalid input syntax for type sno: "%"', text_form
                USING ERRCODE = 'invalid_text_representation',
                      DETAIL = CASE WHEN symbol BETWEEN 32 AND 126
                          THEN pg_catalog.format('character ''%s'' at position %s is not one of 2-9, a-x',
                              pg_catalog.chr(symbol), place + 1)
                          ELSE pg_catalog.format('byte 0x%s at position %s is not one of 2-9, a-x',
                              pg_catalog.lpad(pg_catalog.to_hex(symbol), 2, '0'), place + 1)
                      END;
        END IF;
        IF place < 8 THEN
            high := (high << 5) | value;
        ELSE
            low := (low << 5) | value;
        END IF;
    END LOOP;
    RETURN sno_sql.from_bits(high, low);
END
$$;
COMMENT ON FUNCTION sno_sql.from_text_checked(text) IS
    'the ID of a 16-character text form, decoded symbol by symbol (what sno_sql.from_text calls; from 19 only for a text that is not valid, for its error)';
CREATE FUNCTION sno_sql.from_text(text_form text) RETURNS sno_sql.sno
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sno_sql.from_text_checked(text_form);

-- From PostgreSQL 19, encode and decode know base32hex, whose alphabet (0-9, A-V) is sno's
-- (2-9, a-x) moved by two: the text form is then a few C calls, and to_text a SQL function
-- that the planner inlines. A server upgraded to 19 keeps the functions above (pg_upgrade
-- carries function bodies); they return the same text.
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::integer < 190000 THEN
        RETURN;
    END IF;
    -- sno's symbol for v is base32hex's for v + 2 in lower case, but for v = 30 and 31 ('w',
    -- 'x'), where v + 2 wraps to '0' and '1'. So 2 is added to each 5-bit group of each half,
    -- without carries between groups (the group's top bits apart: 0x8421084210), then encoded,
    -- lowered (COLLATE "C": per byte) and the two wrapped symbols put right. translate() over
    -- the 32 symbols would cost twice all of this.
    CREATE OR REPLACE FUNCTION sno_sql.text_of_halves(high bigint, low bigint) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN replace(replace(lower(encode(
            substring((((high & 532021755375) + 70936234050) # (high & 567489872400))::bytea FROM 4)
            || substring((((low & 532021755375) + 70936234050) # (low & 567489872400))::bytea FROM 4),
            'base32hex') COLLATE "C"), '0', 'w'), '1', 'x');
    CREATE OR REPLACE FUNCTION sno_sql.to_text(id sno_sql.sno) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN sno_sql.text_of_halves(sno_sql.high_bits(id), sno_sql.low_bits(id));
    -- A valid text decodes in C; anything else goes on to the checks above, for their error.
    CREATE OR REPLACE FUNCTION sno_sql.from_text(text_form text) RETURNS sno_sql.sno
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN CASE WHEN text_form ~ '^[2-9a-xA-X]{16}$'
            THEN sno_sql.from_bytea(decode(translate(text_form,
                '23456789abcdefghijklmnopqrstuvwxABCDEFGHIJKLMNOPQRSTUVWX',
                '0123456789ABCDEFGHIJKLMNOPQRSTUV89ABCDEFGHIJKLMNOPQRSTUV'), 'base32hex'))
            ELSE sno_sql.from_text_checked(text_form) END;
END
$$;
COMMENT ON FUNCTION sno_sql.to_text(sno_sql.sno) IS
    'the 16-character text form of the ID, as native sno prints it';
COMMENT ON FUNCTION sno_sql.from_text(text) IS
    'the ID of a 16-character text form (upper case accepted); compare a column with sno_sql.from_text(''...''), not with a bare literal';
