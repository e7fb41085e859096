# A crash restart with the clock set back.
#
# Why: after a crash nothing is saved: the look-ahead reservation already in the state file
# (about 10 s ahead of the clock) must cover every ID issued. kill -9 of one backend makes the
# postmaster re-create shared memory from that file; with the clock 2 s behind the last IDs the
# restarted generator is behind the reservation and must flip tick-tock.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('crash_restart', ids => 1);

generate_into($node, 'before_crash', 100, meta => 7, session => 1) or die;
# 4 s later (the generator's clock moved forward; no need to sleep): the reservation must still
# reach at least 4 s past the newest ID.
set_clock_offset_ms($node, 4000);
generate_into($node, 'before_crash', 100, meta => 7, session => 2) or die;
is(sno_stat($node, "persisted_through >= last_time + interval '4 s'"),
	't', 'persisted_through is at least 4 s ahead of the last ID');
is(sno_stat($node, "tick_tock || ',' || clock_regressions"), '0,0', 'before: tick-tock 0');

# 2 s back from the newest IDs.
set_clock_offset_ms($node, 2000);
my $log_offset = crash_backend($node);
ok($node->log_contains(qr/terminated by signal 9: Killed/, $log_offset),
	'the log shows the backend killed by signal 9');
ok($node->log_contains(qr/all server processes terminated; reinitializing/, $log_offset),
	'the log shows the crash restart');

ok(generate_into($node, 'after_crash', 1000, meta => 7),
	'after the crash restart with the clock 2 s back, 1,000 IDs insert without a duplicate');
is($node->safe_psql('postgres', "SELECT count(*) FROM ids WHERE phase <> 'after_crash'"),
	200, 'all 200 earlier rows are still there');
is(ticks_of($node, "phase = 'after_crash'"), '1', 'tick-tock flipped (0 -> 1)');
is(sno_stat($node, 'clock_regressions'), 1, 'clock_regressions went 0 -> 1');
is(out_of_order($node, 'after_crash'), 0, 'the new IDs still increase');

done_testing();
