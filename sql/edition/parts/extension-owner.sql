
-- The role that ran CREATE EXTENSION configures the generator. A trusted extension's script
-- runs as the bootstrap superuser, who then owns its objects, so that role gets EXECUTE on the
-- owner's functions (pg_tle runs the script as that role, which owns them already).
DO $$
DECLARE
    creator regrole := (SELECT e.extowner::regrole FROM pg_catalog.pg_extension AS e
                        WHERE e.extname = 'sno_sql');
BEGIN
    EXECUTE pg_catalog.format(
        'GRANT EXECUTE ON FUNCTION sno_sql.configure(integer), sno_sql.start_after(sno_sql.sno) TO %s',
        creator);
END
$$;
