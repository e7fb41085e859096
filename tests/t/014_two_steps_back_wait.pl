# Two steps back: a wait that cannot be avoided is shown while it lasts and logged once.
#
# Why: back 8 s, tick-tock 1 starts; then back to 15 s behind: both timelines have used that
# span, so callers must wait until the clock reaches tick-tock 1's last ID rather than repeat
# one. That wait is logged once, with its length, and shown by sno_generator_stats() while it
# lasts.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('two_steps_back', ids => 1,
	settings => { 'sno.partition' => 7000, 'sno.backfill_partition' => 7001 });
generate_into($node, 'before', 100) or die;
set_clock_offset_ms($node, -8000);
generate_into($node, 'after_first_step', 100) or die;
set_clock_offset_ms($node, -15000);
my $log_offset = -s $node->logfile;

my $waiter = psql_start($node,
	"INSERT INTO ids (id, phase) SELECT sno_generate(1), 'waiting' FROM generate_series(1, 10)");
ok($node->poll_query_until('postgres', 'SELECT waiting_until IS NOT NULL FROM sno_generator_stats()'),
	'sno_generator_stats().waiting_until shows the wait');
ok(psql_finish($waiter), 'the waiting session got its 10 IDs');

my $line = 'is behind IDs this server may have made in both tick-tock timelines; sno_generate waits';
my $lines_with_length = () =
  slurp_file($node->logfile, $log_offset) =~ /\Q$line\E [0-9]+\.[0-9] s, until /g;
is(log_count($node, $line, $log_offset) . ":$lines_with_length",
	'1:1', 'the log says so once, with the length');
is(sno_stat($node, 'waiting_until IS NULL'), 't', 'afterwards waiting_until is empty');
is(sno_stat($node, "regression_waits || ',' || clock_regressions"),
	'1,1', 'regression_waits = 1, clock_regressions = 1');
is(no_repeats($node), 't', 'no ID repeats');

done_testing();
