# Logical replication from a publisher of the oldest supported major (SNO_PUBLISHER_INSTALL, an
# installation of PostgreSQL 15 with sno) to subscribers of this major, one with binary = true,
# one with binary = false.
#
# Why: replicating into a newer major is how many move to it without downtime. sno's binary form
# must be read by the newer server's receive function exactly as the older one sent it, and its
# text form by the input function; every row must arrive, with its ID unchanged.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $publisher_install = $ENV{SNO_PUBLISHER_INSTALL}
  or plan skip_all => 'SNO_PUBLISHER_INSTALL (the older major\'s installation) is not set';

my $ROWS = 20_000;
my $events = 'CREATE TABLE events (id sno PRIMARY KEY DEFAULT sno_generate(1),
	at timestamptz NOT NULL DEFAULT clock_timestamp(), writer int NOT NULL, n int NOT NULL)';

my $publisher = logical_node('publisher', 1, install_path => $publisher_install);
my $subscriber_major = PostgreSQL::Test::Cluster->new('probe')->pg_version->major;
note('publisher: PostgreSQL ' . $publisher->pg_version . ", subscribers: $subscriber_major");
$publisher->safe_psql('postgres', "$events; CREATE PUBLICATION events FOR TABLE events");
# Rows from before the subscriptions (the initial table copy) and after (streamed changes).
$publisher->safe_psql('postgres',
	"INSERT INTO events (writer, n) SELECT 1, g FROM generate_series(1, $ROWS / 2) g");

my %subscribers;
for my $binary ('true', 'false')
{
	my $subscriber = logical_node("subscriber_binary_$binary", 2);
	$subscriber->safe_psql('postgres', $events);
	subscribe($subscriber, "events_$binary", $publisher, "binary = $binary");
	$subscriber->wait_for_subscription_sync($publisher, "events_$binary");
	$subscribers{$binary} = $subscriber;
}
ok(psql_finish(start_batched_inserts($publisher, 1, $ROWS / 2)), 'the publisher inserted its rows');
$publisher->wait_for_catchup("events_$_") for keys %subscribers;

my $digest = "SELECT count(*), md5(string_agg(format('%s|%s|%s', id, at, n), ',' ORDER BY id)) FROM events";
my $published = $publisher->safe_psql('postgres', $digest);
like($published, qr/^$ROWS\|/, "the publisher has $ROWS rows");
for my $binary (sort keys %subscribers)
{
	my $subscriber = $subscribers{$binary};
	is($subscriber->safe_psql('postgres', $digest),
		$published, "binary = $binary: every row arrived on $subscriber_major, identical");
	is( $subscriber->safe_psql('postgres',
			'SELECT count(*) FROM events WHERE sno_partition(id) <> 1'),
		'0', "binary = $binary: every ID kept the publisher's partition");
	is(subscription_errors($subscriber),
		'0', "binary = $binary: no apply or sync errors");
}

done_testing();
