# sno_generate_at (backfills) never repeats an ID, across a restart and a crash, or says why not.
#
# Why: 70,000 IDs for one instant used to give 65,536 distinct ones, the same again after a
# restart, and backfills of live IDs' times collided with them. Backfill IDs carry a partition
# of their own (sno.backfill_partition) and a cursor per meta that survives restarts.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('backfills', ids => 1, settings => { 'sno.partition' => 7000 });

sub rows
{
	return $node->safe_psql('postgres', $_[0]);
}

is( error_of($node, 'SELECT sno_generate_at(1, now())'),
	"ERROR:  55000: sno_generate_at requires sno.backfill_partition to be set
DETAIL:  Backfill IDs carry a partition of their own, so that they cannot repeat an ID from sno_generate.
HINT:  Set sno.backfill_partition in postgresql.conf to a partition that no server uses for sno.partition or sno.backfill_partition, then reload.",
	'without sno.backfill_partition -> 55000, what and what to do');
set_settings($node, 'sno.backfill_partition' => 7000);
is( error_of($node, 'SELECT sno_generate_at(1, now())'),
	"ERROR:  55000: sno.backfill_partition (7000) is this server's sno.partition
DETAIL:  Backfill IDs in the live generator's partition could repeat its IDs.
HINT:  Set sno.backfill_partition to a partition that no server uses for sno.partition or sno.backfill_partition, then reload.",
	'sno.backfill_partition = sno.partition -> 55000');
set_settings($node, 'sno.backfill_partition' => 7001);

my ($ret, $out, $err) = $node->psql(
	'postgres', q{
	INSERT INTO ids SELECT sno_generate_at(1, '2024-01-01 00:00:00+00'), 'instant'
	FROM generate_series(1, 70000)});
is($ret . messages($err), '0', '70,000 IDs for one instant insert without a repeat');
is( rows(
		q{
		SELECT string_agg(t || ':' || n, ',' ORDER BY t)
		FROM (SELECT sno_tick_tock(id) AS t, count(*) AS n FROM ids
		      WHERE phase = 'instant' AND sno_partition(id) = 7001
		        AND sno_time(id) = '2024-01-01 00:00:00+00' GROUP BY 1) AS s}),
	'0:65536,1:4464',
	'... 65,536 in tick-tock 0 and 4,464 in 1, all in partition 7001');
$node->restart;
is( error_of($node, q{SELECT sno_generate_at(1, '2024-01-01 00:00:00+00')}),
	'ERROR:  54000: sno_generate_at cannot make another ID for meta 1 at 2024-01-01 00:00:00.000+00
DETAIL:  All backfill sequences of meta 1 in the 4 ms unit at 2024-01-01 00:00:00.000+00 are used.
HINT:  Spread the rows over more than one 4 ms unit, or use another meta.',
	'after a clean restart, more for that instant -> 54000, never a repeat');

generate_into($node, 'live', 20000) or die;
($ret, $out, $err) = $node->psql(
	'postgres', q{
	INSERT INTO ids SELECT sno_generate_at(1, sno_time(id)), 'of_live'
	FROM ids WHERE phase = 'live' ORDER BY id});
is($ret . messages($err), '0', "one for each of 20,000 live IDs' times (ORDER BY id) meets none of them");
is( rows(
		q{
		SELECT count(*)
		FROM (SELECT sno_time(id) AS t, row_number() OVER (ORDER BY id) AS n
		      FROM ids WHERE phase = 'of_live') AS b
		JOIN (SELECT sno_time(id) AS t, row_number() OVER (ORDER BY id) AS n
		      FROM ids WHERE phase = 'live') AS l USING (n)
		WHERE b.t = l.t}),
	20000,
	"... each has its live ID's unit");

# A real backfill: rows of another system, with their own times, in time order.
rows(
	q{
	CREATE TABLE legacy AS
	SELECT g AS n, timestamptz '2020-01-01' + g * interval '7 s' + random() * interval '5 s' AS created_at
	FROM generate_series(1, 30000) AS g});
is( rows(
		q{
		WITH filled AS (INSERT INTO ids SELECT sno_generate_at(2, created_at), 'legacy'
		                FROM legacy ORDER BY created_at RETURNING id)
		SELECT count(*) FROM filled}),
	30000,
	"a legacy table's 30,000 rows get IDs of their own times");
is( rows(
		q{
		SELECT count(*) FROM (SELECT sno_time(id) AS t, lag(sno_time(id)) OVER (ORDER BY id) AS prev
		                      FROM ids WHERE phase = 'legacy') AS s
		WHERE t < prev}),
	0,
	'... sorted by ID, the rows are in time order');
crash_backend($node);
is( rows(
		q{
		WITH filled AS (INSERT INTO ids SELECT sno_generate_at(2, created_at), 'legacy2'
		                FROM legacy ORDER BY created_at RETURNING id)
		SELECT count(*) || ':' || min(sno_tick_tock(id)) FROM filled}),
	'30000:1',
	'after a crash, a second pass over the same times: no repeat, tick-tock 1');
is( error_of($node, q{SELECT sno_generate_at(2, '2020-01-01 00:00:10+00')})
	  =~ s/already reach .*/already reach .../r,
	"ERROR:  55000: sno_generate_at cannot make another ID for meta 2 at 2020-01-01 00:00:10.000+00
DETAIL:  Backfill IDs of meta 2 already reach ...
HINT:  Make a meta's IDs in time order, in one session at a time: for rows already in a table, UPDATE t SET id = b.id FROM (SELECT ctid AS row, sno_generate_at(meta, created) AS id FROM t ORDER BY created) AS b WHERE t.ctid = b.row (an UPDATE alone goes in the table's order). Sessions backfilling at once need a meta each, and a further pass over the same times another meta. sno_backfill_cursors() shows how far each meta reaches. If no ID of this meta was kept anywhere (every statement that made one failed, as an UPDATE in the table's order that stopped here did, none was returned to a client by a SELECT or RETURNING, and no key migration's work table, sno_migration_ and a number, holds a claim of it), a superuser may retire its cursor, SELECT sno_retire_backfill_cursor(meta), and run the sorted form with the same meta; otherwise use another meta. To move a table's key to sno, run the statements of sno_migration_steps(table, meta, time_column).",
	'a third pass over those times -> 55000, saying why and what to do');
is(rows(q{SELECT string_agg(meta || ':' || tick_tock, ',' ORDER BY meta) FROM sno_backfill_cursors()}),
	'1:1,2:1', 'sno_backfill_cursors() shows metas 1 and 2');
is(no_repeats($node), 't', 'no ID anywhere repeats');

done_testing();
