# The generator's states reach the WAL in the order they were composed (issue 34, item 2). Two
# writers (sno_generate renewing its reservation, sno_generate_at recording a cursor) compose their
# states one after the other under a short lock, then write them beside the file and insert their
# WAL records without it, so the later state could reach the WAL first, and a standby or a crash
# recovery replaying the records in WAL order would see the state go back. A record composed
# before one already in the WAL is covered by that one, and is left out. The slow writer is the
# test builds' sno.test_state_log_delay_ms (a sleep between composing and inserting).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;

my $node = sno_node('order', settings => { 'sno.partition' => 1, 'sno.backfill_partition' => 2 });
$node->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
# A fresh start: the reservation is behind the clock, so the first live ID needs a write.
$node->restart;
my $from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');

# The backfill composes first (its mark, and a renewed live reservation), then waits 3 s before
# its record; meanwhile the first live ID composes a later state and records it.
my $slow = psql_start(
	$node,
	"SET sno.test_state_log_delay_ms = 3000; SELECT sno_generate_at(5, '2021-01-01') IS NOT NULL;",
	application_name => 'slow_backfill');
$node->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_ls_dir('.') AS f WHERE f LIKE 'sno_generator.state.tmp.%'})
  or die 'the backfill never wrote its state aside';
is($node->safe_psql('postgres', 'SELECT sno_generate(1) IS NOT NULL'), 't', 'a live ID meanwhile');
ok(psql_finish($slow), 'the backfill finishes');
my $to = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');

my @states = split /\n/, $node->safe_psql('postgres',
	"SELECT description FROM pg_get_wal_records_info('$from', '$to') WHERE resource_manager = 'sno' ORDER BY start_lsn");
cmp_ok(scalar @states, '>=', 1, 'the states are in the WAL');
my @through = map { /\bwall_hi=(\d+)/ ? $1 : die "no wall_hi in $_" } @states;
is_deeply(\@through, [ sort { $a <=> $b } @through ],
	'in WAL order, the live reservation never goes back') or diag explain \@states;
like($states[-1], qr/\bbackfill\.5=/, 'the last record has the backfill\'s mark');

done_testing();
