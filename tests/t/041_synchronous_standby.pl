# A primary with a synchronous standby hands out no ID before the standby has the WAL record of
# the reservation covering it, wherever a commit would wait for that standby.
#
# Why: a failover promotes the synchronous standby, and the promoted server continues after the
# newest reservation it replayed. An ID returned while only the primary had the record (right
# after a restart, to a plain SELECT that commits nothing, or from a transaction rolled back) could
# be made again by the promoted server if its clock is behind. Before the wait, every `sno_generate`
# below returned at once with the standby down.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $primary = sno_node(
	'primary',
	streaming => 1,
	settings => { 'sno.partition' => 3, 'sno.backfill_partition' => 1003 });
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'");
$primary->reload;
$primary->poll_query_until('postgres',
	"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby'")
  or die 'the standby never became synchronous';
is($primary->safe_psql('postgres', 'SELECT sno_partition(sno_generate(1))'),
	'3', 'with the synchronous standby up, an ID is made at once');

# A crash loses the reservation in shared memory: the first ID needs a new one, whose record
# the stopped standby cannot confirm.
$standby->stop;
kill9_server($primary);
$primary->start;
like(
	error_of($primary, "SET statement_timeout = '2s'; SELECT sno_generate(1)"),
	qr/^ERROR:  57014: canceling statement due to statement timeout$/,
	'with the synchronous standby down, a plain SELECT waits for it, and a timeout ends the wait');
like(
	error_of(
		$primary,
		"SET statement_timeout = '2s'; BEGIN; CREATE TEMP TABLE t AS SELECT sno_generate(1); ROLLBACK"),
	qr/^ERROR:  57014: canceling statement due to statement timeout$/,
	'so does a transaction that would roll back');
like(
	error_of($primary,
		"SET statement_timeout = '2s'; SELECT sno_generate_at(1, '2020-01-01 00:00:00+00')"),
	qr/^ERROR:  57014: canceling statement due to statement timeout$/,
	"so does a backfill, whose cursor's mark is a new record");

my $waiting = psql_start($primary, 'SELECT sno_generate(1)', application_name => 'waiting');
ok( $primary->poll_query_until(
		'postgres',
		"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE application_name = 'waiting'"),
	'a waiting caller shows the SyncRep wait event, as a commit does');

# A session whose commits do not wait for standbys does not wait either, and what it is given
# does not let the others skip their wait.
is( $primary->safe_psql('postgres',
		"SET synchronous_commit = local; SELECT sno_partition(sno_generate(1))"),
	'3', 'with synchronous_commit = local, a session is given an ID at once');
like(
	error_of($primary, "SET statement_timeout = '2s'; SELECT sno_generate(1)"),
	qr/^ERROR:  57014: canceling statement due to statement timeout$/,
	'a session whose commits wait still waits for the standby');
is( $primary->safe_psql(
		'postgres', "SELECT state FROM pg_stat_activity WHERE application_name = 'waiting'"),
	'active',
	'and so does the caller that waited first');

$standby->start;
ok(psql_finish($waiting), 'once the standby is back, the waiting caller is given its ID');
is( $primary->safe_psql('postgres',
		"SET statement_timeout = '10s'; SELECT sno_partition(sno_generate(1)), sno_partition(sno_generate_at(1, '2020-01-01 00:00:00+00'))"),
	'3|1003', 'and every caller again');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_activity WHERE wait_event = \'SyncRep\''),
	'0', 'nobody waits any more');

done_testing();
