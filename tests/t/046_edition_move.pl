# Moving tables between the SQL edition (sql/edition/, domain sno_sql.sno over uuid) and native
# sno, both ways, on one server that has both: a parent table keyed by the edition's IDs and a
# child with a foreign key to it go to native sno by ALTER COLUMN ... TYPE sno USING
# sno_sql.to_bytea(id)::sno in one transaction, then back by TYPE sno_sql.sno USING
# sno_sql.from_bytea(id::bytea). Every ID keeps its text and its place in the order, the
# foreign key holds and is validated, and the IDs each generator makes after a move sort after
# every ID moved in: the native generator's by its clock, the edition's because
# sno_sql.start_after is given the greatest ID the table holds.
#
# What the move takes: PostgreSQL cannot re-make a foreign key between a sno_sql.sno column and
# a sno one (no equality operator between them), so ALTER TYPE of either end alone fails
# (42804, "cannot be implemented"), ON UPDATE CASCADE or not; the key is dropped, both columns
# moved, and the same key added again (validated: one scan of both tables), all in the one
# transaction. The column default (the generator) cannot be cast and is replaced in the same
# ALTER TABLE. Each ALTER TYPE rewrites its table and rebuilds all its indexes, under an ACCESS
# EXCLUSIVE lock on both tables until the commit.
#
# SNO_EDITION_MOVE_ROWS orders (default 20,000), about as many lines (order n has n % 3); each
# step's time is printed (note). The run at size: SNO_EDITION_MOVE_ROWS=1000000
# PG_TEST_TIMEOUT_DEFAULT=1800. Needs a test build (sno.test_clock_offset_ms) and the edition's
# plain SQL file, which tests/tap.sh writes (SNO_EDITION_DIR).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;
use Time::HiRes qw(time);

my $rows = $ENV{SNO_EDITION_MOVE_ROWS} // 20_000;
my $at_size = $rows > 100_000;

# Native sno makes its IDs with partition 7, the edition with partition 9: in one 4 ms unit,
# the edition's would sort after the native ones.
my $node = sno_node(
	'edition_move',
	settings => {
		'sno.partition' => 7,
		# The run at size writes as a server would.
		$at_size ? (fsync => 'on', max_wal_size => '8GB', maintenance_work_mem => '512MB') : ()
	});
my $started = time();

# Runs a step, prints how long it took, returns its output.
sub timed
{
	my ($what, $code) = @_;
	my $step_started = time();
	my $out = $code->();
	note(sprintf('%7.2f s  %s', time() - $step_started, $what));
	return $out;
}

# The edition, installed as its docs say, beside native sno in the same database.
timed(
	'install the edition (psql -1 -f sno_sql.sql)',
	sub {
		install_edition($node, 'postgres', 'the edition installs beside native sno');
	});
$node->safe_psql('postgres', 'SELECT sno_sql.configure(9)');

# Orders (wave 1: the edition's IDs), lines without their key while they are loaded, then the
# key, validated in one scan.
my $expected_lines = 0;
$expected_lines += $_ % 3 for 1 .. $rows;
timed(
	"$rows orders, sno_sql.generate(1)",
	sub {
		$node->safe_psql(
			'postgres', qq{
			CREATE EXTENSION amcheck;
			CREATE TABLE orders (
				id sno_sql.sno PRIMARY KEY DEFAULT sno_sql.generate(1),
				wave int NOT NULL,
				n int NOT NULL);
			CREATE TABLE lines (
				line_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
				order_id sno_sql.sno NOT NULL,
				qty int NOT NULL);
			INSERT INTO orders (wave, n) SELECT 1, i FROM generate_series(1, $rows) AS i;});
	});
timed(
	"$expected_lines lines, then their foreign key",
	sub {
		$node->safe_psql(
			'postgres', q{
			INSERT INTO lines (order_id, qty)
			SELECT id, n FROM orders CROSS JOIN LATERAL generate_series(1, n % 3) AS copy;
			CREATE INDEX lines_order_id ON lines (order_id);
			ALTER TABLE lines ADD CONSTRAINT lines_order_id_fkey FOREIGN KEY (order_id)
				REFERENCES orders ON UPDATE CASCADE ON DELETE CASCADE;
			VACUUM ANALYZE orders, lines;
			CHECKPOINT;});
	});
is( $node->safe_psql('postgres', 'SELECT count(*) FROM orders; SELECT count(*) FROM lines'),
	"$rows\n$expected_lines", "$rows orders, $expected_lines lines");

