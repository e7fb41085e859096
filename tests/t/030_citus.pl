# sno as the distribution key of a Citus cluster: a coordinator and two workers, later a third,
# each with its own sno.partition, generating keys at once; shards moved and rebalanced under
# them; and sno_check_partitions() refusing two nodes that share a partition.
#
# Why: every node of a Citus cluster evaluates DEFAULT sno_generate(...) itself, with no
# coordination, so the keys are unique only if the partitions are; and a key type is only useful
# there if Citus can hash, prune, co-locate, move and compare it like a built-in one.
#
# Citus is AGPL-licensed: it is only built (../shared/tools/citus-build.sh) and used by tests,
# never linked into or shipped with sno. Without it the scenario is skipped, saying why.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoCitus;
use SnoTest;
use Test::More;

my $missing = citus_missing();
plan skip_all => $missing if defined $missing;

my $coordinator = citus_node('citus_coordinator', 1);
my @workers = (citus_node('citus_worker1', 2), citus_node('citus_worker2', 3));
my @nodes = ($coordinator, @workers);

sub on_coordinator { return $coordinator->safe_psql('postgres', $_[0]); }

sub add_worker
{
	my ($worker) = @_;
	on_coordinator(
		"SELECT citus_add_node('" . $worker->host . "', " . $worker->port . ')');
	return;
}

add_worker($_) for @workers;
# Created after the workers were added, so Citus creates it on them too.
on_coordinator('CREATE EXTENSION sno');
is( $workers[1]->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'sno'"),
	on_coordinator("SELECT extversion FROM pg_extension WHERE extname = 'sno'"),
	'Citus created the sno extension on the workers');

# The coordinator is not in pg_dist_node (no citus_set_coordinator_host): the check answers for it.
is( on_coordinator(
		q{SELECT string_agg(concat_ws(' ', coalesce(nodeid::text, 'coordinator'), generator, "partition",
		                              sequence_min, sequence_max), ', ' ORDER BY nodeid NULLS FIRST)
		  FROM sno_check_partitions()}),
	'coordinator sno_generate 1 0 65535, 1 sno_generate 2 0 65535, 2 sno_generate 3 0 65535',
	'sno_check_partitions(): the coordinator and both workers, each its own partition');

on_coordinator(
	q{
	CREATE TABLE orders (
		id    sno PRIMARY KEY DEFAULT sno_generate(1),
		node  text NOT NULL,
		total numeric);
	SELECT create_distributed_table('orders', 'id');
	CREATE TABLE order_items (
		order_id sno NOT NULL,
		n        int NOT NULL,
		PRIMARY KEY (order_id, n));
	SELECT create_distributed_table('order_items', 'order_id', colocate_with => 'orders');});
is( on_coordinator(
		q{SELECT count(DISTINCT colocationid) || ' ' || min(partmethod)
		  FROM pg_dist_partition WHERE logicalrelid IN ('orders'::regclass, 'order_items'::regclass)}),
	'1 h',
	'orders and order_items are hash-distributed on their sno keys and co-located');
is(on_coordinator(q{SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'orders'::regclass}),
	2, "orders' 8 shards lie on both workers");

