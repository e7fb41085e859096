# Two writers that replicate to each other (PostgreSQL 17+, subscriptions with origin = none).
#
# Why: the other recipe for several writers: each server writes with its own partition and
# subscribes to the other, and origin = none keeps each change from coming back to where it was
# made. Both must end with the same rows, with no conflict, while both wrote at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $ROWS = 20_000;    # per server

my $probe = PostgreSQL::Test::Cluster->new('probe');
plan skip_all => 'two-way replication with origin = none is tested on PostgreSQL 17 and later'
  if $probe->pg_version < 17;

my %servers;
for my $partition (5, 6)
{
	my $server = logical_node("server$partition", $partition);
	$server->safe_psql('postgres', q{
		CREATE TABLE events (id sno PRIMARY KEY DEFAULT sno_generate(1), writer int NOT NULL, n int NOT NULL);
		CREATE PUBLICATION events FOR TABLE events});
	$servers{$partition} = $server;
}
for my $partition (5, 6)
{
	my $other = $partition == 5 ? 6 : 5;
	subscribe($servers{$partition}, "from_$other", $servers{$other},
		'origin = none, copy_data = false');
}
$servers{$_}->wait_for_subscription_sync for 5, 6;

my @runs = map { start_batched_inserts($servers{$_}, $_, $ROWS) } 5, 6;
ok(psql_finish($_), 'a server inserted its rows') for @runs;
$servers{5}->wait_for_catchup('from_5');
$servers{6}->wait_for_catchup('from_6');

my $summary = q{SELECT writer, sno_partition(id), count(*),
	md5(string_agg(id::text, ',' ORDER BY id)) FROM events GROUP BY 1, 2 ORDER BY 1};
my $on_5 = $servers{5}->safe_psql('postgres', $summary);
like($on_5, qr/^5\|5\|$ROWS\|\w+\n6\|6\|$ROWS\|\w+$/,
	"server 5 has its own $ROWS rows and server 6's, each with its server's partition");
is($servers{6}->safe_psql('postgres', $summary), $on_5, 'server 6 has exactly the same rows');
for my $partition (5, 6)
{
	is(subscription_errors($servers{$partition}),
		'0', "server $partition: no apply errors (no key conflicts, nothing came back)");
}

done_testing();
