-- sno's SQL edition: the 10-byte sno IDs of native sno, in SQL and PL/pgSQL only, for servers
-- that load no library of sno's (docs/managed.md). Everything is in the schema sno_sql, whose
-- names are not native sno's (sno_sql.sno beside sno, sno_sql.generate beside sno_generate).
CREATE SCHEMA sno_sql;
COMMENT ON SCHEMA sno_sql IS 'the SQL edition of sno: compact, sortable, unique 10-byte IDs without a library';
