# Failover to a standby restored from an older base backup that then caught up from the WAL
# archive and by streaming.
#
# Why: the base backup was taken before the primary generated anything, so the standby's own
# state file knows nothing; everything it knows of the primary's IDs comes from replaying the
# archived WAL and the stream. Killed primary, promoted standby with its clock behind every ID
# the old primary made: not one may repeat.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $primary = sno_node('primary', streaming => 1, archiving => 1,
	settings => { 'sno.partition' => 7 });
$primary->backup('old');

my @load = start_recorded_load($primary, 4, $PostgreSQL::Test::Utils::tmp_check);
$primary->poll_query_until('postgres', 'SELECT count(*) >= 100000 FROM load')
  or die "the load did not get going";
# Some WAL segments with sno records are archived (and may be gone from pg_wal) by now.
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'old', has_streaming => 1, has_restoring => 1);
$standby->start;
$primary->wait_for_catchup($standby);
kill9_server($primary);
my $recorded = recorded_ids(@load);
ok( $standby->log_contains(qr/restored log file "[0-9A-F]+" from archive/),
	'the standby replayed WAL from the archive');
check_promoted_repeats_none($standby, $recorded);

done_testing();
