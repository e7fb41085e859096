# Moving a table's bigint key to sno with the steps of docs/migration.md (issue 35, item 2), with
# the application writing throughout and the server crashing in the middle of the fill: the
# same rows after, every foreign key holding and pointing at the same row as before, every ID
# unique and in the order of the time column. tests/sql/migration.sql covers each step's SQL
# surface; this is the whole server's part.
#
# SNO_MIGRATION_ROWS orders (default 20,000), as many lines (NOT NULL, ON DELETE CASCADE,
# indexed) and a quarter as many notes (nullable, ON DELETE SET NULL, under a uuid key). With
# more than 100,000 the crash is left out and each step's time printed, and the time of the
# built-in baseline (one plain UPDATE a table, on copies): that is the run at size of
# docs/benchmarks.md (SNO_MIGRATION_ROWS=10000000 PG_TEST_TIMEOUT_DEFAULT=3600).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;
use File::Temp;
use Time::HiRes qw(time);

my $rows = $ENV{SNO_MIGRATION_ROWS} // 20_000;
my $at_size = $rows > 100_000;
my $node = sno_node(
	'migration',
	settings => {
		'sno.partition' => 1,
		'sno.backfill_partition' => 2,
		# The run at size writes as a server would.
		$at_size ? (fsync => 'on', max_wal_size => '8GB', maintenance_work_mem => '512MB') : ()
	});

# A psql script, as the docs give it (stops at the first error).
sub run_script
{
	my ($sql) = @_;
	my ($file, $path) = File::Temp::tempfile(DIR => $PostgreSQL::Test::Utils::tmp_check);
	print $file $sql;
	close $file;
	return $node->psql('postgres', '', extra_params => [ '-v', 'ON_ERROR_STOP=1', '-f', $path ]);
}