# Every ID's text and place in the order, and every line's order by its text, as the edition
# shows them. The moves must keep all three.
timed(
	'record every ID\'s text (sno_sql.to_text)',
	sub {
		$node->safe_psql(
			'postgres', q{
			CREATE TABLE order_texts AS
			SELECT sno_sql.to_text(id) AS id_text, row_number() OVER (ORDER BY id) AS place, wave, n
			FROM orders;
			CREATE TABLE line_texts AS SELECT line_id, sno_sql.to_text(order_id) AS order_text FROM lines;});
	});
my $fk_definition = q{SELECT pg_get_constraintdef(oid) || ' ' || convalidated FROM pg_constraint
	WHERE conname = 'lines_order_id_fkey'};
my $fk_before = $node->safe_psql('postgres', $fk_definition);
is($fk_before,
	'FOREIGN KEY (order_id) REFERENCES orders(id) ON UPDATE CASCADE ON DELETE CASCADE true',
	'the foreign key, validated');

# Orders and lines as recorded, by the given text expressions of their IDs: the differences
# both ways (EXCEPT), of the texts with their places, and of the lines' references.
sub differences
{
	my ($id_text, $order_text) = @_;
	return $node->safe_psql(
		'postgres', qq{
		CREATE TEMP VIEW now_orders AS
		SELECT $id_text AS id_text, row_number() OVER (ORDER BY id) AS place, wave, n FROM orders;
		CREATE TEMP VIEW now_lines AS SELECT line_id, $order_text AS order_text FROM lines;
		SELECT (SELECT count(*) FROM (TABLE now_orders EXCEPT TABLE order_texts) AS d)
		    || '|' || (SELECT count(*) FROM (TABLE order_texts EXCEPT TABLE now_orders) AS d)
		    || '|' || (SELECT count(*) FROM (TABLE now_lines EXCEPT TABLE line_texts) AS d)
		    || '|' || (SELECT count(*) FROM (TABLE line_texts EXCEPT TABLE now_lines) AS d)});
}

# The foreign key as before, validated; no line without its order; an unknown order refused
# (23503); every index of both tables passes bt_index_check with heapallindexed.
sub key_and_indexes
{
	my ($unknown_order) = @_;
	my ($ret, $out, $err) = $node->psql(
		'postgres', qq{
		INSERT INTO lines (order_id, qty) VALUES ($unknown_order, 0);
		\\echo :SQLSTATE},
		on_error_stop => 0);
	return $node->safe_psql(
		'postgres', qq{
		$fk_definition;
		SELECT count(*) FROM lines l LEFT JOIN orders o ON o.id = l.order_id WHERE o.id IS NULL;
		SELECT string_agg(c.relname, ', ' ORDER BY c.relname)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid, LATERAL bt_index_check(c.oid, true)
		WHERE i.indrelid IN ('orders'::regclass, 'lines'::regclass);})
	  . "\n$out";
}

# The moving transaction: its statements one at a time, timed, in one session.
sub move
{
	my ($direction, @statements) = @_;
	my $session = $node->background_psql('postgres');
	$session->set_query_timer_restart;
	my $move_started = time();
	$session->query_safe('BEGIN');
	for my $statement (@statements)
	{
		timed("$direction: $statement", sub { $session->query_safe($statement) });
	}
	my $locks = $session->query_safe(
		q{SELECT string_agg(relation::regclass || ' ' || mode, ', ' ORDER BY relation::regclass::text)
		  FROM pg_locks WHERE pid = pg_backend_pid() AND relation IN ('orders'::regclass, 'lines'::regclass)
		   AND mode = 'AccessExclusiveLock'});
	timed("$direction: COMMIT", sub { $session->query_safe('COMMIT') });
	note(sprintf('%7.2f s  %s: the whole transaction', time() - $move_started, $direction));
	$session->quit;
	return $locks;
}

# ALTER TYPE's refusal (19 words its detail "of the referencing table", "of the referenced table").
sub fk_refused
{
	my ($referencing, $referenced) = @_;
	my $detail = 'DETAIL:  Key columns "order_id" (?:of the referencing table )?and "id" '
	  . '(?:of the referenced table )?are of incompatible types: '
	  . "\Q$referencing\E and \Q$referenced\E\\.";
	return qr/^ERROR:  42804: foreign key constraint "lines_order_id_fkey" cannot be implemented\n$detail$/;
}

