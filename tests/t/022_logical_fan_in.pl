# Several writers merged by logical replication: three servers with partitions 1, 2 and 3 write
# at once, and two more subscribe to all three, one with binary subscriptions, one with text.
#
# Why: this is the recipe the README gives for several writers (sno keys need no coordination
# between them). Every row must arrive on both subscribers with its ID unchanged (binary: the
# type's receive function; text: its input function), none may conflict, and ordering by id must
# order the rows of all three servers by time, to the 4 ms unit.
#
# Each row brackets its ID between two clock readings: `made_after` is evaluated before the id's
# default and `made_before` after it (PostgreSQL evaluates an INSERT's defaults in column order).
# The time assertions are then exact, whatever the scheduler does between the three defaults.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $ROWS = 30_000;    # per writer
my $events = 'CREATE TABLE events (made_after timestamptz NOT NULL DEFAULT clock_timestamp(),
	id sno PRIMARY KEY DEFAULT sno_generate(1),
	made_before timestamptz NOT NULL DEFAULT clock_timestamp(), writer int NOT NULL, n int NOT NULL)';

my @writers;
for my $partition (1 .. 3)
{
	my $writer = logical_node("writer$partition", $partition);
	$writer->safe_psql('postgres', "$events; CREATE PUBLICATION events FOR TABLE events");
	push @writers, $writer;
}
my %subscribers;
for my $binary ('true', 'false')
{
	my $subscriber = logical_node("subscriber_binary_$binary", 4);
	$subscriber->safe_psql('postgres', $events);
	subscribe($subscriber, "events_${binary}_$_", $writers[ $_ - 1 ], "binary = $binary")
	  for 1 .. 3;
	$subscriber->wait_for_subscription_sync;
	$subscribers{$binary} = $subscriber;
}

# The three write at once, in small transactions, so that their times interleave.
my @runs = map { start_batched_inserts($writers[ $_ - 1 ], $_, $ROWS) } 1 .. 3;
ok(psql_finish($_), 'a writer inserted its rows') for @runs;

for my $binary (keys %subscribers)
{
	$writers[ $_ - 1 ]->wait_for_catchup("events_${binary}_$_") for 1 .. 3;
}
my $digest = "SELECT md5(string_agg(id::text, ',' ORDER BY id)) FROM events";
my @digests = map { $_->safe_psql('postgres', $digest) } @writers;

for my $binary (sort keys %subscribers)
{
	my $subscriber = $subscribers{$binary};
	is( $subscriber->safe_psql('postgres',
			'SELECT writer, sno_partition(id), count(*) FROM events GROUP BY 1, 2 ORDER BY 1'),
		"1|1|$ROWS\n2|2|$ROWS\n3|3|$ROWS",
		"binary = $binary: every row of each writer arrived, with its writer's partition");
	is( join(',', map { $subscriber->safe_psql('postgres', "$digest WHERE writer = $_") } 1 .. 3),
		join(',', @digests),
		"binary = $binary: each writer's IDs arrived unchanged");
	is(subscription_errors($subscriber),
		'0', "binary = $binary: no apply or sync errors (no key conflicts)");
	# Ordered by id, a row's ID was made less than a unit before any row ordered ahead of it:
	# their units are in order, so no row ahead was made after this row's made_before + 4 ms.
	is( $subscriber->safe_psql(
			'postgres', q{
			SELECT count(*) FROM (
				SELECT made_before, max(made_after) OVER (ORDER BY id
					ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS latest_ahead
				FROM events) AS s
			WHERE latest_ahead >= made_before + interval '4 ms'}),
		'0', "binary = $binary: ordered by id, the three servers' rows are in time order");
	is( $subscriber->safe_psql(
			'postgres', q{
			SELECT count(*) FROM events
			WHERE sno_time(id) <= made_after - interval '4 ms' OR sno_time(id) > made_before}),
		'0', "binary = $binary: each ID's time is the unit of the moment it was made");
}

done_testing();