my $started = time();
$node->safe_psql(
	'postgres', qq{
	CREATE TABLE orders (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		created_at timestamptz NOT NULL,
		total integer NOT NULL);
	CREATE TABLE lines (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		order_id bigint NOT NULL,
		qty integer NOT NULL);
	CREATE TABLE notes (
		note_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
		order_id bigint,
		body text);
	-- Times over five years, in neither the order of the keys nor of the table.
	INSERT INTO orders (created_at, total)
	SELECT timestamptz '2020-01-01' + (g::bigint * 7919 % $rows) * (interval '5 years' / $rows), g
	FROM generate_series(1, $rows) AS g;
	INSERT INTO lines (order_id, qty)
	SELECT 1 + (g::bigint * 104729 % $rows), g FROM generate_series(1, $rows) AS g;
	INSERT INTO notes (order_id, body)
	SELECT CASE WHEN g % 3 <> 0 THEN 1 + (g::bigint * 7 % $rows) END, 'note ' || g
	FROM generate_series(1, $rows / 4) AS g;
	-- After the rows: one check of each foreign key, not one a row.
	ALTER TABLE lines ADD FOREIGN KEY (order_id) REFERENCES orders ON DELETE CASCADE;
	ALTER TABLE notes ADD FOREIGN KEY (order_id) REFERENCES orders ON DELETE SET NULL;
	CREATE INDEX ON lines (order_id);
	-- The application finds its own rows by these (and the migration's updates skip them).
	CREATE INDEX ON orders (total) WHERE total < 0;
	CREATE INDEX ON lines (qty) WHERE qty < 0;
	VACUUM ANALYZE orders, lines, notes;
	CREATE TABLE orders_before AS SELECT * FROM orders;
	CREATE TABLE lines_before AS SELECT * FROM lines;
	CREATE TABLE notes_before AS SELECT * FROM notes;});
note(sprintf('%d orders, %d lines, %d notes loaded in %.1f s', $rows, $rows, $rows / 4, time() - $started));

# The built-in baseline, at size only: copies of the three tables with their indexes and foreign
# keys, each given a new column written by one plain UPDATE of the whole table, as one would
# without the steps (every row of the table locked until it ends; bigints copied, no IDs made,
# no order). The same row versions written as the fill writes; docs/benchmarks.md compares the
# two times. Dropped before the migration, and checkpointed, so that the fill pays nothing of it.
if ($at_size)
{
	$node->safe_psql(
		'postgres', q{
		CREATE TABLE b_orders (LIKE orders INCLUDING ALL);
		CREATE TABLE b_lines (LIKE lines INCLUDING ALL);
		CREATE TABLE b_notes (LIKE notes INCLUDING ALL);
		INSERT INTO b_orders OVERRIDING SYSTEM VALUE SELECT * FROM orders;
		INSERT INTO b_lines OVERRIDING SYSTEM VALUE SELECT * FROM lines;
		INSERT INTO b_notes SELECT * FROM notes;
		ALTER TABLE b_lines ADD FOREIGN KEY (order_id) REFERENCES b_orders ON DELETE CASCADE;
		ALTER TABLE b_notes ADD FOREIGN KEY (order_id) REFERENCES b_orders ON DELETE SET NULL;
		VACUUM ANALYZE b_orders, b_lines, b_notes;
		CHECKPOINT;});
	my $baseline = 0;
	for my $update (
		'ALTER TABLE b_orders ADD COLUMN new_key bigint; UPDATE b_orders SET new_key = id',
		'ALTER TABLE b_lines ADD COLUMN new_ref bigint; UPDATE b_lines SET new_ref = order_id',
		'ALTER TABLE b_notes ADD COLUMN new_ref bigint; UPDATE b_notes SET new_ref = order_id')
	{
		my $update_started = time();
		$node->safe_psql('postgres', $update);
		my $took = time() - $update_started;
		$baseline += $took;
		note(sprintf('baseline: %.1f s: %s', $took, $update));
	}
	note(sprintf('baseline: %.1f s for the three plain UPDATEs', $baseline));
	$node->safe_psql('postgres', 'DROP TABLE b_notes, b_lines, b_orders; CHECKPOINT');
}

# The application, from before the first step to after the switch: new orders with lines,
# lines moved between its orders, orders deleted (their lines with them). Every statement is
# the same SQL whatever the key's type; its rows have negative totals and quantities, from
# -$first on.
sub start_application
{
	my ($first) = @_;
	return psql_start(
		$node, qq{
	DO \$\$
	BEGIN
		FOR i IN $first..1000000 LOOP
			EXIT WHEN EXISTS (SELECT FROM pg_class WHERE relname = 'application_stops');
			INSERT INTO orders (created_at, total) VALUES (clock_timestamp(), -i);
			INSERT INTO lines (order_id, qty) SELECT id, -i FROM orders WHERE total = -i;
			IF i % 3 = 0 THEN
				UPDATE lines SET order_id = (SELECT id FROM orders WHERE total = -i)
				WHERE qty = -(i - 1);
			END IF;
			IF i % 5 = 0 THEN
				DELETE FROM orders WHERE total = -(i - 2);
			END IF;
			-- A view made after the prepare, which the switch carries to the sno key.
			IF EXISTS (SELECT FROM pg_class WHERE relname = 'order_summary') THEN
				PERFORM lines FROM order_summary WHERE total = -i;
			END IF;
			COMMIT;
			PERFORM pg_sleep(0.02);
		END LOOP;
	END \$\$},
		user => 'app_writer');
}
# Least-privilege roles, as a real application has them: the application's own, with column
# grants only, behind row-level security on orders; and one that may only change the quantities
# of lines, with no privilege on orders at all (its updates fire the migration's trigger, which
# looks the order up as its owner).
$node->safe_psql(
	'postgres', q{
	CREATE ROLE app_writer LOGIN;
	GRANT SELECT (id, total), INSERT (created_at, total), DELETE ON orders TO app_writer;
	GRANT SELECT (order_id, qty), INSERT (order_id, qty), UPDATE (order_id) ON lines TO app_writer;
	CREATE ROLE line_updater LOGIN;
	GRANT SELECT (qty), UPDATE (qty) ON lines TO line_updater;
	ALTER TABLE orders ENABLE ROW LEVEL SECURITY;
	CREATE POLICY application_rows ON orders USING (total < 0 OR current_user <> 'app_writer');});

# The line updater: touches one of the migrated lines at a time, until the application stops.
sub start_updater
{
	return psql_start(
		$node, q{
	DO $$
	BEGIN
		FOR i IN 1..1000000 LOOP
			EXIT WHEN EXISTS (SELECT FROM pg_class WHERE relname = 'application_stops');
			UPDATE lines SET qty = qty WHERE qty = i % 997 + 1;
			COMMIT;
			PERFORM pg_sleep(0.02);
		END LOOP;
	END $$},
		user => 'line_updater');
}

my $application = start_application(1);
my $updater = start_updater();

# Small batches at the default size, so that the crash comes between two of them; the run at
# size takes the default (50,000 rows).
my $batch_rows = $at_size ? 50_000 : 500;
my @steps = split /\n/,
  $node->safe_psql('postgres',
	"SELECT statement FROM sno_migration_steps('orders', 1, 'created_at', batch_rows => $batch_rows)");
is(scalar @steps, 8, 'eight statements: prepare, fill, vacuum, three indexes, validate, switch');

run_script($steps[0] . ';');
# Made after the prepare, as a DBA in a hurry would: a view and a policy that use the keys. The
# switch carries them to the sno keys, with the view's grant.
# (One transaction: the application must never see the view without its grant, nor lines with
# row-level security and no policy.)
$node->safe_psql(
	'postgres', q{
	BEGIN;
	CREATE VIEW order_summary AS
	SELECT o.id, o.total, (SELECT count(*) FROM lines l WHERE l.order_id = o.id) AS lines
	FROM orders o;
	GRANT SELECT ON order_summary TO app_writer;
	ALTER TABLE lines ENABLE ROW LEVEL SECURITY;
	CREATE POLICY lines_with_orders ON lines USING (order_id IS NOT NULL);
	COMMIT;});

if (!$at_size)
{
	# The fill, stopped after it claimed its IDs and before it made them, three times, by a crash
	# (kill -9, so that the meta's cursor comes back at its durable mark, past where it was): first
	# while it pauses once its claim is committed (sno.test_migration_pause_ms, test builds only),
	# then twice while it waits to write the work table, which another session holds locked.
	# Each run again makes the same IDs with the same meta, in the same timeline.
	$node->safe_psql('postgres', 'ALTER DATABASE postgres SET sno.test_migration_pause_ms = 60000');
	my $paused_fill = psql_start($node, "$steps[1];");
	$node->poll_query_until('postgres',
		q{SELECT obj_description(to_regclass(sno_migration_work_table('orders')), 'pg_class') LIKE '%tick%'})
	  or die 'the fill did not claim its IDs';
	kill9_server($node);
	$_->{handle}->finish for $paused_fill, $application, $updater;
	$node->start;
	$node->safe_psql('postgres', 'ALTER DATABASE postgres RESET sno.test_migration_pause_ms');
	$application = start_application(50_000);
	$updater = start_updater();
	my $work_table = $node->safe_psql('postgres', q{SELECT sno_migration_work_table('orders')});
	for my $crash (1, 2)
	{
		my $holder = $node->background_psql('postgres');
		$holder->query_safe("BEGIN; LOCK TABLE $work_table IN ACCESS EXCLUSIVE MODE");
		my $waiting_fill = psql_start($node, $steps[1] . ';');
		$node->poll_query_until('postgres',
			"SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = '$work_table'::regclass)")
		  or die 'the fill did not wait for the work table';
		kill9_server($node);
		$_->{handle}->finish for $waiting_fill, $application, $updater;
		eval { $holder->quit };
		$node->start;
		$application = start_application(100_000 * $crash);
		$updater = start_updater();
	}
	is( $node->safe_psql(
			'postgres', qq{
			SELECT count(*) FROM $work_table;
			SELECT tick_tock FROM sno_backfill_cursors() WHERE meta = 1}),
		"0\n0",
		'after three crashes the IDs are still to be made, and the meta still in its first timeline');

	# The fill, crashed in the middle: some batches copied, the work table holding the rest. An
	# order in the middle, locked, holds the fill at its batch.
	my $locker = $node->background_psql('postgres');
	$locker->query_safe('BEGIN; SELECT FROM orders WHERE id = ' . int($rows / 2) . ' FOR UPDATE');
	my $fill = psql_start($node, $steps[1] . ';');
	$node->poll_query_until(
		'postgres', qq{
		SELECT count(*) BETWEEN 1 AND $rows / 2 FROM orders WHERE id_sno IS NOT NULL AND total > 0})
	  or die 'the fill did not start';
	# Where it stands, from another session, while it waits.
	like(
		$node->safe_psql(
			'postgres', q{
			SELECT rows_done > 0 AND rows_left > 0 AND rows_per_second > 0 AND seconds_left >= 0
			FROM sno_migration_progress('orders') WHERE table_name = 'orders'::regclass}),
		qr/^t$/,
		'sno_migration_progress shows the copy under way, its rate and the time left');
	$node->stop('immediate');
	$_->{handle}->finish for $fill, $application, $updater;
	eval { $locker->quit };
	$node->start;
	my ($filled, $waiting) = split /\|/, $node->safe_psql(
		'postgres', q{
		SELECT count(id_sno), (SELECT count(*) FROM pg_class WHERE relname LIKE 'sno\_migration\_%' AND relkind = 'r')
		FROM orders});
	cmp_ok($filled, '>', 0, "after the crash, $filled orders have their sno key");
	is($waiting, 1, '... and the work table holds the IDs of the others');
	$application = start_application(300_000);
	$updater = start_updater();

	# And crashed in its last phase, the references: the orders done, some lines too; a line in
	# the middle, locked, holds it at its range of pages.
	my $line_locker = $node->background_psql('postgres');
	$line_locker->query_safe('BEGIN; SELECT FROM lines WHERE id = ' . int($rows / 2) . ' FOR UPDATE');
	my $references_fill = psql_start($node, $steps[1] . ';');
	$node->poll_query_until(
		'postgres', qq{
		SELECT to_regclass(sno_migration_work_table('orders')) IS NULL
		   AND (SELECT count(order_id_sno) FROM lines WHERE qty > 0) BETWEEN 1 AND $rows - 1})
	  or die 'the fill did not reach the references';
	kill9_server($node);
	$_->{handle}->finish for $references_fill, $application, $updater;
	eval { $line_locker->quit };
	$node->start;
	is( $node->safe_psql('postgres',
			q{SELECT count(*) FILTER (WHERE id_sno IS NULL), count(*) FROM orders WHERE total > 0}),
		"0|$rows", 'after a crash in the references, every order has its sno key');
	$application = start_application(500_000);
	$updater = start_updater();

	# The docs' command, from the start: each step does what is left.
	my ($status, $out, $err) = run_script(
		"SELECT statement FROM sno_migration_steps('orders', 1, 'created_at', batch_rows => $batch_rows) \\gexec");
	is($status, 0, 'the steps run again from the start, to the switch') or diag($err);
	like($err,
		qr/NOTICE:  sno_migration_fill: public\.lines: \d+ of \d+ pages \(\d+%\), \d+ pages\/s, about \d+ s left/,
		'the fill reports its progress as it goes');
}
else
{
	for my $step (@steps[1 .. $#steps])
	{
		my $step_started = time();
		my ($status, $out, $err) = run_script("$step;");
		is($status, 0, "step: $step") or diag($err);
		note(sprintf('%.1f s: %s', time() - $step_started, $step));
	}
}

# The application goes on a while with the sno key, then stops.
my $generated = $node->safe_psql('postgres', q{SELECT generated FROM sno_generator_stats()});
ok( $node->poll_query_until(
		'postgres', qq{SELECT generated > $generated + 10 FROM sno_generator_stats()}),
	'the application writes after the switch');

# Same rows: each order, line and note as before, found by the old keys.
is( $node->safe_psql(
		'postgres', q{
		SELECT (SELECT count(*) FROM orders_before b FULL JOIN (SELECT * FROM orders WHERE total > 0) o
		          ON o.id_old = b.id
		        WHERE o.id IS NULL OR b.id IS NULL OR (o.created_at, o.total) <> (b.created_at, b.total)),
		       (SELECT count(*) FROM lines_before b FULL JOIN (SELECT * FROM lines WHERE qty > 0) l
		          ON l.id = b.id
		        WHERE l.id IS NULL OR b.id IS NULL OR l.order_id_old <> b.order_id OR l.qty <> b.qty),
		       (SELECT count(*) FROM notes_before b FULL JOIN notes n ON n.note_id = b.note_id
		        WHERE n.note_id IS NULL OR b.note_id IS NULL
		           OR n.order_id_old IS DISTINCT FROM b.order_id OR n.body <> b.body)}),
	'0|0|0',
	'the same orders, lines and notes, each with its old key and old references');
# Each reference points at the same order as before, the application's too.
is( $node->safe_psql(
		'postgres', q{
		SELECT (SELECT count(*) FROM lines l JOIN orders o ON o.id = l.order_id
		        WHERE o.id_old <> l.order_id_old),
		       (SELECT count(*) FROM notes n LEFT JOIN orders o ON o.id = n.order_id
		        WHERE o.id_old IS DISTINCT FROM n.order_id_old),
		       (SELECT count(*) FROM lines WHERE qty < 0 AND order_id IS NULL)}),
	'0|0|0',
	'every line and note points at the order it pointed at, by its sno key');
# The foreign keys hold: validated, and no row without its parent.
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(conrelid::regclass || ' ' || pg_get_constraintdef(oid) || ' '
		                  || convalidated, E'\n' ORDER BY conrelid::regclass::text)
		FROM pg_constraint WHERE contype = 'f';
		SELECT count(*) FROM lines l LEFT JOIN orders o ON o.id = l.order_id WHERE o.id IS NULL;
		SELECT count(*) FROM notes n LEFT JOIN orders o ON o.id = n.order_id
		WHERE n.order_id IS NOT NULL AND o.id IS NULL;}),
	"lines FOREIGN KEY (order_id) REFERENCES orders(id) ON DELETE CASCADE true\n"
	  . "notes FOREIGN KEY (order_id) REFERENCES orders(id) ON DELETE SET NULL true\n0\n0",
	'the foreign keys are on the sno keys, validated, and hold');
