# A standby whose sno is older than its primary's stops replay at the first record it cannot
# read, and says which sno to install.
#
# Why: a record of the generator's state that a standby skipped would leave it, once promoted,
# knowing less than its primary returned. A newer sno may write a record type or a state version
# this one does not know: replay must stop there (PostgreSQL's own rule for WAL it cannot read),
# with a message that says what to do. The records here are written by a test-only function, as
# a newer sno would write them; each standby stops at the first one it receives.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;
use Time::HiRes qw(usleep);

my $primary = sno_node('primary', streaming => 1);
# Only test builds have it (wal.rs).
$primary->safe_psql('postgres',
	q{CREATE FUNCTION sno_test_log_wal_record(integer, text) RETURNS void
	  AS '$libdir/sno', 'sno_test_log_wal_record_wrapper' LANGUAGE C STRICT});

sub standby_stops_at
{
	my ($name, $info, $text) = @_;
	$primary->backup("before_$name");
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, "before_$name", has_streaming => 1);
	$standby->start;
	$primary->wait_for_catchup($standby);
	$primary->safe_psql('postgres', "SELECT sno_test_log_wal_record($info, '$text')");
	$standby->wait_for_log(qr/FATAL:  sno \S+ cannot replay/);
	my $stopped = 0;
	for (1 .. 100)
	{
		$stopped = 1, last unless -e $standby->data_dir . '/postmaster.pid';
		usleep(100_000);
	}
	ok($stopped, "$name: the standby stopped");
	$standby->{_pid} = undef;
	return slurp_file($standby->logfile);
}

my $version = $primary->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'sno'");
my $log = standby_stops_at('newer_version', 16,
	'version=3 wall_hi=1 wall_safe=1 drifts=0 writer=9.1.0');
like( $log,
	qr/FATAL:  sno \Q$version\E cannot replay a generator state record of version 3, written by sno 9\.1\.0\n.*DETAIL:  The record carries how far the server that wrote the WAL generated IDs; replay cannot go past it without that\.\n.*HINT:  Install sno 9\.1\.0 \(or later\) on this server and start it again; replay resumes at this record\. Upgrade sno on standbys before their primary\.\n.*CONTEXT:  WAL redo at \S+ for sno\/STATE/,
	'a state of a newer version: the standby says to install the sno that wrote it');

$log = standby_stops_at('newer_type', 32, 'whatever a newer sno writes');
like( $log,
	qr/FATAL:  sno \Q$version\E cannot replay a generator state record of type 0x20, written by a newer sno\n.*HINT:  Install on this server the sno release that the server which wrote this WAL runs \(or a later one\) and start it again; replay resumes at this record\./s,
	'a record type of a newer sno that does not name itself: the standby says to install that release');

# The primary need not replay these after a crash.
$primary->safe_psql('postgres', 'CHECKPOINT');

done_testing();
