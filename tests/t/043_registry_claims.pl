# The partition registry under servers that claim at once: every claim gets a partition no other
# claim got, and the registry records each with the instance (the server) that claimed it.
#
# Why: servers of a fleet start together (after an outage, from one deployment), and two that
# were both given one partition would make the same IDs for as long as they run. The claims are
# serialised by a lock on sno_partition_leases; without it, two claims can both see a partition
# free and the second overwrite the first's row, leaving two holders that each believe it is
# theirs. tests/sql/registry.sql checks each rule of a claim one at a time.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('registry');
$node->safe_psql('postgres', 'CREATE ROLE servers LOGIN');
$node->safe_psql('postgres',
	q{GRANT EXECUTE ON FUNCTION sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint,
	  integer, integer, integer) TO servers});

# Server N's instance: a uuid that ends in N.
sub instance { sprintf '00000000-0000-4000-8000-%012d', shift }

# 8 sessions, each claiming for 25 servers of its own, all at once, with an hour's lease (times
# in Unix milliseconds); each prints what it got.
my ($sessions, $claims) = (8, 25);
my @runs;
for my $session (1 .. $sessions)
{
	my $sql = join '',
	  map {
		my $server = $session * 1000 + $_;
		"SELECT '" . instance($server) . "', \"partition\" FROM sno_lease_claim('"
		  . instance($server) . "', NULL, NULL, 3600000, "
		  . "(extract(epoch FROM now()) * 1000)::bigint + 3600000, 1, 1, 5432, NULL);\n"
	  } 1 .. $claims;
	push @runs, psql_start($node, "SET ROLE servers;\n$sql");
}
my %got;
for my $run (@runs)
{
	ok(psql_finish($run), 'a session made its claims');
	for (split /\n/, $run->{out})
	{
		my ($instance, $partition) = split /\|/;
		$got{$instance} = $partition;
	}
}
my $total = $sessions * $claims;
is(scalar(keys %got), $total, "$total claims answered");
my %holders;
push @{ $holders{ $got{$_} } }, $_ for keys %got;
is(scalar(grep { @{ $holders{$_} } > 1 } keys %holders), 0,
	'no partition was given to two servers');
is( $node->safe_psql('postgres',
		q{SELECT string_agg(instance || '|' || "partition", ',' ORDER BY instance)
		  FROM sno_partition_leases}),
	join(',', map { "$_|$got{$_}" } sort keys %got),
	'the registry records each partition with the instance it was given to');
is($node->safe_psql('postgres', 'SELECT max("partition") FROM sno_partition_leases'),
	$total - 1, "the lowest $total partitions, none skipped");

done_testing();