# Every ID unique (the primary key) and of meta 1; the migrated ones at their own times (to the
# 4 ms unit) and in their order; the application's after every migrated one.
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) = count(DISTINCT id), bool_and(sno_meta(id) = 1) FROM orders;
		SELECT string_agg(DISTINCT sno_tick_tock(id)::text, ',') FROM orders WHERE total > 0;
		SELECT bool_and(sno_time(id) = date_bin('4 ms', created_at, timestamptz '2010-01-01'))
		FROM orders WHERE total > 0;
		SELECT count(*) FROM (SELECT created_at, lag(created_at) OVER (ORDER BY id) AS previous
		                      FROM orders WHERE total > 0) AS o
		WHERE previous > created_at;
		SELECT (SELECT max(id) FROM orders WHERE total > 0) < (SELECT min(id) FROM orders WHERE total < 0);
		SELECT count(*) > 0 FROM orders WHERE total < 0;}),
	"t|t\n0\nt\n0\nt\nt",
	'every ID unique, of its meta, in its first timeline, at its row\'s time and in the order of the times');

# The old key goes when the application no longer needs it.
my ($status, $out, $err) = run_script(
	q{SELECT statement FROM sno_migration_steps('orders', 1, stage => 'drop_old_key') \gexec});
is($status, 0, 'the old key is dropped') or diag($err);
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(attrelid::regclass || '.' || attname, ' ' ORDER BY attrelid::regclass::text, attnum)
		FROM pg_attribute WHERE attrelid IN ('orders'::regclass, 'lines'::regclass, 'notes'::regclass)
		  AND attnum > 0 AND NOT attisdropped;
		SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal;}),
	"lines.id lines.qty lines.order_id notes.note_id notes.body notes.order_id "
	  . "orders.created_at orders.total orders.id\n0",
	'... with the old references and the triggers');
# The view and the policy made after the prepare are on the sno keys.
is( $node->safe_psql(
		'postgres', q{
		SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'order_summary'::regclass AND attname = 'id';
		SELECT has_table_privilege('app_writer', 'order_summary', 'SELECT');
		SELECT pg_get_expr(polqual, polrelid) FROM pg_policy WHERE polname = 'lines_with_orders';
		SELECT count(*) FROM pg_attribute WHERE attrelid = 'lines'::regclass
		   AND attname = 'order_id' AND atttypid = 'sno'::regtype}),
	"sno\nt\n(order_id IS NOT NULL)\n1",
	'the view and the policy made after the prepare were carried to the sno keys');

# Every statement of the application and of the line updater succeeded, through the switch and
# the drop of the old key.
$node->safe_psql('postgres', 'CREATE TABLE application_stops ()');
ok(psql_finish($application), 'the application wrote throughout, without an error');
ok(psql_finish($updater), 'so did the role without any privilege on orders');
note(sprintf('whole test: %.1f s', time() - $started));

done_testing();
