# After the clock steps back or forward and the server restarts or crashes, the first ID comes
# within the 10 s look-ahead, and none repeats.
#
# Why: the clock went back 120 s while IDs were made for about 6 s; then a crash. The
# look-ahead written after the step used to carry the old timeline's reservation, so the
# restarted generator waited until the clock had caught up with it: 108 s. Each scenario runs on
# a fresh node, so that no history of another one can excuse or cause a wait.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $lookahead_s = 10;

# About $seconds of steady generation: 100 IDs every 0.1 s.
sub generate_for
{
	my ($node, $phase, $seconds) = @_;
	my $rounds = $seconds * 10;
	$node->safe_psql(
		'postgres', qq{
		DO \$\$ BEGIN FOR i IN 1..$rounds LOOP
			INSERT INTO ids (id, phase) SELECT sno_generate(1), '$phase' FROM generate_series(1, 100);
			PERFORM pg_sleep(0.1);
		END LOOP; END \$\$});
	return;
}

# Each scenario: what happens to the clock and the server before the first ID is timed.
my @scenarios = (
	[
		'step_back_then_crash',
		'120 s back, 6 s of IDs, crash',
		sub {
			my ($node) = @_;
			set_clock_offset_ms($node, -120000);
			generate_for($node, 'after_step', 6);
			crash_backend($node);
		}
	],
	[
		'step_back_then_clean_stop',
		'120 s back, 6 s of IDs, clean restart',
		sub {
			my ($node) = @_;
			set_clock_offset_ms($node, -120000);
			generate_for($node, 'after_step', 6);
			$node->restart;
		}
	],
	[
		'two_crashes',
		'120 s back, two crashes 2 s apart',
		sub {
			my ($node) = @_;
			set_clock_offset_ms($node, -120000);
			generate_for($node, 'after_step', 3);
			crash_backend($node);
			sleep 2;
			crash_backend($node);
		}
	],
	[
		'forward_then_back',
		'60 s forward, back, crash',
		sub {
			my ($node) = @_;
			set_clock_offset_ms($node, 60000);
			generate_for($node, 'ahead', 2);
			set_clock_offset_ms($node, 0);
			generate_for($node, 'back', 2);
			crash_backend($node);
		}
	]);

for my $scenario (@scenarios)
{
	my ($name, $description, $steps) = @$scenario;
	my $node = sno_node($name, ids => 1,
		settings => { 'sno.partition' => 7000, 'sno.backfill_partition' => 7001 });
	generate_into($node, 'before', 100) or die;
	$steps->($node);
	my $waited = first_id_seconds($node, 'first');
	cmp_ok($waited, '<=', $lookahead_s + 1,
		"$description: first ID in ${waited}s (within the look-ahead, 1 s for the machine)");
	is(no_repeats($node), 't', "$description: no ID repeats");
	$node->stop;
}

done_testing();
