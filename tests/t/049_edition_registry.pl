# A fleet that mixes the SQL edition (sno_sql, docs/managed.md) with native servers that lease
# their partitions from the partition registry: the edition's partition, reserved in the
# registry (sno_partition_reserve) before the edition's database is configured with it, is never
# leased, whoever claims and in whatever order, and no partition or ID is shared. Then the
# mistake the docs warn about: an edition given a partition the registry leased. The registry
# refuses to reserve it (55000), and sno_sql.configure, which knows nothing of the registry,
# takes it anyway: two generators in one partition.
#
# Why: the edition has no connection to the registry. The registry knows of a partition used
# outside it only through its reservations; an edition's partition that is not reserved is, to
# the registry, a free partition, and the next server to claim gets it.
#
# One node, as 043: the registry (database postgres), a native server that leases from it (the
# node itself, sno.partition_source = 'registry'), other servers' claims made in SQL as 043's
# are, and the edition in a database of its own (native sno and sno_sql never clash in one
# server). Needs the edition's plain SQL file, which tests/tap.sh writes (SNO_EDITION_DIR).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;


# The edition's partition; with the claims below, the one a claim in order would get next.
my $edition_partition = 3;

# The node is its own registry: its lease holder connects to its postgres database as servers,
# which may not call the lease functions yet, so the server claims only once they are granted,
# after the reservation and the other servers' claims.
my $node = sno_node('fleet', start => 0);
$node->append_conf('postgresql.conf', join "\n",
	"sno.partition_source = 'registry'",
	"sno.partition_registry = 'host=" . $node->host . ' port=' . $node->port
	  . " dbname=postgres user=servers connect_timeout=2'",
	"sno.partition_lease = '3s'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION sno; CREATE ROLE servers LOGIN');
create_ids_table($node);
is($node->safe_psql('postgres', 'SELECT holding FROM sno_partition_lease()'),
	'f', 'the native server holds no lease while it may not claim');

# Server N's instance: a uuid that ends in N.
sub instance { sprintf '00000000-0000-4000-8000-%012d', shift }

# A claim as a server makes it (a lease of an hour), asking for $wanted or none; what it got, or
# the error with its SQLSTATE.
sub claim
{
	my ($server, $wanted, %options) = @_;
	my $sql =
	    q{SELECT "partition" FROM sno_lease_claim('}
	  . instance($server) . q{', NULL, }
	  . ($wanted // 'NULL')
	  . q{, 3600000, (extract(epoch FROM now()) * 1000)::bigint + 3600000, 1, 1, 5432, NULL)};
	$sql = "SET ROLE servers; $sql" if $options{as_servers};
	my ($ret, $out, $err) = $node->psql('postgres', $sql, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? $out : join "\n", grep { /^ERROR:/ } split /\n/, messages($err);
}

# 1. The DBA's two steps: reserve the partition in the registry, then configure the edition's
# database with it.
$node->safe_psql('postgres',
	"SELECT sno_partition_reserve($edition_partition, "
	  . "'sno_sql: database edition on server fleet')");
is( $node->safe_psql('postgres',
		q{SELECT "partition" || ' ' || reason FROM sno_partition_reservations}),
	"$edition_partition sno_sql: database edition on server fleet",
	'the registry records the reservation and its reason');
$node->safe_psql('postgres', 'CREATE DATABASE edition');
install_edition($node, 'edition', 'the edition installs into database edition');
$node->safe_psql('edition', "SELECT sno_sql.configure($edition_partition)");

# 2. Servers claim: three take partitions 0, 1 and 2, so that the edition's would come next in
# order; then the native server, then a server that asks for the edition's partition by name (a
# claim's wanted: what a server's state file or its primary's WAL names), then one more.
is(join(',', map { claim($_) } 1 .. 3), '0,1,2', 'three servers claim partitions 0, 1 and 2');
$node->safe_psql('postgres',
	q{GRANT EXECUTE ON FUNCTION
	    sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer, integer, integer),
	    sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint, integer, integer, integer),
	    sno_lease_release(integer, uuid, bytea) TO servers});
ok($node->poll_query_until('postgres', 'SELECT holding FROM sno_partition_lease()'),
	'allowed to claim, the native server holds a lease');
my $native_partition =
  $node->safe_psql('postgres', 'SELECT "partition" FROM sno_partition_lease()');
is($native_partition, $edition_partition + 1,
	"the native server, next in order, gets partition $native_partition, not the reserved "
	  . $edition_partition);
is(claim(4, $edition_partition, as_servers => 1), $edition_partition + 2,
	"a server that asks for partition $edition_partition gets the next free one instead");
is(claim(5), $edition_partition + 3, 'and the next server the one after');

# With every other partition held, a claim that asks for the reserved one is refused (54000),
# never given it.
$node->safe_psql('postgres', qq{
	INSERT INTO sno_partition_leases
	SELECT p, gen_random_uuid(), 9000, 1, NULL, 5432, '1 hour', now(), now(), now() + '1 hour',
	       now() + '1 hour', NULL, (SELECT epoch FROM sno_registry_epoch), NULL
	FROM generate_series(0, 65535) AS p
	WHERE p <> $edition_partition
	ON CONFLICT DO NOTHING});
is( claim(6, $edition_partition),
	'ERROR:  54000: sno lease: all 65536 partitions are held by live leases or reserved',
	'with all others held, a claim asking for the reserved partition is refused, not given it');
$node->safe_psql('postgres', 'DELETE FROM sno_partition_leases WHERE system_identifier = 9000');
is( $node->safe_psql('postgres',
		qq{SELECT count(*) FROM sno_partition_leases WHERE "partition" = $edition_partition}),
	'0', 'the registry never leased the reserved partition');

# 3. IDs from both: the native server's carry its leased partition, the edition's its configured
# one; no partition and no ID is in both.
ok(generate_into($node, 'native', 10_000), 'the native server makes 10,000 IDs');
$node->safe_psql('edition',
	'CREATE TABLE eids (id sno_sql.sno PRIMARY KEY);'
	  . 'INSERT INTO eids SELECT sno_sql.generate(1) FROM generate_series(1, 10000)');
my $native_partitions =
  $node->safe_psql('postgres', 'SELECT string_agg(DISTINCT sno_partition(id)::text, \',\') FROM ids');
my $edition_partitions = $node->safe_psql('edition',
	'SELECT string_agg(DISTINCT sno_sql."partition"(id)::text, \',\') FROM eids');
is($native_partitions,  $native_partition,  "the native server's IDs carry its lease's partition");
is($edition_partitions, $edition_partition, "the edition's IDs carry its configured partition");
isnt($native_partitions, $edition_partitions, 'no partition is in both');
my %seen;
# (Each split in parentheses: a second split after the first would be its LIMIT.)
$seen{$_}++ for (split /\n/, $node->safe_psql('postgres', 'SELECT id::text FROM ids')),
  (split /\n/, $node->safe_psql('edition', 'SELECT sno_sql.to_text(id) FROM eids'));
is(scalar(keys %seen), 20_000, 'the 20,000 IDs of both are all different');

# 4. The mistake: an edition given the native server's leased partition. The registry refuses to
# reserve a partition it leased; configure takes it regardless, and the two share it.
is( error_of($node,
		"SELECT sno_partition_reserve($native_partition, 'sno_sql: database edition2 on server fleet')"),
	"ERROR:  55000: sno lease: partition $native_partition was leased, and cannot be reserved\n"
	  . "DETAIL:  IDs of it were made under the registry: another use would repeat them.\n"
	  . 'HINT:  Reserve a partition that was never leased.',
	'reserving a partition the registry leased is refused (55000)');
$node->safe_psql('postgres', 'CREATE DATABASE edition2');
install_edition($node, 'edition2', 'the edition installs into database edition2');
$node->safe_psql('edition2', "SELECT sno_sql.configure($native_partition)");
is( $node->safe_psql('edition2',
		'SELECT DISTINCT sno_sql."partition"(sno_sql.generate(1)) FROM generate_series(1, 1000)'),
	$native_partition,
	'configure, knowing nothing of the registry, takes the leased partition: its IDs share the '
	  . "native server's partition");
is($node->safe_psql('postgres', 'SELECT "partition" FROM sno_partition_lease()'),
	$native_partition, 'which the native server still holds: nothing keeps their IDs apart');

$node->stop;
done_testing();
