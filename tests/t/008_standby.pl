# A hot standby.
#
# Why: a standby is a copy with the primary's partition; IDs it made would collide with the
# primary's, so it must refuse to make any.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $primary = sno_node('primary', streaming => 1, ids => 1);
generate_into($primary, 'primary', 100) or die;
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
ok($standby->poll_query_until('postgres', 'SELECT pg_is_in_recovery()'),
	'the standby is in recovery');
is( error_of($standby, 'SELECT sno_generate()'),
	"ERROR:  25006: sno_generate cannot run on a standby server\n"
	  . "DETAIL:  A standby shares its primary's partition; generate IDs on the primary.",
	'sno_generate on the standby -> 25006');
ok( $standby->poll_query_until('postgres', 'SELECT count(DISTINCT id::text) FROM ids', '100'),
	"the primary's 100 IDs are readable on the standby");

done_testing();
