# sno_generate's meta argument out of a byte, and sno_generate_at (an ID for a given time).
#
# Why: a meta that does not fit its byte must be refused, not wrapped; and IDs made for a given
# time carry that time and the backfill partition, and are counted apart from sno_generate's.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

# sno.partition is set: derived from the system identifier, it could be 4321, the backfill
# partition below, which sno_generate_at refuses (it happened once in a run).
my $node = sno_node('meta', ids => 1, settings => { 'sno.partition' => 1 });

is( error_of($node, 'SELECT sno_generate(256)'),
	'ERROR:  22003: sno meta 256 is out of range 0..255',
	'meta 256 -> 22003');
is( error_of($node, 'SELECT sno_generate(-1)'),
	'ERROR:  22003: sno meta -1 is out of range 0..255',
	'meta -1 -> 22003');

ok(generate_into($node, 'before', 100), '100 IDs from sno_generate');
set_settings($node, 'sno.backfill_partition' => 4321);
is( $node->safe_psql(
		'postgres', q{
		SELECT sno_time(x) = '2020-01-01 00:00:00.004+00', sno_tick_tock(x), sno_meta(x),
		       sno_partition(x)
		FROM (SELECT sno_generate_at(9, '2020-01-01 00:00:00.004+00') AS x) AS s}),
	't|0|9|4321',
	'sno_generate_at(9, t): that time, tick-tock 0, meta 9, the backfill partition');
is(sno_stat($node, "backfilled || ',' || generated"),
	'1,100', 'backfilled counts it, generated does not');

done_testing();
