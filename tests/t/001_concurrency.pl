# Many sessions hammering the one shared generator at once, then one session's IDs against the
# times of their calls.
#
# Why: sno_generate's promise only means something across real backends: concurrent sessions
# must never get the same ID, each session's IDs must increase, the bytes must sort in time
# order, and every ID must carry the time its call ran at.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('concurrency', ids => 1);
my $partition = derived_partition($node);
ok(defined $partition, 'the start-up log names the partition derived from the system identifier');
$partition //= -1;
is(sno_stat($node, 'partition'), $partition, "sno_generator_stats().partition is it ($partition)");

# Nothing has called sno_generate before, so the generated counter must account for exactly
# these IDs.
is(generate_concurrently($node, 'concurrency', 8, 125000), 0,
	'8 concurrent sessions x 125,000 IDs insert without a duplicate');
is($node->safe_psql('postgres', "SELECT count(*) FROM ids WHERE phase = 'concurrency'"),
	1000000, 'exactly 1,000,000 rows');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) || ':' || min(c) || '..' || max(c)
		FROM (SELECT count(*) AS c FROM ids WHERE phase = 'concurrency' GROUP BY session) AS s}),
	'8:125000..125000',
	'each of the 8 sessions got 125,000 IDs');
is(out_of_order($node, 'concurrency'), 0, "each session's IDs strictly increase in call order");
is(sno_stat($node, 'generated'), 1000000, 'sno_generator_stats().generated = 1000000');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM ids WHERE sno_meta(id) <> 1 OR sno_partition(id) <> $partition"),
	0,
	'every ID has meta 1 and the derived partition');

# Byte order = time order: sorting by ID never goes back in time, and the sno ordering is the
# ordering of the 10 bytes.
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM (SELECT sno_time(id) AS t, lag(sno_time(id)) OVER (ORDER BY id) AS prev
		                      FROM ids) AS s
		WHERE t < prev}),
	0,
	'ordered by id, sno_time never decreases');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM (SELECT id::bytea AS b, lag(id::bytea) OVER (ORDER BY id) AS prev
		                      FROM ids) AS s
		WHERE b <= prev}),
	0,
	'ordered by id, the bytes strictly increase');
is( $node->safe_psql(
		'postgres', q{
		SELECT min(sno_time(id)) > now() - interval '10 min'
		       AND max(sno_time(id)) <= clock_timestamp() FROM ids}),
	't',
	'sno_time of the IDs is now');

# Within a run of sequences a session times the rest of the unit with the CPU's counter instead
# of reading the clock (README, "Clock reads"). Each ID must still carry the unit its call ran
# in: one that started no later than the call ended, and ended after the call began.
like(
	slurp_file($node->logfile),
	qr/LOG:  sno: (timing runs of sequences with the CPU's time-stamp counter \([0-9.]+ GHz\)|no usable time-stamp counter .*; every ID reads the clock)/,
	'the log says how sessions time their runs of sequences');
is( $node->safe_psql(
		'postgres', q{
		WITH calls AS MATERIALIZED (
			SELECT g, clock_timestamp() AS began, sno_generate(1) AS id, clock_timestamp() AS ended
			FROM generate_series(1, 500000) AS g),
		stored AS (INSERT INTO ids SELECT id, 'timing', 0, g FROM calls)
		SELECT count(*) FROM calls
		WHERE sno_time(id) > ended OR sno_time(id) + interval '4 ms' <= began}),
	0,
	'500,000 IDs in one session each carry the 4 ms unit of their call');

done_testing();