# 1. To native sno. ALTER TYPE cannot re-make the foreign key across the two types, so it goes
# and comes back around the two moves.
my $fk_add = 'ALTER TABLE lines ADD CONSTRAINT lines_order_id_fkey FOREIGN KEY (order_id) '
  . 'REFERENCES orders ON UPDATE CASCADE ON DELETE CASCADE';
like( error_of(
		$node,
		'ALTER TABLE lines ALTER COLUMN order_id TYPE sno USING sno_sql.to_bytea(order_id)::sno'),
	fk_refused('sno', 'sno_sql.sno'),
	'ALTER TYPE of the referencing column alone fails: no foreign key between sno and sno_sql.sno');
like( error_of(
		$node,
		'ALTER TABLE orders ALTER COLUMN id DROP DEFAULT, '
		  . 'ALTER COLUMN id TYPE sno USING sno_sql.to_bytea(id)::sno'),
	fk_refused('sno_sql.sno', 'sno'),
	'... and so does that of the referenced one: the key is dropped and added again');
my $locks = move(
	'to native',
	'ALTER TABLE lines DROP CONSTRAINT lines_order_id_fkey',
	'ALTER TABLE orders ALTER COLUMN id DROP DEFAULT, '
	  . 'ALTER COLUMN id TYPE sno USING sno_sql.to_bytea(id)::sno, '
	  . 'ALTER COLUMN id SET DEFAULT sno_generate(1)',
	'ALTER TABLE lines ALTER COLUMN order_id TYPE sno USING sno_sql.to_bytea(order_id)::sno',
	$fk_add);
is($locks, 'lines AccessExclusiveLock, orders AccessExclusiveLock',
	'the move holds both tables ACCESS EXCLUSIVE until its commit');
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod)
		                  || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), ''), ', '
		                  ORDER BY attrelid::regclass::text)
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE (attrelid, attname) IN (('orders'::regclass, 'id'), ('lines'::regclass, 'order_id'))}),
	'lines.order_id sno, orders.id sno DEFAULT sno_generate(1)',
	'both columns are native sno, the default native sno_generate');
is(timed('to native: compare every text (id::text) and place', sub { differences('id::text', 'order_id::text') }),
	'0|0|0|0', 'to native: every ID has its text and place, every line its order');
is( timed('to native: the foreign key and the indexes', sub { key_and_indexes(q{'2222222222222222'}) }),
	"$fk_before\n0\nlines_order_id, lines_pkey, orders_pkey\n23503",
	'to native: the foreign key is the same, validated, and holds; the indexes pass bt_index_check');

# Wave 2: native IDs, by the column's new default. They sort after every edition ID, by the
# clock. Then a few made while the native generator's clock runs an hour ahead (a server whose
# clock is fast): the edition's clock knows nothing of them.
my $native_rows = int($rows / 20);
timed(
	"to native: $native_rows orders and their lines with sno_generate(1)",
	sub {
		$node->safe_psql(
			'postgres', qq{
			INSERT INTO orders (wave, n) SELECT 2, i FROM generate_series(1, $native_rows) AS i;
			INSERT INTO lines (order_id, qty) SELECT id, n FROM orders WHERE wave = 2;
			SET sno.test_clock_offset_ms = 3600000;
			INSERT INTO orders (wave, n) SELECT 2, -i FROM generate_series(1, 100) AS i;
			INSERT INTO lines (order_id, qty) SELECT id, n FROM orders WHERE wave = 2 AND n < 0;
			RESET sno.test_clock_offset_ms;
			INSERT INTO order_texts
			SELECT * FROM (SELECT id::text, row_number() OVER (ORDER BY id), wave, n FROM orders) AS o
			WHERE wave = 2;
			INSERT INTO line_texts SELECT line_id, order_id::text FROM lines
			WHERE line_id > (SELECT max(line_id) FROM line_texts);});
	});
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM orders WHERE wave = 2;
		SELECT (SELECT min(id) FROM orders WHERE wave = 2) > (SELECT max(id) FROM orders WHERE wave = 1);
		SELECT count(*) FROM order_texts;}),
	($native_rows + 100) . "\nt\n" . ($rows + $native_rows + 100),
	'to native: the new native IDs sort after every edition ID');

