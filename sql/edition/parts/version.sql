
-- Which release of the edition this is (the plain SQL file has no pg_extension row to say it).
-- OR REPLACE: every upgrade script ends with this part too.
CREATE OR REPLACE FUNCTION sno_sql.version() RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN '@VERSION@';
COMMENT ON FUNCTION sno_sql.version() IS 'the release of sno''s SQL edition installed here';
