# The pool of sequences per 4 ms unit (sno.sequence_min..sno.sequence_max): too small for the
# load, too small to be a pool at all on reload, and at start-up.
#
# Why: when a unit's sequences run out, callers must wait for the next unit instead of
# repeating an ID or leaving the bounds, and the log must say so (at most once a second). A
# reload must never break a running server: bounds too small are refused with a WARNING and the
# old ones stay. At start-up there are no old bounds to keep: the server must refuse to start.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;
use Time::HiRes qw(time);

my $node = sno_node('pool', ids => 1);
my $partition = derived_partition($node) // -1;

# 4 sequences per unit cannot serve 8 busy sessions.
set_settings($node, 'sno.sequence_min' => 0, 'sno.sequence_max' => 3);
my $log_offset = -s $node->logfile;
my $started = time;
is(generate_concurrently($node, 'overflow', 8, 500, meta => 2), 0,
	'pool 0..3: 8 concurrent sessions x 500 IDs insert without a duplicate');
my $elapsed = time - $started;
is($node->safe_psql('postgres', "SELECT count(*) FROM ids WHERE phase = 'overflow'"),
	4000, '4,000 rows');
is(out_of_order($node, 'overflow'), 0, "each session's IDs strictly increase");
is( $node->safe_psql(
		'postgres', q{
		SELECT min(sno_sequence(id)) || '..' || max(sno_sequence(id))
		FROM ids WHERE phase = 'overflow'}),
	'0..3',
	'every sequence is within 0..3');
is(sno_stat($node, "sequence_min || '..' || sequence_max"), '0..3', 'stats show the bounds 0..3');
cmp_ok(sno_stat($node, 'overflow_stalls'), '>', 0, 'overflow_stalls > 0');
my $overflow_line = qr/LOG:  sno: the sequence pool is overflowing: [0-9]+ calls waited for a new 4 ms unit \(partition $partition, sequences 0\.\.3, 4 per unit\)/;
my $lines = () = slurp_file($node->logfile, $log_offset) =~ /$overflow_line/g;
cmp_ok($lines, '>=', 1, 'the server log has the overflow line');
cmp_ok($lines, '<=', int($elapsed) + 1,
	sprintf('at most one overflow line per second (%.1f s)', $elapsed));

# Bounds leaving 3 sequences per unit, on reload: the session that meets them warns, keeps 0..3.
set_settings($node, 'sno.sequence_min' => 10, 'sno.sequence_max' => 12);
my ($ret, $out, $err) = $node->psql('postgres',
	"INSERT INTO ids SELECT sno_generate(3), 'bad_bounds', 1, g FROM generate_series(1, 50) AS g");
is( messages($err),
	"WARNING:  sno: ignoring new settings: sno.sequence_min = 10 and sno.sequence_max = 12 leave a pool of 3 sequences per 4 ms; at least 4 are needed; keeping partition $partition and sequences 0..3",
	"pool 10..12: a new session's sno_generate warns once, with the numbers");
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) || ':' || min(sno_sequence(id)) || '..' || max(sno_sequence(id))
		FROM ids WHERE phase = 'bad_bounds'}),
	'50:0..3',
	'the IDs were still made, with the old bounds 0..3');
is(sno_stat($node, "sequence_min || '..' || sequence_max"), '0..3', 'stats still show 0..3');

reset_settings($node, 'sno.sequence_min', 'sno.sequence_max');
ok(generate_into($node, 'defaults', 100, meta => 3),
	'after RESET + reload, IDs insert without a duplicate');
is(sno_stat($node, "sequence_min || '..' || sequence_max"),
	'0..65535', 'stats show the defaults 0..65535');

# The same bounds at start-up, from a file included only for that start: the server starts
# (no sno setting stops PostgreSQL), generation is off, and both the log and the refusal say
# why. t/026_settings_never_stop.pl covers every kind of bad value.
$node->stop;
$node->append_conf('postgresql.conf', "include_if_exists = 'bad_bounds.conf'");
$node->append_conf('bad_bounds.conf', "sno.sequence_min = 10\nsno.sequence_max = 12");
$log_offset = -s $node->logfile;
ok($node->start(fail_ok => 1), 'start with sno.sequence_min = 10, sno.sequence_max = 12 succeeds');
my $pool_of_3 = 'sno.sequence_min = 10 and sno.sequence_max = 12 leave a pool of 3 sequences '
  . 'per 4 ms; at least 4 are needed';
ok( $node->log_contains(
		qr/WARNING:  sno: \Q$pool_of_3\E; sno_generate and sno_generate_at are off/,
		$log_offset),
	'the log says why generation is off (WARNING)');
like(error_of($node, 'SELECT sno_generate(1)'),
	qr/^ERROR:  F0000: sno cannot generate IDs: \Q$pool_of_3\E/,
	'sno_generate is refused with F0000, naming the settings');
is($node->safe_psql('postgres', "SELECT sno_partition('brpk4q72xwf2m63l')"),
	'39434', 'decoding still works');
$node->stop;
unlink($node->data_dir . '/bad_bounds.conf') or die "could not remove bad_bounds.conf: $!";
$node->start;
ok(generate_into($node, 'final', 100, meta => 10),
	'after a normal start, 100 more IDs insert without a duplicate');

done_testing();
