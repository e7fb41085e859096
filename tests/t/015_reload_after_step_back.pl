# A reload made after the server's real clock stepped back still applies.
#
# Why: reloads used to be ordered by the wall clock, so a session that applied one reload before
# the clock stepped back ignored the next. Here the whole server's clock steps back 300 s
# (libfaketime), and a reload made afterwards must reach a session that applied the previous one
# before the step: its SHOW, its IDs and the shared generator.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('reload_order', start => 0,
	settings => { 'sno.partition' => 7000, 'sno.backfill_partition' => 7001 });
my $faketime_file = $node->basedir . '/faketime';
append_to_file($faketime_file, "+0\n");
start_with_faketime($node, $faketime_file);
$node->safe_psql('postgres', 'CREATE EXTENSION sno');
create_ids_table($node);
set_settings($node, 'sno.partition' => 20);

my $open = $node->background_psql('postgres');
$open->query_safe("INSERT INTO ids (id, phase) SELECT sno_generate(1), 'partition 20'");
is($open->query_safe("SELECT sno_partition(max(id)) FROM ids WHERE phase = 'partition 20'"),
	20, 'IDs carry partition 20 before the step');

my $stepped_at = time;
open(my $file, '>', $faketime_file) or die "could not write $faketime_file: $!";
print $file "-300\n";
close($file);
# libfaketime reads the file again at most once a second in each process.
sleep 2;
my $long_before_the_step = "to_timestamp($stepped_at) - interval '200 s'";
is($open->query_safe("SELECT now() < $long_before_the_step"),
	't', "the session's clock went back 300 s");

# The session reads the files again at its own, stepped clock.
$node->safe_psql('postgres', 'ALTER SYSTEM SET sno.partition = 21; SELECT pg_reload_conf()');
ok(session_sees($open, 'sno.partition', 21), 'after the step and a reload, SHOW says 21');
$open->query_safe(
	"INSERT INTO ids (id, phase) SELECT sno_generate(1), 'partition 21' FROM generate_series(1, 10)"
);
is( $open->query_safe(
		"SELECT string_agg(DISTINCT sno_partition(id)::text, ',') FROM ids WHERE phase = 'partition 21'"
	),
	'21',
	"... the session's IDs carry 21");
is($open->query_safe('SELECT partition FROM sno_generator_stats()'),
	21, '... sno_generator_stats() says 21');
$open->quit;

done_testing();
