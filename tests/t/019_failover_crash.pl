# Failover after the primary is killed, to a standby whose clock is behind the old primary's IDs.
#
# Why: a standby's own state file is the one of its base backup, which knows nothing of what the
# primary generated later. The primary's high-water mark reaches the standby through the WAL
# (src/pg/server/replication.rs, src/pg/recovery/replay.rs), so the promoted standby starts
# past every ID the old primary could have returned, whatever its clock says. The primary generates nothing before the base backup, so
# without the WAL records the promoted standby would start a new history in the old primary's
# timeline, at the old primary's times, and repeat its IDs: this test fails then.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $primary = sno_node('primary', streaming => 1, settings => { 'sno.partition' => 7 });
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# Four clients generate on the primary until it is killed, recording every ID they are given.
my @load = start_recorded_load($primary, 4, $PostgreSQL::Test::Utils::tmp_check);
$primary->poll_query_until('postgres', 'SELECT count(*) >= 100000 FROM load')
  or die "the load did not get going";
# Until the old primary's first ID is 4 s old: the promoted standby's clock is set back to it,
# and check_promoted_repeats_none wants that to be 3 s at least (a fixed sleep fell short once
# the load reached its rows quickly).
$primary->poll_query_until('postgres',
	"SELECT clock_timestamp() - sno_time(min(id)) >= interval '4 s' FROM load")
  or die "the load's first ID never got 4 s old";
kill9_server($primary);
my $recorded = recorded_ids(@load);
my $ids = check_promoted_repeats_none($standby, $recorded);
ok($standby->log_contains(qr/sno: replayed \d+ generator state record\(s\) from the WAL/),
	'the standby says it replayed the generator state records');
ok( $standby->log_contains(
		qr/sno: recovery has ended; this server generates IDs with partition 7 \(set by sno\.partition\)/),
	'the promoted standby names the partition it continues with');
is($standby->safe_psql('postgres',
		"SELECT string_agg(DISTINCT sno_tick_tock(id)::text, ',') FROM load"),
	'0', "the old primary's IDs that reached the standby are in tick-tock 0");
is(tick_of($standby, $ids->[0]) . tick_of($standby, $ids->[-1]),
	'11', "the promoted standby's IDs are in the other timeline (tick-tock 1)");

sub tick_of
{
	my ($node, $id) = @_;
	return $node->safe_psql('postgres', "SELECT sno_tick_tock('$id')");
}

done_testing();
