# A clean restart with the clock set back.
#
# Why: at a clean shutdown the exact state is saved; a restart with the clock 20 s back must
# then start the other timeline (flip tick-tock) and issue IDs earlier than the newest one,
# never one of the IDs made before. A fresh node: tick-tock 1 has never been used, so the flip
# needs no wait.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('clean_restart', ids => 1);
my $state_file = $node->data_dir . '/sno_generator.state';

generate_into($node, 'before_clean_restart', 100, meta => 6) or die;
is(sno_stat($node, "tick_tock || ',' || clock_regressions"), '0,0', 'before: tick-tock 0');
my $newest = $node->safe_psql('postgres', 'SELECT max(sno_time(id)) FROM ids');

$node->safe_psql('postgres', "ALTER SYSTEM SET sno.test_clock_offset_ms = '-20000'");
$node->stop;
ok(-f $state_file, 'the state file exists after the clean shutdown');
$node->start;

ok(generate_into($node, 'after_clean_restart', 1000, meta => 6),
	'after a clean restart with the clock 20 s back, 1,000 IDs insert without a duplicate');
is($node->safe_psql('postgres', "SELECT count(*) FROM ids WHERE phase <> 'after_clean_restart'"),
	100, 'all 100 earlier rows are still there');
is( $node->safe_psql(
		'postgres',
		"SELECT max(sno_time(id)) < '$newest' FROM ids WHERE phase = 'after_clean_restart'"),
	't',
	'the new IDs are earlier than the newest earlier ID');
is(ticks_of($node, "phase = 'after_clean_restart'"), '1', 'tick-tock flipped (0 -> 1)');
is(sno_stat($node, "tick_tock || ',' || clock_regressions"),
	'1,1', 'stats: tick_tock 1, clock_regressions 1');
is(out_of_order($node, 'after_clean_restart'), 0, 'the new IDs still increase');

# Once more, at the same offset: the clock is ahead of tick-tock 1's IDs now, so nothing flips,
# and the saved state carries the timeline and the count of regressions across the restart.
$node->restart;
ok(generate_into($node, 'after_second_restart', 100, meta => 6),
	'after a second clean restart, 100 IDs insert without a duplicate');
is(ticks_of($node, "phase = 'after_second_restart'"), '1', '... still tick-tock 1');
is(sno_stat($node, "tick_tock || ',' || clock_regressions"),
	'1,1', '... stats: tick_tock 1, clock_regressions still 1 (saved across the restart)');

done_testing();