# 2. Back to the edition, the same way.
$locks = move(
	'back',
	'ALTER TABLE lines DROP CONSTRAINT lines_order_id_fkey',
	'ALTER TABLE orders ALTER COLUMN id DROP DEFAULT, '
	  . 'ALTER COLUMN id TYPE sno_sql.sno USING sno_sql.from_bytea(id::bytea), '
	  . 'ALTER COLUMN id SET DEFAULT sno_sql.generate(1)',
	'ALTER TABLE lines ALTER COLUMN order_id TYPE sno_sql.sno USING sno_sql.from_bytea(order_id::bytea)',
	$fk_add);
is($locks, 'lines AccessExclusiveLock, orders AccessExclusiveLock',
	'back: the move holds both tables ACCESS EXCLUSIVE until its commit');
is( timed('back: compare every text (sno_sql.to_text) and place',
		sub { differences('sno_sql.to_text(id)', 'sno_sql.to_text(order_id)') }),
	'0|0|0|0', 'back: every ID has its text and place, every line its order');
is( timed('back: the foreign key and the indexes',
		sub { key_and_indexes(q{sno_sql.from_text('2222222222222222')}) }),
	"$fk_before\n0\nlines_order_id, lines_pkey, orders_pkey\n23503",
	'back: the foreign key is the same, validated, and holds; the indexes pass bt_index_check');

# The edition's generator knows nothing of the native IDs: those made an hour ahead sort after
# what it makes now. sno_sql.start_after with the greatest ID the table holds moves it past
# them: found through the primary key (sno_sql.max(id) would read the whole table: an aggregate
# over a domain gets no index).
is( $node->safe_psql('postgres',
		q{SELECT sno_sql.generate(1) < (SELECT id FROM orders ORDER BY id DESC LIMIT 1)}),
	't', 'back: without start_after, the edition\'s next ID sorts before the native ones');
my $greatest = timed('back: the greatest ID by sno_sql.max(id)',
	sub { $node->safe_psql('postgres', 'SELECT sno_sql.to_text(sno_sql.max(id)) FROM orders') });
timed(
	'back: sno_sql.start_after(the greatest ID, through the primary key)',
	sub {
		$node->safe_psql('postgres',
			q{SELECT sno_sql.start_after((SELECT id FROM orders ORDER BY id DESC LIMIT 1))});
	});
is( $greatest,
	$node->safe_psql('postgres',
		q{SELECT id_text FROM order_texts WHERE wave = 2 AND n = -100}),
	'back: the greatest ID is the last native one made an hour ahead');

# Wave 3: the edition's IDs again, after every ID in the table.
timed(
	"back: $native_rows orders and their lines with sno_sql.generate(1)",
	sub {
		$node->safe_psql(
			'postgres', qq{
			INSERT INTO orders (wave, n) SELECT 3, i FROM generate_series(1, $native_rows) AS i;
			INSERT INTO lines (order_id, qty) SELECT id, n FROM orders WHERE wave = 3;});
	});
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(*) FILTER (WHERE wave = 3) FROM orders;
		SELECT count(*) FROM lines;
		SELECT (SELECT id FROM orders WHERE wave = 3 ORDER BY id LIMIT 1)
		     > (SELECT id FROM orders WHERE wave < 3 ORDER BY id DESC LIMIT 1);
		SELECT string_agg(DISTINCT wave || ':' || sno_sql.partition(id), ',') FROM orders;
		SELECT count(*) FROM lines l LEFT JOIN orders o ON o.id = l.order_id WHERE o.id IS NULL;}),
	($rows + 2 * $native_rows + 100) . "|$native_rows\n"
	  . ($expected_lines + 2 * $native_rows + 100) . "\nt\n1:9,2:7,3:9\n0",
	'back: the edition\'s new IDs sort after every ID in the table; every line has its order');

# The cascade still works through the re-made key, on the edition's IDs.
is( $node->safe_psql(
		'postgres', q{
		CREATE TEMP TABLE order_2 AS
		SELECT sno_sql.from_text(id_text) AS id FROM order_texts WHERE wave = 1 AND n = 2;
		SELECT count(*) FROM lines WHERE order_id = (TABLE order_2);
		DELETE FROM orders WHERE id = (TABLE order_2);
		SELECT count(*) FROM lines WHERE order_id = (TABLE order_2);}),
	"2\n0", 'back: ON DELETE CASCADE of the re-made key removes the order\'s lines');
note(sprintf('%7.2f s  whole test', time() - $started));

done_testing();
