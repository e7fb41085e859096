# The settings: sno.partition through a reload, in open and new sessions; who may change what.
#
# Why: sno.partition decides uniqueness between servers, so it may change only through the
# configuration files and a reload, never per session, for superusers and others alike; and a
# reload must reach every session, open ones included.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('settings', ids => 1);
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN');
set_settings($node, 'sno.backfill_partition' => 4321);
my $partition = derived_partition($node);
ok(defined $partition, 'the start-up log names the derived partition');
$partition //= -1;
is(sno_stat($node, 'partition'), $partition, "stats partition = the derived partition");

# A session that is already open applies the reload at its next sno_generate call, once it has
# the new value.
my $open = $node->background_psql('postgres');
$open->query_safe("INSERT INTO ids SELECT sno_generate(4), 'partition', 1, 1");
$node->safe_psql('postgres', 'ALTER SYSTEM SET sno.partition = 1234; SELECT pg_reload_conf()');
session_sees($open, 'sno.partition', 1234) or die 'the open session never saw the reload';
$open->query_safe("INSERT INTO ids SELECT sno_generate(4), 'partition', 1, 2");
is( $open->query_safe(
		"SELECT string_agg(sno_partition(id)::text, ',' ORDER BY n) FROM ids WHERE phase = 'partition'"
	),
	"$partition,1234",
	'an open session switches to sno.partition = 1234 after the reload');
$open->quit;

reload_and_wait($node);
generate_into($node, 'partition', 10, meta => 4, session => 2) or die;
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT sno_partition(id)::text, ',')
		FROM ids WHERE phase = 'partition' AND session = 2}),
	'1234',
	"a new session's IDs have partition 1234");
is(sno_stat($node, 'partition'), 1234, 'stats partition = 1234');
is($node->safe_psql('postgres', 'SHOW sno.partition'), 1234, 'SHOW sno.partition = 1234');

my $refused = 'ERROR:  55P02: parameter "sno.partition" cannot be changed now';
is(error_of($node, 'SET sno.partition = 5'), $refused, 'SET sno.partition as superuser -> 55P02');
is(error_of($node, 'SET ROLE app; SET sno.partition = 5'),
	$refused, 'SET sno.partition after SET ROLE app -> 55P02');
is(error_of($node, 'SET sno.partition = 5', user => 'app'),
	$refused, 'SET sno.partition logged in as app -> 55P02');
is( error_of($node, 'SET sno.sequence_max = 5', user => 'app'),
	'ERROR:  55P02: parameter "sno.sequence_max" cannot be changed now',
	'SET sno.sequence_max logged in as app -> 55P02');
is( error_of($node, 'SET sno.test_clock_offset_ms = 5', user => 'app'),
	'ERROR:  42501: permission denied to set parameter "sno.test_clock_offset_ms"',
	'SET sno.test_clock_offset_ms logged in as app -> 42501');
is( error_of($node, 'SET sno.test_state_write_delay_ms = 5', user => 'app'),
	'ERROR:  42501: permission denied to set parameter "sno.test_state_write_delay_ms"',
	'SET sno.test_state_write_delay_ms logged in as app -> 42501');
is( $node->safe_psql(
		'postgres', q{
		SELECT name || '|' || setting || '|' || context || '|' || (short_desc <> '')
		FROM pg_settings WHERE name LIKE 'sno.%' ORDER BY name}),
	'sno.backfill_partition|4321|sighup|true
sno.citus_watch_interval|60|sighup|true
sno.partition|1234|sighup|true
sno.partition_lease|60|sighup|true
sno.partition_offset|0|postmaster|true
sno.partition_registry||sighup|true
sno.partition_source|setting|postmaster|true
sno.rewrite_time_predicates|on|user|true
sno.sequence_max|65535|sighup|true
sno.sequence_min|0|sighup|true
sno.test_clock_offset_ms|0|superuser|true
sno.test_migration_pause_ms|0|superuser|true
sno.test_renewer_off|off|sighup|true
sno.test_state_log_delay_ms|0|superuser|true
sno.test_state_sync_fails|off|superuser|true
sno.test_state_write_delay_ms|0|superuser|true',
	'pg_settings lists the settings, with descriptions');

done_testing();
