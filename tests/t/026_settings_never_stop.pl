# sno settings that cannot work never stop PostgreSQL: at a crash restart the generator keeps the
# last settings that worked (and warns); at the first start it leaves the server up with
# generation refused (and warns), until the settings are fixed and reloaded.
#
# Why: moving the sequence range one setting at a time passes through sno.sequence_min above
# sno.sequence_max. A reload keeps the old bounds, but the postmaster re-creates shared memory
# with the reloaded values when any backend crashes; sno used to raise FATAL there, and the
# server stayed down until someone edited the configuration (issue 22). PostgreSQL's own settings
# never do that.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

# The two kinds of values that sno refuses; those PostgreSQL refuses itself come last.
my %bad = (
	'sequence_min above sequence_max' => [ 40000, 30000, 0 ],
	'a pool of 3 sequences'           => [ 40000, 40002, 3 ],);

# "lo..hi count" when every ID of the phase has a sequence within lo..hi, else the range found.
sub sequences_of
{
	my ($node, $phase, $lo, $hi) = @_;
	return $node->safe_psql('postgres',
		"SELECT CASE WHEN min(sno_sequence(id)) >= $lo AND max(sno_sequence(id)) <= $hi "
		  . "THEN '$lo..$hi' ELSE min(sno_sequence(id)) || '..' || max(sno_sequence(id)) END "
		  . "|| ' ' || count(*) FROM ids WHERE phase = '$phase'");
}

sub pool_message
{
	my ($min, $max, $pool) = @_;
	return "sno.sequence_min = $min and sno.sequence_max = $max leave a pool of $pool "
	  . 'sequences per 4 ms; at least 4 are needed';
}

# --- At a crash restart: the last settings that worked.
my $node = sno_node('crash', ids => 1,
	settings => { 'sno.partition' => 5, 'sno.sequence_min' => 40000 });
# Settings applied by a backend after the start are the ones kept, not the start's.
set_settings($node, 'sno.sequence_max' => 50000);
generate_into($node, 'applied', 1000) or die;
is(sequences_of($node, 'applied', 40000, 50000), '40000..50000 1000', 'the reloaded bounds 40000..50000 apply');

for my $kind (sort keys %bad)
{
	my ($min, $max, $pool) = @{ $bad{$kind} };
	# The issue's reproduction: the reload is refused (as before), then a backend crashes.
	set_settings($node, 'sno.sequence_min' => $min, 'sno.sequence_max' => $max);
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT sno_generate(1) IS NOT NULL');
	like($err, qr/WARNING:  sno: ignoring new settings: \Q${\pool_message($min, $max, $pool)}\E; keeping partition 5 and sequences 40000\.\.50000/,
		"$kind: the reload is refused with a WARNING");
	my $offset = crash_backend($node);
	ok($node->log_contains(qr/terminated by signal 9: Killed/, $offset), "$kind: a backend was killed");
	is(log_count($node, 'FATAL:  sno', $offset) + log_count($node, 'database system is shut down', $offset),
		0, "$kind: no FATAL from sno after the crash, the server did not shut down");
	ok( $node->log_contains(
			qr/WARNING:  sno: ignoring the settings after the crash restart: \Q${\pool_message($min, $max, $pool)}\E; keeping partition 5 and sequences 40000\.\.50000/,
			$offset),
		"$kind: the crash restart warns and keeps the last working settings");
	ok(generate_into($node, "after crash, $kind", 1000),
		"$kind: the server is up and generates after the crash restart");
	is(sequences_of($node, "after crash, $kind", 40000, 50000), '40000..50000 1000',
		"$kind: with the kept bounds 40000..50000");
	is(sno_stat($node, "partition || ' ' || sequence_min || '..' || sequence_max"),
		'5 40000..50000', "$kind: sno_generator_stats() shows the kept settings");
}
# Fixed and reloaded: applied at the next call, as any reload.
set_settings($node, 'sno.sequence_min' => 45000, 'sno.sequence_max' => 46000);
generate_into($node, 'fixed', 1000) or die;
is(sequences_of($node, 'fixed', 45000, 46000), '45000..46000 1000', 'fixed settings apply after a reload');
is(no_repeats($node), 't', 'no ID repeated');
$node->stop;

# --- At the first start: the server comes up with generation off.
my $first = sno_node('first_start', ids => 1,
	settings => { 'sno.partition' => 6, 'sno.backfill_partition' => 9 });
