
-- pg_dump keeps the partition and the generator's state with the data of an extension's
-- tables, so that a restored copy refuses until configured and goes on after the clock.
SELECT pg_catalog.pg_extension_config_dump('sno_sql.configuration', '');
SELECT pg_catalog.pg_extension_config_dump('sno_sql.clock', '');
SELECT pg_catalog.pg_extension_config_dump('sno_sql.run', '');
