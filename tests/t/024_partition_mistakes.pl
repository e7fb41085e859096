# The mistakes that make two servers generate with one partition are logged (the README,
# "Partition mistakes"; src/pg/recovery/partition_mistakes.rs).
#
# Why: two writers with one partition is the one way an operator can make sno repeat IDs. Where
# one server can see it happen, it says so: logical replication bringing in IDs this server
# could have made, and a copy of a data directory that starts as a primary.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $source = logical_node('source', 9);
my $copy_target = logical_node('same_partition', 9);
my $table = 'CREATE TABLE events (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)';
$source->safe_psql('postgres', "$table; CREATE PUBLICATION events FOR TABLE events");
$copy_target->safe_psql('postgres', $table);

# The source's IDs are older than the subscriber's own: times the subscriber generated in.
$source->safe_psql('postgres', 'INSERT INTO events (n) SELECT g FROM generate_series(1, 1000) AS g');
$copy_target->safe_psql('postgres', 'SELECT count(sno_generate(1)) FROM generate_series(1, 10)');
my $offset = -s $copy_target->logfile;
subscribe($copy_target, 'events', $source, 'binary = true');
$copy_target->wait_for_subscription_sync($source, 'events');
like(
	slurp_file($copy_target->logfile, $offset),
	qr/WARNING:  sno: logical replication brought in ID [0-9a-z]{16} with this server's own partition 9, from a time this server may have generated IDs in\n.*DETAIL:  Its time .* \(tick-tock 0\) is at or before .*, how far this server's generator went in that timeline\. Two servers generating IDs with one partition repeat each other's IDs; give each its own sno\.partition\. IDs like this one brought in by this worker so far: 1\./,
	'the initial copy of IDs with this server partition and an old time: a WARNING');
is($copy_target->safe_psql('postgres', 'SELECT count(*) FROM events'),
	'1000', 'the rows still arrive (logged, not refused)');

# IDs newer than anything the subscriber made: no warning (it cannot have made them yet).
$offset = -s $copy_target->logfile;
$source->safe_psql('postgres', "SELECT pg_sleep(0.1)");
$source->safe_psql('postgres', 'INSERT INTO events (n) SELECT g FROM generate_series(1, 1000) AS g');
$source->wait_for_catchup('events');
is(log_count($copy_target, 'sno: logical replication brought in', $offset),
	0, 'IDs from after the last time the subscriber generated in: no warning');

# A copy of the source's data directory (a base backup) started as a primary of its own.
$source->backup('copy');
my $copy = PostgreSQL::Test::Cluster->new('copy');
$copy->init_from_backup($source, 'copy');
$copy->start;
ok( $copy->log_contains(
		qr/WARNING:  sno: this data directory is a copy of another server's \(it starts from a base backup\) and will generate IDs with partition 9 \(set by sno\.partition\), as that server does/),
	'a base backup started as a primary: a WARNING naming the partition it shares');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($source, 'copy', has_streaming => 1);
$standby->start;
is(log_count($standby, 'is a copy of another server'), 0,
	'the same backup started as a standby: no warning');

done_testing();
