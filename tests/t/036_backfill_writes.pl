# Backfill writes and sno_generate (issue 22, item 4). A caller chooses the times it backfills,
# and so how often the state file must be written: calls an hour of data time apart each need a
# durable write. Those writes are spaced to at most 20 a second server-wide
# (src/pg/server/backfills.rs), each renews the live generator's reservation, and sno_generate
# never waits for one (src/pg/server/persistence.rs). The first two are shown with lower bounds,
# which no load can break: writes never come faster than the spacing, and a renewed reservation
# reaches 10 s past the clock; the last by the order in which two sessions finish.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;
use Time::HiRes qw(time);

my $node = sno_node('backfill', settings => { 'sno.partition' => 1, 'sno.backfill_partition' => 2 });

# A fresh start, no ID made: the reservation is the state written at the last shutdown, behind
# the clock. One backfill write renews it to 10 s past the clock.
$node->restart;
is( $node->safe_psql(
		'postgres', q{
		SELECT persisted_through < clock_timestamp() FROM sno_generator_stats()}),
	't',
	'before any ID, the live reservation is behind the clock');
is( $node->safe_psql(
		'postgres', q{
		SELECT sno_generate_at(9, '2020-01-01') IS NOT NULL;
		SELECT persisted_through > clock_timestamp() + interval '9 s' FROM sno_generator_stats()}),
	"t\nt",
	'a backfill write renews the live reservation to 10 s past the clock');

# 101 calls 60 days of data time apart, farther than any mark reaches (1,024 hours at most): each
# needs a write, and 100 spacings of 50 ms make at least 5 s, where the writes alone (fsync is
# off in these tests) take a fraction of that.
my ($status, $out, $err) = $node->psql(
	'postgres', q{
	SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
	SELECT count(sno_generate_at(11, timestamptz '2010-01-01' + n * interval '60 days'))
	FROM generate_series(0, 100) n;
	SELECT extract(epoch FROM clock_timestamp()) - :t0 >= 5.0 AS spaced});
is($out, "101\nt", '101 backfill writes take at least 5 s: at most 20 a second') or diag($err);

# The same calls from two sessions at once share the budget: 102 writes, at least 5 s.
my @runs = map {
	psql_start($node,
		"SELECT count(sno_generate_at($_, timestamptz '2010-01-01' + n * interval '60 days')) "
		  . "FROM generate_series(0, 50) n;")
} (12, 13);
my $started = time();
ok(psql_finish($_), 'a backfilling session finishes') for @runs;
cmp_ok(time() - $started, '>=', 5.0, '... and two of them together are spaced as one');

# A backfill's write that takes 5 s (sno.test_state_write_delay_ms, in test builds only, stands
# for a slow disk: the session sleeps after putting its file in place, before syncing the
# directory) is under way; a session whose ID needs a write of its own (its clock 60 s ahead,
# past any reservation) gets it, and finishes while the backfill still waits.
my $slow = psql_start(
	$node,
	"SET sno.test_state_write_delay_ms = 5000; "
	  . "SELECT sno_generate_at(14, '2021-01-01') IS NOT NULL;",
	application_name => 'slow_backfill');
ok( $node->poll_query_until(
		'postgres', q{SELECT pg_read_file('sno_generator.state') LIKE '%backfill.14=%'}),
	'the slow backfill is inside its write');
# Monitoring does not wait for it (issue 34): the count answers at once, and the listing of the
# cursors, which must wait for the write, can be cancelled.
my $asked = time();
is( $node->safe_psql(
		'postgres', q{
		SELECT backfilled > 0 FROM sno_generator_stats();
		SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'slow_backfill' AND state = 'active'}),
	"t\n1",
	'sno_generator_stats() answers while the backfill write is under way');
my (undef, undef, $cancelled) = $node->psql('postgres',
	"SET statement_timeout = '200ms'; SELECT count(*) FROM sno_backfill_cursors()");
like($cancelled, qr/canceling statement due to statement timeout/,
	'sno_backfill_cursors() waits for the write, but a statement timeout ends the wait');
cmp_ok(time() - $asked, '<', 3, '... both within 3 s, though the write takes 5');
is( $node->safe_psql(
		'postgres', q{
		SET sno.test_clock_offset_ms = 60000;
		SELECT sno_generate(1) IS NOT NULL;
		SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'slow_backfill' AND state = 'active'}),
	"t\n1",
	'sno_generate writes its own reservation while a backfill write is under way, without waiting');
ok(psql_finish($slow), 'the slow backfill finishes');
like(
	$node->safe_psql('postgres', 'SELECT pg_read_file(\'sno_generator.state\')'),
	qr/backfill\.14=/,
	'... and the state file keeps its mark, whichever write was put in place last');

# A backfill's writes follow its rows, not its span of time (issue 35): a mark reaches twice as
# far each time the cursor passes it within a second, up to 1,024 hours. A year at one row a
# minute, 8,760 hours of data, needed 8,760 writes (and 7 minutes); it needs about 25 now,
# counted as the sno records the writes put in the WAL.
$node->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
my $wal_from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(sno_generate_at(15, timestamptz '2011-01-01' + n * interval '1 minute'))
		FROM generate_series(0, 525599) n}),
	'525600',
	'a year at one row a minute');
my $writes = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_get_wal_records_info('$wal_from', pg_current_wal_flush_lsn()) "
	  . "WHERE resource_manager = 'sno'");
cmp_ok($writes, '<', 200, "in $writes writes of the state file, not one per hour of data");
like(
	$node->safe_psql('postgres', 'SELECT pg_read_file(\'sno_generator.state\')'),
	qr/^backfill\.15=/m,
	'... its mark recorded');

# A caller writing a reservation on a slow disk: another one that needs a reservation too (both
# with clocks 120 s ahead, past every reservation) waits for it, and a statement timeout ends that
# wait: a stalled disk must not make a caller deaf to cancels.
my $slow_writer = psql_start(
	$node,
	"SET sno.test_clock_offset_ms = 120000; SET sno.test_state_write_delay_ms = 5000; "
	  . "SELECT sno_generate(1) IS NOT NULL;",
	application_name => 'slow_writer');
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'slow_writer' AND state = 'active'"
) or die 'the slow writer never started';
sleep(1);    # its write starts at once, and sleeps 5 s
my $waited_from = time();
like(
	error_of(
		$node,
		"SET sno.test_clock_offset_ms = 120000; SET statement_timeout = '1s'; SELECT sno_generate(1)"),
	qr/^ERROR:  57014: canceling statement due to statement timeout$/,
	'a caller waiting behind a slow write of the reservation can be cancelled');
cmp_ok(time() - $waited_from,
	'<', 3, '... at its timeout, not once the write is done 4 s later');
ok(psql_finish($slow_writer), 'the slow writer finishes');

done_testing();
