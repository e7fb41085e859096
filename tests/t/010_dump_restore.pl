# pg_dump and pg_restore of sno columns and their indexes (custom and plain formats), and of a
# partition registry's leases.
#
# Why: pg_dump writes sno values through the type's text output and pg_restore reads them back
# through its input function, and the restored indexes are rebuilt from those values. A bug in
# either direction, or in the comparison support the index uses, shows up here as different
# rows, a corrupt index, or a primary key that lets duplicates in. Needs no test build: it also
# runs against the Debian package.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $rows = 100000;
my $node = sno_node('dump_restore', extension => 0);
my $dumps = PostgreSQL::Test::Utils::tempdir;

# 100,000 pseudo-random ids (so the btree gets real page splits, not an append-only load), plus
# the smallest and largest ids the text form can express.
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', qq{
	CREATE EXTENSION sno;
	CREATE EXTENSION amcheck;
	CREATE TABLE t (id sno PRIMARY KEY, n int, other sno);
	INSERT INTO t
	SELECT substring(sha256(i::text::bytea) from 1 for 10)::sno,
	       i,
	       substring(sha256(('other' || i)::bytea) from 1 for 10)::sno
	FROM generate_series(1, $rows) AS i;
	INSERT INTO t VALUES ('2222222222222222', -1, 'xxxxxxxxxxxxxxxx'),
	                     ('xxxxxxxxxxxxxxxx', -2, '2222222222222222');
	CREATE INDEX t_other_btree ON t (other);
	CREATE INDEX t_id_hash ON t USING hash (id);
	ANALYZE t;});

# One string standing for the whole table, in index order, through the text output function.
sub table_digest
{
	my ($db) = @_;
	return $node->safe_psql($db,
		"SELECT md5(string_agg(id::text || ':' || n || ':' || other::text, ',' ORDER BY id)) FROM t"
	);
}

sub row_count
{
	return $node->safe_psql($_[0], 'SELECT count(*) FROM t');
}

# The dump may or may not carry amcheck along; either way it is needed to check the index.
sub index_is_valid
{
	my ($db, $index) = @_;
	my ($ret, $out, $err) = $node->psql(
		$db, qq{
		SET client_min_messages = warning;
		CREATE EXTENSION IF NOT EXISTS amcheck;
		SELECT bt_index_check('$index', true);});
	diag(messages($err)) if $ret != 0;
	return $ret == 0;
}

# Inserting an id that is already there must fail with unique_violation (23505); psql goes on
# after the error to print the SQLSTATE it got.
sub duplicate_sqlstate
{
	my ($db) = @_;
	my ($ret, $out, $err) = $node->psql(
		$db, q{
		INSERT INTO t SELECT id, 0, other FROM t WHERE id = '2222222222222222';
		\echo :SQLSTATE},
		on_error_stop => 0);
	return $out;
}

# The extreme ids, looked up through the restored hash index: it was rebuilt from restored
# values and must still find them. The primary key is dropped inside a rolled-back transaction
# so that the planner has no other index to pick (hash indexes take no IN lists, so it is a
# bitmap scan over the hash index).
sub hash_lookup
{
	my ($db) = @_;
	return $node->safe_psql(
		$db, q{
		BEGIN;
		ALTER TABLE t DROP CONSTRAINT t_pkey;
		SET LOCAL enable_seqscan = off;
		SELECT string_agg(n::text, ',' ORDER BY n) FROM t
		WHERE id IN ('2222222222222222', 'xxxxxxxxxxxxxxxx');
		ROLLBACK;});
}

# A partition registry's leases and reservations: extension configuration tables, so their rows
# are dumped (used_through is what keeps a reused partition's IDs apart). Its epoch record is
# not: a registry restored from a dump begins a new epoch (docs/generator.md).
$node->safe_psql('src', q{
	SELECT sno_lease_claim('00000000-0000-4000-8000-000000000007', NULL, 7, 60000,
	                       (extract(epoch FROM now()) * 1000)::bigint + 60000, 7, 1, 5432, NULL);
	SELECT sno_partition_reserve(9, 'backfill');});
my $leases = q{SELECT "partition", instance, system_identifier, used_through, NULL
	FROM sno_partition_leases UNION ALL SELECT "partition", NULL, NULL, NULL, reason
	FROM sno_partition_reservations ORDER BY 1};
my $src_leases = $node->safe_psql('src', $leases);

my $src_digest = table_digest('src');
is(row_count('src'), $rows + 2, 'the source has 100,002 rows');
ok(index_is_valid('src', 't_pkey'), 'the source t_pkey passes bt_index_check');

# Custom format: pg_dump -Fc, pg_restore into a fresh database.
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dumps/src.dump", 'src' ], 'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', 'dst', "$dumps/src.dump" ],
	'pg_restore into a fresh database');
is(row_count('dst'), $rows + 2, 'custom dump: same row count');
is(table_digest('dst'), $src_digest, 'custom dump: same rows (md5 of all rows)');
ok(index_is_valid('dst', 't_pkey'), 'custom dump: t_pkey passes bt_index_check(heapallindexed)');
ok(index_is_valid('dst', 't_other_btree'), 'custom dump: t_other_btree passes bt_index_check');
is(hash_lookup('dst'), '-2,-1', 'custom dump: the hash index finds the extreme ids');
is(duplicate_sqlstate('dst'), '23505', 'custom dump: the primary key rejects a duplicate (23505)');
is($node->safe_psql('dst', $leases), $src_leases,
	'custom dump: the registry\'s leases and reservations');
# Its epoch record is the one CREATE EXTENSION wrote: beside the restored leases, the first
# claim begins a new epoch, with a floor.
$node->safe_psql('dst', q{
	SELECT sno_lease_claim('00000000-0000-4000-8000-000000000008', NULL, NULL, 60000,
	                       (extract(epoch FROM now()) * 1000)::bigint + 60000, 8, 1, 5432, NULL)});
is( $node->safe_psql('dst', 'SELECT reason, floor IS NOT NULL FROM sno_registry_epoch'),
	'leases in a registry just installed (a restore from a dump)|t',
	'custom dump: the first claim after the restore begins an epoch with a floor');

# Plain format: pg_dump -Fp, replayed through psql.
$node->command_ok([ 'pg_dump', '-Fp', '-f', "$dumps/src.sql", 'src' ], 'pg_dump -Fp');
$node->safe_psql('postgres', 'CREATE DATABASE dst_plain');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', 'dst_plain', '-f', "$dumps/src.sql" ],
	'the plain dump replays through psql');
is(row_count('dst_plain'), $rows + 2, 'plain dump: same row count');
is(table_digest('dst_plain'), $src_digest, 'plain dump: same rows (md5 of all rows)');
ok(index_is_valid('dst_plain', 't_pkey'),
	'plain dump: t_pkey passes bt_index_check(heapallindexed)');
is($node->safe_psql('dst_plain', $leases), $src_leases, 'plain dump: the registry\'s leases');

done_testing();
