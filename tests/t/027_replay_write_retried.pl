# A standby that cannot write its state file while replaying the primary's generator state waits
# and retries, and never goes past the record with the file stale.
#
# Why: the record is never replayed again once a restartpoint passes it, so a standby that only
# warned (as sno did before, issue 22) kept a stale file: after a restart, and a promotion, it
# knew less than its primary had reserved, and with a clock behind that could repeat its IDs.
# Here the write fails for a while (the temporary file's name is taken by a directory), then works.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = sno_node('primary', streaming => 1);
$primary->safe_psql('postgres', 'SELECT count(sno_generate(1)) FROM generate_series(1, 10)');
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

sub wall_hi
{
	my ($node) = @_;
	my ($wall_hi) = slurp_file($node->data_dir . '/sno_generator.state') =~ /^wall_hi=(\d+)$/m;
	return $wall_hi;
}

# The next reservation, a minute ahead: one record, which the standby cannot write to its file.
my $hole = $standby->data_dir . '/sno_generator.state.tmp';
mkdir $hole or die "mkdir $hole: $!";
my $offset = -s $standby->logfile;
set_clock_offset_ms($primary, 60_000);
$primary->safe_psql('postgres', 'SELECT sno_generate(1)');
my $after_record = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$standby->wait_for_log(
	qr/WARNING:  sno: could not write sno_generator.state while replaying the primary's generator state: Is a directory/,
	$offset);
ok( $standby->log_contains(
		qr/DETAIL:  Replay waits at this record and tries again each second \(attempts so far: 1\)/,
		$offset),
	'the standby warns that replay waits and retries');
sleep 2;
is( $standby->safe_psql('postgres', "SELECT pg_last_wal_replay_lsn() < '$after_record'"),
	't', 'replay has not gone past the record meanwhile');
isnt(wall_hi($standby), wall_hi($primary), "meanwhile the standby's file is the older one");

rmdir $hole or die "rmdir $hole: $!";
$primary->wait_for_catchup($standby);
ok($standby->log_contains(qr/LOG:  sno: wrote sno_generator.state after \d+ failed attempt\(s\); replay goes on/, $offset),
	'once the file can be written, the standby says so and replay goes on');
is(wall_hi($standby), wall_hi($primary), "the standby's file has the primary's reservation");

# A restartpoint and a restart: the state is in the file, not only in memory.
$standby->safe_psql('postgres', 'CHECKPOINT');
$standby->restart;
is(wall_hi($standby), wall_hi($primary), "after a restartpoint and a restart, still the primary's");
$standby->promote;
is( $standby->safe_psql('postgres',
		"SELECT persisted_through >= to_timestamp(" . wall_hi($primary) . " * 0.004 + 1262304000) FROM sno_generator_stats()"),
	't', "the promoted standby's generator covers the primary's reservation");

done_testing();