generate_into($first, 'before', 1000) or die;
for my $kind (sort keys %bad)
{
	my ($min, $max, $pool) = @{ $bad{$kind} };
	$first->stop;
	$first->append_conf('postgresql.conf', "sno.sequence_min = $min\nsno.sequence_max = $max\n");
	my $offset = -s $first->logfile;
	# A clock 60 s behind the IDs made before the first time: only the state file keeps them
	# from repeating.
	$first->append_conf('postgresql.conf', "sno.test_clock_offset_ms = -60000\n");
	ok($first->start(fail_ok => 1), "$kind: the server starts");
	ok( $first->log_contains(
			qr/WARNING:  sno: \Q${\pool_message($min, $max, $pool)}\E; sno_generate and sno_generate_at are off/,
			$offset),
		"$kind: the log says generation is off and why");
	my $refusal =
	    "ERROR:  F0000: sno cannot generate IDs: ${\pool_message($min, $max, $pool)}\n"
	  . 'DETAIL:  The server started with these settings; sno_generate and sno_generate_at are '
	  . "off until they can work. Everything else works.\n"
	  . 'HINT:  Set sno.sequence_min and sno.sequence_max in postgresql.conf so that they leave '
	  . 'at least 4 sequences, then reload (SELECT pg_reload_conf()); the next call applies them.';
	is(error_of($first, 'SELECT sno_generate(1)'), $refusal, "$kind: sno_generate is refused, F0000");
	is(error_of($first, "SELECT sno_generate_at(1, '2020-01-01')"),
		$refusal, "$kind: and so is sno_generate_at");
	is( $first->safe_psql('postgres',
			"SELECT sno_partition(id) || ' ' || (sno_decode(id)).sequence || ' ' || (SELECT count(*) > 0 FROM ids)
			 FROM sno_from_parts('2024-05-01', 1, 6, 7) AS id"),
		'6 7 true', "$kind: the type and decoding work");
	# A crash restart while generation is off: still up, still off (there is nothing to keep).
	$offset = crash_backend($first);
	is(log_count($first, 'FATAL:  sno', $offset) + log_count($first, 'database system is shut down', $offset),
		0, "$kind: a crash restart: no FATAL from sno, no shutdown");
	ok( $first->log_contains(
			qr/WARNING:  sno: \Q${\pool_message($min, $max, $pool)}\E; sno_generate and sno_generate_at are off/,
			$offset),
		"$kind: after the crash restart generation is still off, and the log says so");
	is(error_of($first, 'SELECT sno_generate(1)'), $refusal, "$kind: still refused after the crash");
	# The state file was neither read nor overwritten meanwhile: the stop keeps it.
	$first->stop;
	$first->start;
	# Fixed by a reload: the next call applies the settings and reads the state file.
	$offset = -s $first->logfile;
	set_settings($first, 'sno.sequence_min' => 100, 'sno.sequence_max' => 1099);
	ok(generate_into($first, "fixed, $kind", 1000), "$kind: fixed and reloaded, sno_generate works");
	ok($first->log_contains(qr/sno: the settings can work now: partition 6, sequences 100\.\.1099/, $offset),
		"$kind: the log says the settings can work now");
	is(sequences_of($first, "fixed, $kind", 100, 1099), '100..1099 1000', "$kind: with the fixed bounds");
	is(no_repeats($first), 't', "$kind: no ID repeats an earlier one, with the clock behind them");
	# The first time the clock is behind the IDs before; later it is not, and the count comes
	# from the file.
	is(sno_stat($first, 'clock_regressions'), 1,
		"$kind: the state file was read: one clock regression, from the file or the clock behind it");
	is(ticks_of($first, "phase = 'fixed, $kind'"), '1', "$kind: the new IDs are in tick-tock timeline 1");
	$first->safe_psql('postgres', 'ALTER SYSTEM RESET ALL');
}
$first->stop;

# --- Values PostgreSQL itself refuses at start-up (it warns and uses the default): the generator
# must not make IDs with a partition or range nobody chose. Off until a restart with valid values.
my %refused = (
	'a partition out of range' => [ 'sno.partition',    '70000', -1 ],
	'a bound that is no number' => [ 'sno.sequence_max', 'many', 65535 ],);
for my $kind (sort keys %refused)
{
	my ($name, $text, $default) = @{ $refused{$kind} };
	my $node = sno_node("refused_$name", ids => 1, start => 0, settings => { $name => $text });
	ok($node->start(fail_ok => 1), "$kind: the server starts");
	my $reason = "$name = '$text' in the configuration files is not a valid value, so PostgreSQL uses $default instead";
	ok($node->log_contains(qr/WARNING:  sno: \Q$reason\E; sno_generate and sno_generate_at are off/),
		"$kind: the log says generation is off and why");
	ok(!$node->log_contains(qr/using partition \d+ derived from the system identifier/),
		"$kind: and names no partition as if it were in use");
	$node->safe_psql('postgres', 'CREATE EXTENSION sno');
	create_ids_table($node);
	my $refusal =
	    "ERROR:  F0000: sno cannot generate IDs: $reason\n"
	  . 'DETAIL:  The server started with this setting; sno_generate and sno_generate_at are off, '
	  . 'so that no ID is made with a partition or sequence range that was not chosen. Everything '
	  . "else works.\n"
	  . 'HINT:  Correct it in postgresql.conf and restart the server (a reload cannot show that the '
	  . 'value now comes from the configuration files).';
	is(error_of($node, 'SELECT sno_generate(1)'), $refusal, "$kind: sno_generate is refused, F0000");
	my $offset = crash_backend($node);
	is(error_of($node, 'SELECT sno_generate(1)'), $refusal, "$kind: still refused after a crash restart");
	set_settings($node, $name => 1000);
	is(error_of($node, 'SELECT sno_generate(1)'), $refusal, "$kind: and after a reload");
	$node->restart;
	ok(generate_into($node, 'restarted', 10), "$kind: after a restart with a valid value, it generates");
	my $check = $name eq 'sno.partition'
	  ? q{SELECT string_agg(DISTINCT sno_partition(id)::text, ',') FROM ids}
	  : q{SELECT max(sno_sequence(id)) <= 1000 FROM ids};
	is($node->safe_psql('postgres', $check), $name eq 'sno.partition' ? '1000' : 't',
		"$kind: with the value now set");
	$node->stop;
}

done_testing();
