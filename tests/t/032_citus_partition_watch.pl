# A Citus coordinator notices on its own when two nodes share a partition: a WARNING in its log at
# every check, and sno_partition_watch().clashes for monitoring.
#
# Why: every node evaluates DEFAULT sno_generate(...) itself, so two nodes with one partition make
# colliding IDs, silently until someone runs sno_check_partitions() (issue 22). Neither a node
# joining nor a reload on a worker tells the coordinator anything, so it checks periodically
# (src/pg/sql/partition_watch.rs); here every second.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoCitus;
use SnoTest;
use Test::More;

my $missing = citus_missing();
plan skip_all => $missing if defined $missing;

my $coordinator = citus_node('citus_coordinator', 1);
my @workers = (citus_node('citus_worker1', 2), citus_node('citus_worker2', 3));

sub on_coordinator { return $coordinator->safe_psql('postgres', $_[0]); }

sub add_worker
{
	my ($worker) = @_;
	on_coordinator("SELECT citus_add_node('" . $worker->host . "', " . $worker->port . ')');
	return;
}

add_worker($_) for @workers;
on_coordinator('CREATE EXTENSION sno');
# Another database without Citus: the watch looks there too, and finds nothing to check.
on_coordinator('CREATE DATABASE other');
set_settings($coordinator, 'sno.citus_watch_interval' => 1);

# The watch's findings once a check that started after $since has ended.
sub findings_after
{
	my ($since) = @_;
	my $columns = q{watching || ' ' || databases || ' ' || nodes || ' ' || clashes || ' ' || unanswered};
	$coordinator->poll_query_until('postgres',
		"SELECT checked_at > '$since'::timestamptz FROM sno_partition_watch()")
	  or die 'the partition watch did not check';
	return on_coordinator("SELECT $columns FROM sno_partition_watch()");
}

my $now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 3 0 0',
	'every node its own partition: one database with Citus, three nodes, no clash');
is(log_count($coordinator, 'share a partition'), 0, 'and no WARNING');
is(on_coordinator('SELECT detail IS NULL FROM sno_partition_watch()'), 't', 'no detail');

# A worker reloaded into another's partition: nobody tells the coordinator.
my $offset = -s $coordinator->logfile;
set_settings($workers[1], 'sno.partition' => 2);
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 3 1 0', 'a worker reloaded into the other\'s partition: one clash');
$coordinator->wait_for_log(qr/share a partition/, $offset);
like(
	slurp_file($coordinator->logfile, $offset),
	qr/WARNING:  sno: nodes of the Citus cluster of database "postgres" share a partition, so they can make the same IDs\n.*DETAIL:  node \d+ at \S+ \(sno_generate\) and node \d+ at \S+ \(sno_generate\) both use partition 2 with sequences 0\.\.65535 and 0\.\.65535\. Give each node its own sno\.partition/,
	'the coordinator logs a WARNING naming the nodes');
like(on_coordinator('SELECT detail FROM sno_partition_watch()'),
	qr/^database "postgres": node \d+ at \S+ \(sno_generate\) and node \d+ at \S+ \(sno_generate\) both use partition 2/,
	'sno_partition_watch().detail names them');

# It keeps saying so at every check while the clash lasts.
$offset = -s $coordinator->logfile;
$now = on_coordinator('SELECT now()');
findings_after($now);
$now = on_coordinator('SELECT now()');
findings_after($now);
cmp_ok(log_count($coordinator, 'share a partition', $offset), '>=', 1, 'the WARNING comes again');

# A node joining with the coordinator's partition: noticed too.
my $third = citus_node('citus_worker3', 1);
add_worker($third);
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 4 2 0', 'a fourth node with the coordinator\'s partition: two clashes');

# Fixed: the count goes back to 0, and the WARNINGs stop.
set_settings($workers[1], 'sno.partition' => 3);
set_settings($third, 'sno.partition' => 4);
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 4 0 0', 'fixed: no clash');
$offset = -s $coordinator->logfile;
$now = on_coordinator('SELECT now()');
findings_after($now);
is(log_count($coordinator, 'share a partition', $offset), 0, 'no more WARNINGs');

# A node that does not answer: said too, and counted apart.
$workers[0]->stop;
$offset = -s $coordinator->logfile;
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 0 0 1', 'a worker down: one check could not ask every node');
like(slurp_file($coordinator->logfile, $offset),
	qr/WARNING:  sno: could not compare the partitions of the Citus cluster of database "postgres": node \d+ at \S+ did not answer\n.*DETAIL:  The node answered: /,
	'the coordinator logs a WARNING naming the node');
$workers[0]->start;

# Workers do not run the check (Citus group 0 is the coordinator's).
is($workers[0]->safe_psql('postgres', 'SELECT watching || \' \' || databases FROM sno_partition_watch()'),
	'true 0', 'a worker watches but coordinates nothing');

# Off: no more checks.
set_settings($coordinator, 'sno.citus_watch_interval' => 0);
is(on_coordinator('SELECT watching FROM sno_partition_watch()'), 'f', 'sno.citus_watch_interval = 0 turns it off');

done_testing();
