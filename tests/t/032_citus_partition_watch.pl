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

# Each statement within the framework's timeout: one that waits longer fails the test, naming
# the statement, instead of hanging it.
sub on_coordinator
{
	return $coordinator->safe_psql('postgres', $_[0],
		timeout => $PostgreSQL::Test::Utils::timeout_default);
}

sub add_worker
{
	my ($worker) = @_;
	on_coordinator("SELECT citus_add_node('" . $worker->host . "', " . $worker->port . ')');
	return;
}

add_worker($_) for @workers;
on_coordinator('CREATE EXTENSION sno');
# Another database without Citus: the watch looks there too, and finds nothing to check. With sno,
# for reading the watch while Citus's metadata in postgres is locked.
on_coordinator('CREATE DATABASE other');
$coordinator->safe_psql('other', 'CREATE EXTENSION sno');
set_settings($coordinator, 'sno.citus_watch_interval' => 1);

# The watch's findings once a round that started after $since has ended: the second round to end
# after it (the first may have begun before). Read in $database (postgres by default).
sub findings_after
{
	my ($since, $database) = @_;
	$database //= 'postgres';
	my $columns =
	  q{watching || ' ' || databases || ' ' || nodes || ' ' || clashes || ' ' || unanswered || ' ' || failed};
	for (1 .. 2)
	{
		$coordinator->poll_query_until($database,
			"SELECT checked_at > '$since'::timestamptz FROM sno_partition_watch()")
		  or die 'the partition watch did not check';
		$since = $coordinator->safe_psql($database, 'SELECT checked_at FROM sno_partition_watch()');
	}
	return $coordinator->safe_psql($database, "SELECT $columns FROM sno_partition_watch()");
}

my $now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 3 0 0 0',
	'every node its own partition: one database with Citus, three nodes, no clash');
is(log_count($coordinator, 'share a partition'), 0, 'and no WARNING');
is(on_coordinator('SELECT detail IS NULL FROM sno_partition_watch()'), 't', 'no detail');

# A worker reloaded into another's partition: nobody tells the coordinator.
my $offset = -s $coordinator->logfile;
set_settings($workers[1], 'sno.partition' => 2);
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 3 1 0 0', 'a worker reloaded into the other\'s partition: one clash');
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
is(findings_after($now), 'true 1 4 2 0 0', 'a fourth node with the coordinator\'s partition: two clashes');

# Fixed: the count goes back to 0, and the WARNINGs stop.
set_settings($workers[1], 'sno.partition' => 3);
set_settings($third, 'sno.partition' => 4);
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 4 0 0 0', 'fixed: no clash');
$offset = -s $coordinator->logfile;
$now = on_coordinator('SELECT now()');
findings_after($now);
is(log_count($coordinator, 'share a partition', $offset), 0, 'no more WARNINGs');

# A node that does not answer: said too, and counted apart.
$workers[0]->stop;
$offset = -s $coordinator->logfile;
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 0 0 1 0', 'a worker down: one check could not ask every node');
like(slurp_file($coordinator->logfile, $offset),
	qr/WARNING:  sno: could not compare the partitions of the Citus cluster of database "postgres": node \d+ at \S+ did not answer\n.*DETAIL:  The node answered: /,
	'the coordinator logs a WARNING naming the node');
$workers[0]->start;

# A node that hangs (its postmaster stopped: connections to it are accepted by the kernel and
# never answered), under a database setting that would let it hold every check: the watch keeps
# its own deadlines, names the node within seconds, and goes on.
on_coordinator(q{ALTER DATABASE postgres SET citus.node_connection_timeout = '10min'});
kill 'STOP', $workers[1]->{_pid};
my $started = time;
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 0 0 1 0', 'a hung worker: the check could not ask every node');
like(on_coordinator('SELECT detail FROM sno_partition_watch()'),
	qr/^database "postgres": node \d+ at \S+ did not answer: failed to connect/,
	'named, with what happened');
cmp_ok(time - $started, '<', 30, 'two rounds within seconds, not the ten minutes the database setting says');
kill 'CONT', $workers[1]->{_pid};
on_coordinator('ALTER DATABASE postgres RESET citus.node_connection_timeout');

# A check that does not end (here: waiting for a lock on Citus's metadata) is ended at its
# deadline, counted as failed and said, and the next round runs. Read from the other database,
# where nothing waits for that lock.
my $locker = $coordinator->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE pg_dist_node IN ACCESS EXCLUSIVE MODE');
$offset = -s $coordinator->logfile;
$now = $coordinator->safe_psql('other', 'SELECT now()');
is(findings_after($now, 'other'), 'true 0 0 0 0 1', 'a check past its deadline: counted as failed');
like($coordinator->safe_psql('other', 'SELECT detail FROM sno_partition_watch()'),
	qr/^database "postgres": its check did not end within its deadline, 4 s$/, 'and said');
like(slurp_file($coordinator->logfile, $offset),
	qr/WARNING:  sno: the partition watch could not check database "postgres"\n.*DETAIL:  The check failed: its check did not end within its deadline, 4 s\. It is counted in sno_partition_watch\(\)\.failed\./,
	'a WARNING in the log');
$locker->query_safe('ROLLBACK');
$locker->quit;
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 4 0 0 0', 'the lock gone: the next round checks again');

# Creating and dropping databases while the watch checks every second: never "being accessed by
# other users" because of it.
for my $i (1 .. 5)
{
	on_coordinator("CREATE DATABASE copy$i TEMPLATE other");
	on_coordinator("DROP DATABASE copy$i");
}
pass('CREATE DATABASE ... TEMPLATE and DROP DATABASE beside the watch');

# Its process terminated: not "watching" until it is back, and back within a second or two.
my $watch_pid = on_coordinator(
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'sno partition watch'});
on_coordinator("SELECT pg_terminate_backend($watch_pid)");
$coordinator->poll_query_until('postgres',
	"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $watch_pid)")
  or die 'the watch did not end';
is(on_coordinator('SELECT watching FROM sno_partition_watch()'), 'f', 'not watching while it is gone')
  if on_coordinator(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'sno partition watch'}) == 0;
$started = time;
$now = on_coordinator('SELECT now()');
is(findings_after($now), 'true 1 4 0 0 0', 'terminated: started again, and checking');
cmp_ok(time - $started, '<', 10, 'within seconds');

# A DROP DATABASE sets every process's latch: the watch keeps to its interval all the same.
set_settings($coordinator, 'sno.citus_watch_interval' => 3600);
sleep 2;    # a round that was under way has ended
my $checked_at = on_coordinator('SELECT checked_at FROM sno_partition_watch()');
on_coordinator('CREATE DATABASE dropped');
on_coordinator('DROP DATABASE dropped');
sleep 2;
is(on_coordinator('SELECT checked_at FROM sno_partition_watch()'), $checked_at,
	'no round started by a DROP DATABASE');
set_settings($coordinator, 'sno.citus_watch_interval' => 1);

# Workers do not run the check (Citus group 0 is the coordinator's).
is($workers[0]->safe_psql('postgres', 'SELECT watching || \' \' || databases FROM sno_partition_watch()'),
	'true 0', 'a worker watches but coordinates nothing');

# Off: no more checks.
set_settings($coordinator, 'sno.citus_watch_interval' => 0);
is(on_coordinator('SELECT watching FROM sno_partition_watch()'), 'f', 'sno.citus_watch_interval = 0 turns it off');

done_testing();
