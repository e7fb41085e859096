# The clock going back and forth under one session (sno.test_clock_offset_ms).
#
# Why: a clock that goes back must never make an ID repeat. The clock goes back 6 s: the
# generator starts the other timeline (tick-tock 1). Forward to -3 s: it continues there. Back
# to -4 s: that span was used by both timelines (tick 0 up to "now", tick 1 up to -3 s), so the
# call waits until the clock reaches tick 1's last unit, about 1 s. Back to 0: still tick 1,
# which now runs ahead of tick 0's old IDs.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('regression', ids => 1);
my $session = $node->background_psql('postgres');

# Sets the session's clock offset, then makes $count IDs tagged with step $step.
sub step
{
	my ($offset_ms, $step, $count) = @_;
	$session->query_safe("SET sno.test_clock_offset_ms = $offset_ms");
	$session->query_safe(
		"INSERT INTO ids SELECT sno_generate(5), 'regression', $step, g FROM generate_series(1, $count) AS g"
	);
	return;
}

sub stats
{
	return $session->query_safe(
		"SELECT tick_tock || ',' || clock_regressions FROM sno_generator_stats()");
}

sub step_ticks
{
	return ticks_of($node, "phase = 'regression' AND session = $_[0]");
}

sub step_count
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM ids WHERE phase = 'regression' AND session = $_[0]");
}

step(0, 0, 10);
is(stats(), '0,0', 'offset 0: tick_tock 0, no regressions yet');

step(-6000, 1, 100);
is(stats(), '1,1', 'offset -6000: tick_tock flips to 1, clock_regressions = 1');
is(step_ticks(1) . ':' . step_count(1), '1:100', 'offset -6000: 100 IDs inserted, all tick 1');
is( $node->safe_psql(
		'postgres', q{
		SELECT max(sno_time(id)) FILTER (WHERE session = 1)
		       < min(sno_time(id)) FILTER (WHERE session = 0)
		FROM ids WHERE phase = 'regression'}),
	't',
	'offset -6000: the IDs are earlier than the offset-0 ones');

step(-3000, 2, 100);
is(stats(), '1,1', 'offset -3000: continues in tick 1, no new regression');
is(step_ticks(2) . ':' . step_count(2), '1:100', 'offset -3000: 100 IDs inserted, all tick 1');

$session->query_safe('SET sno.test_clock_offset_ms = -4000');
$session->query_safe('SELECT clock_timestamp() AS before_wait \gset');
$session->query_safe("INSERT INTO ids SELECT sno_generate(5), 'regression', 3, 1");
my $waited = $session->query_safe(
	q{SELECT round(extract(epoch FROM clock_timestamp() - :'before_wait')::numeric, 3)});
ok($waited > 0.3 && $waited < 3, "offset -4000: the call waited ${waited}s (> 0.3 s, < 3 s)");
is( $session->query_safe(
		q{SELECT tick_tock || ',' || clock_regressions || ',' || regression_waits
		  FROM sno_generator_stats()}),
	'1,1,1',
	'offset -4000: regression_waits = 1, no new regression (tick,regressions,waits)');
is( step_ticks(3) . ':' . $node->safe_psql(
		'postgres', q{
		SELECT bool_and(a.id > b.id) FROM ids AS a, ids AS b
		WHERE a.phase = 'regression' AND a.session = 3
		  AND b.phase = 'regression' AND b.session = 2}),
	'1:t',
	'offset -4000: its ID is unique, tick 1, after the -3000 IDs');

step(0, 4, 10);
is(stats(), '1,1', 'back at offset 0: tick stays 1');
is(step_ticks(4), '1', 'back at offset 0: 10 IDs inserted, tick 1');
$session->quit;

done_testing();
