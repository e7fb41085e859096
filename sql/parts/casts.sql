
-- Casts ----------------------------------------------------------------------------------------

CREATE FUNCTION sno_to_bytea(sno) RETURNS bytea
    AS 'MODULE_PATHNAME', 'sno_send_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_from_bytea(bytea) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_from_bytea_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sno_to_bytea(sno) IS 'the 10 bytes of the ID';
COMMENT ON FUNCTION sno_from_bytea(bytea) IS 'the ID of exactly 10 bytes';

CREATE CAST (sno AS bytea) WITH FUNCTION sno_to_bytea(sno);
-- AS ASSIGNMENT: INSERT and UPDATE take the 10 bytes that drivers send for a byte string
-- (psycopg, asyncpg, pgJDBC); expressions still need the explicit cast, so nothing that
-- resolved before becomes ambiguous.
CREATE CAST (bytea AS sno) WITH FUNCTION sno_from_bytea(bytea) AS ASSIGNMENT;
CREATE CAST (sno AS timestamptz) WITH FUNCTION sno_time(sno);

COMMENT ON CAST (sno AS bytea) IS 'the 10 bytes of the ID';
COMMENT ON CAST (bytea AS sno) IS 'the ID of exactly 10 bytes; also applied on assignment';
COMMENT ON CAST (sno AS timestamptz) IS 'the start of the ID''s 4 ms unit';
