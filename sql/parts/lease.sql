
-- On a server with sno.partition_source = 'registry': the lease it holds (docs/generator.md).
CREATE FUNCTION sno_partition_lease(
    OUT from_registry boolean, OUT "partition" integer, OUT holding boolean,
    OUT renewed_at timestamptz, OUT valid_until timestamptz, OUT start_after timestamptz,
    OUT failures bigint, OUT problem text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'sno_partition_lease_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL SAFE
    ROWS 1;
COMMENT ON FUNCTION sno_partition_lease() IS
    'with sno.partition_source = ''registry'': the partition this server leases, whether the '
    'lease is in force, until when its IDs may go (this server''s clock), the time they stay '
    'after when the partition was another server''s, and the failed claims and renewals, the '
    'last one''s reason in problem';
