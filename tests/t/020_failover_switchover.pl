# A clean switchover: the primary is shut down (fast) while clients generate, and the standby is
# promoted with its clock behind the old primary's IDs.
#
# Why: at a clean shutdown the primary writes its exact state into its own state file, which no
# standby sees; what the standby has is the reservations that came through the WAL (each covers
# more than the exact state). The promoted standby must start past every ID the old primary
# returned, as after the kill in 019_failover_crash.pl.
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

my @load = start_recorded_load($primary, 4, $PostgreSQL::Test::Utils::tmp_check);
$primary->poll_query_until('postgres', 'SELECT count(*) >= 100000 FROM load')
  or die "the load did not get going";
# Until the old primary's first ID is 4 s old: the promoted standby's clock is set back to it,
# and check_promoted_repeats_none wants that to be 3 s at least (a fixed sleep fell short once
# the load reached its rows quickly).
$primary->poll_query_until('postgres',
	"SELECT clock_timestamp() - sno_time(min(id)) >= interval '4 s' FROM load")
  or die "the load's first ID never got 4 s old";
$primary->stop('fast');
my $recorded = recorded_ids(@load);
check_promoted_repeats_none($standby, $recorded);

# A clean switchover loses no committed row: the old primary, started again on its own to
# look, has exactly the rows the promoted standby has (generated_ids inserts none).
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM load'),
	$standby->safe_psql('postgres', 'SELECT count(*) FROM load'),
	"every row the old primary committed is on the promoted standby");
$primary->stop;

done_testing();