# Through every node at once: on each, one session inserts 20,000 rows in one INSERT ... SELECT,
# another 1,000 rows one INSERT at a time (each a single-row router INSERT).
my @runs;
for my $i (0 .. $#nodes)
{
	push @runs, psql_start($nodes[$i],
		"INSERT INTO orders (node, total) SELECT 'node$i bulk', g FROM generate_series(1, 20000) g");
	push @runs, psql_start($nodes[$i],
		"DO \$\$ BEGIN FOR g IN 1..1000 LOOP INSERT INTO orders (node, total) VALUES ('node$i single', g); END LOOP; END \$\$");
}
is(scalar(grep { !psql_finish($_) } @runs), 0, 'six sessions on three nodes insert at once');
is(on_coordinator(q{SELECT count(*) || ' ' || count(DISTINCT id) FROM orders}),
	'63000 63000', '63,000 rows, 63,000 distinct keys');
# The node that receives an INSERT evaluates its DEFAULT, for every row of an INSERT ... SELECT
# too: each row carries the partition of the node the statement was sent to.
is( on_coordinator(
		q{SELECT string_agg(node || ':' || partitions, ' ' ORDER BY node) FROM (
			SELECT node, string_agg(DISTINCT sno_partition(id)::text, ',') || '=' || count(*) AS partitions
			FROM orders GROUP BY node) s}),
	'node0 bulk:1=20000 node0 single:1=1000 node1 bulk:2=20000 node1 single:2=1000 '
	  . 'node2 bulk:3=20000 node2 single:3=1000',
	"each row has the partition of the node its INSERT was sent to");
is(on_coordinator(q{SELECT count(DISTINCT get_shard_id_for_distribution_column('orders', id)) FROM orders}),
	8, 'the keys hash into all 8 shards');

# A key in WHERE prunes to one shard (router query), also as its bytes.
my $some_id = on_coordinator("SELECT min(id) FROM orders WHERE node = 'node2 single'");
my $explain = on_coordinator("EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id = '$some_id'");
like($explain, qr/Task Count: 1\n/, 'WHERE id = a key: one task (router query)');
my $hex = on_coordinator("SELECT encode('$some_id'::sno::bytea, 'hex')");
is(on_coordinator("SELECT node || ' ' || total FROM orders WHERE id = '\\x$hex'"),
	'node2 single 1', 'the row found by its key written as the 10 bytes in hex');
like(on_coordinator("EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id = '\\x$hex'::bytea::sno"),
	qr/Task Count: 1\n/, 'WHERE id = a bytea cast to sno: one task too');
like(on_coordinator('EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE id < sno_min(now())'),
	qr/Task Count: 8\n/, 'a range on the key: all 8 shards');

# Time ranges with sno_min/sno_max select exactly the rows of those times; order by id is
# order by time across every shard and node.
is( on_coordinator(
		q{WITH bounds AS (SELECT percentile_disc(ARRAY[0.25, 0.75]) WITHIN GROUP (ORDER BY sno_time(id)) AS t
		                  FROM orders)
		  SELECT (SELECT count(*) FROM orders, bounds WHERE id >= sno_min(t[1]) AND id <= sno_max(t[2]))
		       = (SELECT count(*) FROM orders, bounds WHERE sno_time(id) BETWEEN t[1] AND t[2])
		     AND (SELECT count(*) FROM orders, bounds WHERE id >= sno_min(t[1]) AND id <= sno_max(t[2]))
		       BETWEEN 1 AND 62999
		  FROM bounds}),
	't',
	'id >= sno_min(a) AND id <= sno_max(b): exactly the rows of a..b');
is( on_coordinator(
		q{WITH ids AS MATERIALIZED (SELECT id FROM orders)
		  SELECT count(*) FROM (SELECT sno_time(id) AS t, lag(sno_time(id)) OVER (ORDER BY id) AS prev
		                        FROM ids) s
		  WHERE t < prev}),
	0,
	'ordered by id, sno_time never decreases across the shards');

# The co-located table: INSERT ... SELECT and the join run shard by shard.
on_coordinator('INSERT INTO order_items SELECT id, n FROM orders, generate_series(1, 2) n');
is( on_coordinator(
		q{SELECT count(*) || ' ' || count(DISTINCT o.id) FROM orders o JOIN order_items i ON i.order_id = o.id}),
	'126000 63000',
	'the join on the key finds 2 items for each of the 63,000 orders');
unlike(
	on_coordinator('EXPLAIN (COSTS OFF) SELECT count(*) FROM orders o JOIN order_items i ON i.order_id = o.id'),
	qr/repartition|Subplan/i,
	'the join runs on the shards (no repartition, no subplan)');

# sno_decode and the casts inside distributed queries.
is( on_coordinator(
		q{SELECT string_agg(p || '=' || c, ' ' ORDER BY p) FROM (
			SELECT (sno_decode(id)).partition AS p, count(*) AS c FROM orders
			WHERE (sno_decode(id)).meta = 1 AND (sno_decode(id)).time = id::timestamptz
			GROUP BY 1) s}),
	'1=21000 2=21000 3=21000',
	'sno_decode in the target list, WHERE and GROUP BY: 21,000 IDs per partition, meta 1');
is( on_coordinator(
		q{SELECT count(*) FROM orders
		  WHERE id::bytea::sno = id AND id::text::sno = id AND length(id::bytea) = 10
		    AND sno_from_parts(id::timestamptz, 1, sno_partition(id), sno_sequence(id), sno_tick_tock(id)) = id}),
	63000,
	'the bytea, text and timestamptz casts and sno_from_parts give every ID back');

# A shard moved with logical replication while a session keeps inserting through the worker it
# moves to: some of those rows go to the moving shard, so the receiving node's apply worker
# brings in IDs with its own partition. That is Citus at work, not a partition mistake, and sno
# must not warn about it (src/pg/recovery/partition_mistakes.rs).
my ($shard, $from_port) = split /\|/, on_coordinator(
	q{SELECT shardid, nodeport FROM citus_shards WHERE table_name = 'orders'::regclass
	  ORDER BY shardid LIMIT 1});
my ($from, $to) = $from_port == $workers[0]->port ? @workers : reverse @workers;
my $rows_in_shard = on_coordinator(
	"SELECT count(*) FROM orders WHERE get_shard_id_for_distribution_column('orders', id) = $shard");
my $offsets = { map { ($_->name => -s $_->logfile) } @nodes };
# One transaction per row, so that rows commit all through the move.
my $during = psql_start($to,
	join("\n", map { "INSERT INTO orders (node, total) VALUES ('during move', $_);" } 1 .. 3000));
on_coordinator(
	"SELECT citus_move_shard_placement($shard, '" . $from->host . "', " . $from->port . ", '"
	  . $to->host . "', " . $to->port . ", 'force_logical')");
ok(psql_finish($during), 'inserts through the receiving worker go on during the move');
is(on_coordinator("SELECT nodeport FROM citus_shards WHERE shardid = $shard"),
	$to->port, 'the shard is on the other worker');
is(on_coordinator(q{SELECT count(*) || ' ' || count(DISTINCT id) FROM orders}),
	'66000 66000', 'after the move: all 63,000 rows and the 3,000 inserted meanwhile, distinct');
is( on_coordinator(
		"SELECT count(*) FROM orders WHERE get_shard_id_for_distribution_column('orders', id) = $shard
		 AND node <> 'during move'"),
	$rows_in_shard, 'the moved shard kept its rows');
is(join(',', map { log_count($_, 'sno: logical replication brought in', $offsets->{ $_->name }) } @nodes),
	'0,0,0', 'the move logged no partition-mistake warning on any node');

# A third worker that repeats the second's partition: Citus adds it (it has no hook for
# extensions), and sno_check_partitions() names the clash.
my $third = citus_node('citus_worker3', 3);
add_worker($third);
is( error_of($coordinator, 'SELECT * FROM sno_check_partitions()'),
	"ERROR:  F0000: sno: nodes of this Citus cluster share a partition, so they can make the same IDs\n"
	  . 'DETAIL:  node 2 at ' . $workers[1]->host . ':' . $workers[1]->port
	  . ' (sno_generate) and node 3 at ' . $third->host . ':' . $third->port
	  . " (sno_generate) both use partition 3 with sequences 0..65535 and 0..65535.\n"
	  . 'HINT:  Give each node its own sno.partition (and sno.backfill_partition) in its '
	  . 'postgresql.conf, then reload it. Nodes may share a partition only with disjoint '
	  . 'sno.sequence_min..sno.sequence_max ranges.',
	'sno_check_partitions(): F0000 naming the two workers with partition 3');
# A backfill partition counts too, and disjoint sequence ranges may share a partition.
set_settings($third, 'sno.partition' => 2, 'sno.sequence_min' => 32768);
set_settings($workers[0], 'sno.sequence_max' => 32767, 'sno.backfill_partition' => 3);
like(error_of($coordinator, 'SELECT * FROM sno_check_partitions()'),
	qr/\nDETAIL:  node 1 at \S+ \(sno_generate_at\) and node 2 at \S+ \(sno_generate\) both use partition 3 with sequences 0\.\.65535 and 0\.\.65535\.\n/,
	"a worker's backfill partition that is another's partition is a clash");
set_settings($workers[0], 'sno.backfill_partition' => 1001);
is( on_coordinator(
		q{SELECT string_agg(concat_ws(' ', coalesce(nodeid::text, 'coordinator'), generator, "partition",
		                              sequence_min, sequence_max), ', '
		                    ORDER BY nodeid NULLS FIRST, generator)
		  FROM sno_check_partitions()}),
	'coordinator sno_generate 1 0 65535, 1 sno_generate 2 0 32767, 1 sno_generate_at 1001 0 65535, '
	  . '2 sno_generate 3 0 65535, 3 sno_generate 2 32768 65535',
	'sharing partition 2 with disjoint sequence ranges passes');

# Rebalanced onto the third worker: every row kept, and new rows from it carry its partition.
on_coordinator("SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes')");
cmp_ok(on_coordinator("SELECT count(*) FROM citus_shards WHERE table_name = 'orders'::regclass AND nodeport = "
	  . $third->port), '>', 0, 'the rebalance moved shards of orders to the third worker');
is(on_coordinator(q{SELECT count(*) || ' ' || count(DISTINCT id) FROM orders}),
	'66000 66000', 'after the rebalance: all 66,000 rows, distinct');
is(on_coordinator('SELECT count(*) FROM orders o JOIN order_items i ON i.order_id = o.id'),
	126000, 'the co-located items moved with their orders');
$third->safe_psql('postgres',
	"INSERT INTO orders (node, total) SELECT 'worker3', g FROM generate_series(1, 1000) g");
is( on_coordinator(
		q{SELECT count(*) || ' ' || string_agg(DISTINCT sno_partition(id)::text || '/' || (sno_sequence(id) >= 32768)::text, ',')
		  FROM orders WHERE node = 'worker3'}),
	'1000 2/true',
	'the third worker generates in partition 2, sequences 32768 and up');
is(on_coordinator('SELECT count(*) - count(DISTINCT id) FROM orders'), 0, 'not one repeated key');

done_testing();
