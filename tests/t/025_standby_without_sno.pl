# A standby without sno preloaded, replaying the WAL of a primary that generated IDs.
#
# Why: the primary's generator state travels in WAL records of sno's own resource manager, which
# only a server with sno preloaded can replay. A standby that skipped them could be promoted
# without knowing the primary's IDs, so PostgreSQL's refusal stands: the standby stops at the
# first such record and says to preload the module (the README, "Replication and failover").
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = sno_node('primary', streaming => 1);
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$standby->start;

$primary->safe_psql('postgres', 'SELECT count(sno_generate(1)) FROM generate_series(1, 10)');
$standby->wait_for_log(qr/resource manager with ID 167 not registered/);
ok( $standby->log_contains(
		qr/FATAL:  resource manager with ID 167 not registered\n.*HINT:  Include the extension module that implements this resource manager in "?shared_preload_libraries"?\./
	),
	'the standby stops at the first sno record, saying to preload the module');
my $stopped = 0;
for (1 .. 100)
{
	$stopped = 1, last unless -e $standby->data_dir . '/postmaster.pid';
	usleep(100_000);
}
ok($stopped, 'the standby shut down');
$standby->{_pid} = undef;

# Preloading sno is the fix: the standby then replays the record and goes on.
$standby->append_conf('postgresql.conf', "shared_preload_libraries = 'sno'");
$standby->start;
$primary->wait_for_catchup($standby);
ok($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()') eq 't',
	'with sno preloaded the standby replays past the record');

done_testing();
