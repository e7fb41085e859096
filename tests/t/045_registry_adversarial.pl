# The partition registry against what production does that a test bench does not: clones
# behind one address and port, a registry restored from a copy of its files or promoted from an
# asynchronous standby, a backfill partition, a source address that changes, and a role that
# can create objects in the registry's public schema. Everything over TCP, with writers making
# IDs on every server throughout; at the end the IDs of all servers are compared: no repeat.
#
# Why: the registry exists so that uniqueness across servers stops resting on a person. Each of
# these repeated IDs (or broke leases) with the rules of a81a9fb, which told servers apart by
# system identifier, timeline, port and address, trusted its own rows after a restore, and
# resolved names through the registry session's search_path (docs/generator.md, "What the
# registry guarantees"; tests/registry_model.rs checks the same rules exhaustively).
use strict;
use warnings;
use PostgreSQL::Test::Utils;
# TCP everywhere: the registry sees each server's address, as it would in production. Set
# before PostgreSQL::Test::Cluster reads it, when this file has been compiled.
BEGIN { $PostgreSQL::Test::Utils::use_unix_sockets = 0; }
use SnoTest;
use Test::More;
use File::Path ();
use Time::HiRes ();

my $registry = sno_node('registry', streaming => 1);
$registry->safe_psql('postgres', q{
	CREATE ROLE servers LOGIN;
	DO $$
	DECLARE f regprocedure;
	BEGIN
	    FOR f IN SELECT p.oid FROM pg_proc p
	             WHERE p.proname IN ('sno_lease_claim', 'sno_lease_renew', 'sno_lease_release') LOOP
	        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO servers', f);
	    END LOOP;
	END $$;
	CREATE ROLE hostile LOGIN;
	GRANT CREATE ON SCHEMA public TO hostile;});
# The registry's standby, behind on purpose when the registry fails over to it.
$registry->backup('registry_backup');
my $registry_standby = PostgreSQL::Test::Cluster->new('registry_standby');
$registry_standby->init_from_backup($registry, 'registry_backup', has_streaming => 1);
$registry_standby->start;

# Servers reach the registry at 127.0.0.1 over TCP, or at the standby once it is promoted
# (libpq tries the hosts in turn and takes the one that accepts writes).
my $registry_conninfo = join ' ',
  'host=' . join(',', $registry->host, $registry_standby->host),
  'port=' . join(',', $registry->port, $registry_standby->port),
  'dbname=postgres user=servers connect_timeout=2 target_session_attrs=read-write';

sub leased_node
{
	my ($name, %options) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name, %{ $options{cluster} // {} });
	$node->init;
	# A node on an address of its own (127.0.0.x) is reached from it: base backups included.
	$node->append_conf('pg_hba.conf',
		"host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust");
	my %settings = (
		'sno.partition_source'   => 'registry',
		'sno.partition_registry' => $options{conninfo} // $registry_conninfo,
		'sno.partition_lease'    => '3s',
		%{ $options{settings} // {} });
	$node->append_conf('postgresql.conf',
		join "\n", "shared_preload_libraries = 'sno'", 'wal_level = replica',
		'max_wal_senders = 4',
		map { "$_ = '$settings{$_}'" } sort keys %settings);
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION sno');
	create_ids_table($node);
	return $node;
}

sub lease_of
{
	my ($node, $column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM sno_partition_lease()");
}

# What a query answers, or its error (so that the test goes on, against a registry without
# epochs too).
sub answer_of
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	return $ret == 0 ? $out : $err;
}

sub wait_for_lease
{
	my ($node) = @_;
	return $node->poll_query_until('postgres', 'SELECT holding FROM sno_partition_lease()');
}

sub wait_for_ids
{
	my ($node) = @_;
	return $node->poll_query_until('postgres', 'SELECT sno_generate(1) IS NOT NULL');
}

# A writer: a session that inserts 50 IDs every 20 ms into the node's ids table for about
# $seconds, going on after errors (a refused sno_generate, while a lease is being waited for).
sub start_writer
{
	my ($node, $seconds) = @_;
	my $round = "INSERT INTO ids (id, phase, n) SELECT sno_generate(1), 'writer', g "
	  . "FROM generate_series(1, 50) AS g;\nSELECT pg_sleep(0.02);\n";
	my $script = $round x ($seconds * 40);
	my ($file, $path) = File::Temp::tempfile(DIR => $PostgreSQL::Test::Utils::tmp_check);
	print $file $script;
	close $file;
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[
			$node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=0',
			'-d', $node->connstr('postgres'), '-f', $path
		],
		'>', \$out, '2>', \$err);
}

# Every ID each node made (its ids table), and how many were made in all and how many repeat.
my %made;    # id => the servers that made it
my $made_count = 0;

sub collect_ids
{
	my (@nodes) = @_;
	for my $node (@nodes)
	{
		for my $id (split /\n/, $node->safe_psql('postgres', 'SELECT id FROM ids'))
		{
			push @{ $made{$id} }, $node->name;
			$made_count++;
		}
		$node->safe_psql('postgres', 'TRUNCATE ids');
	}
	return;
}

# 1. Two clones of one data directory on the same port, each on an address of its own
# (127.0.0.x), reaching the registry from the same address (127.0.0.1): system identifier,
# timeline, port and address all alike. The copy is of the stopped directory (a snapshot, an
# image), so both start from the same generator state, in the same tick-tock timeline: on one
# partition they would make the same IDs. Each is its own instance, and gets its own partition;
# the first to start takes the original's back (the copy holds the secret its shutdown left).
my $original = leased_node('original', cluster => { own_host => 1 });
ok(wait_for_ids($original), 'the original makes IDs');
$original->stop;
$original->backup_fs_cold('clone_backup');
my $clone = PostgreSQL::Test::Cluster->new('clone', port => $original->port, own_host => 1);
$clone->init_from_backup($original, 'clone_backup');
$original->start;
$clone->start;
ok(wait_for_ids($original), 'started again, the original makes IDs');
ok(wait_for_ids($clone), 'its clone, on the same port, makes IDs');
my ($writer, $clone_writer) = map { start_writer($_, 8) } $original, $clone;
isnt(lease_of($clone, '"partition"'), lease_of($original, '"partition"'),
	'with another partition than the original');
$_->finish for $writer, $clone_writer;
is( $registry->safe_psql('postgres',
		q{SELECT count(*) || ' ' || count(DISTINCT (address, port))
		  FROM sno_partition_leases WHERE expires_at > now()}),
	'2 1', 'the registry shows two live leases behind one address and port');
collect_ids($original, $clone);

# 2. A server reaches the registry from another address (a pooler or NAT that changed, here
# TCP then a Unix socket): its renewals go on, on the same partition, and no lease is left
# behind it.
my $moved_partition = lease_of($clone, '"partition"');
my $socket = PostgreSQL::Test::Utils::tempdir_short();
$registry->append_conf('postgresql.conf', "unix_socket_directories = '$socket'");
$registry->restart;
$clone->safe_psql('postgres',
	"ALTER SYSTEM SET sno.partition_registry = 'host=$socket port=" . $registry->port
	  . " dbname=postgres user=servers'");
$clone->reload;
ok( $registry->poll_query_until('postgres',
		"SELECT address IS NULL AND renewed_at > now() - interval '1 second' "
		  . "FROM sno_partition_leases WHERE \"partition\" = $moved_partition"),
	'renewals come from the new address (a Unix socket: none)');
is(lease_of($clone, '"partition"') . ' ' . lease_of($clone, 'holding'),
	"$moved_partition t", 'on the same partition, still held');
is( $registry->safe_psql('postgres',
		'SELECT count(*) FROM sno_partition_leases WHERE expires_at > now()'),
	2, 'and no third live lease');
$clone->safe_psql('postgres', "ALTER SYSTEM SET sno.partition_registry = '$registry_conninfo'");
$clone->reload;

# 3. A role that may create in the registry's public schema (where sno is) shadows what a
# lease holder calls: overloads of the lease functions taking text, and to_timestamp. The
# holders call every function by schema and argument types, with search_path pg_catalog: the
# partitions in use stay the ones the registry granted.
$registry->safe_psql('postgres', q{
	SET ROLE hostile;
	CREATE FUNCTION public.sno_lease_claim(text, text, text, text, text, text, text, text, text,
	    OUT "partition" integer, OUT start_after_ms bigint, OUT backfill_reserved boolean)
	    LANGUAGE sql AS 'SELECT 7, 946684800000, true';
	CREATE FUNCTION public.sno_lease_renew(text, text, text, text, text, text, text, text, text,
	    OUT renewed_until timestamptz, OUT backfill_reserved boolean)
	    LANGUAGE sql AS 'SELECT now() + interval ''1 day'', true';
	CREATE FUNCTION public.sno_lease_claim(text, text, text, interval, timestamptz, integer,
	    OUT "partition" integer, OUT expires_at timestamptz, OUT start_after timestamptz)
	    LANGUAGE sql AS 'SELECT 7, now() + interval ''1 day'', NULL::timestamptz';
	CREATE FUNCTION public.to_timestamp(numeric) RETURNS timestamptz
	    LANGUAGE sql AS 'SELECT timestamptz ''2000-01-01''';
	RESET ROLE;});
# (This one names the registry's host: the lease holder looks the name up within the request's
# deadline, and tries each of its addresses, ::1 and 127.0.0.1, as libpq would.)
my $third = leased_node('third', conninfo => $registry_conninfo =~ s/host=127\.0\.0\.1,/host=localhost,/r);
ok(wait_for_ids($third), 'a server that starts now makes IDs');
my $third_partition = lease_of($third, '"partition"');
isnt($third_partition, '7', 'not with the partition the hostile functions return');
is( $registry->safe_psql('postgres',
		"SELECT used_through > now() FROM sno_partition_leases "
		  . "WHERE \"partition\" = $third_partition"),
	't', "but with one the registry granted it, whose used_through goes on");
$registry->safe_psql('postgres', 'DROP OWNED BY hostile');

# 4. A backfill partition: a server whose partition comes from the registry may make backfill
# IDs only in a partition the registry reserves, which it then never leases.
$third->safe_psql('postgres', "ALTER SYSTEM SET sno.backfill_partition = 3");
$third->reload;
like(
	error_of($third, "SELECT sno_generate_at(1, now() - interval '1 day')"),
	qr/sno.backfill_partition \(3\) is not reserved in the partition registry/,
	'sno_generate_at refuses a backfill partition the registry does not reserve');
# (psql, not safe_psql: the test goes on against a registry without reservations, as 0.2.0's
# first registry was, to show what follows from that.)
# The registry restarted above (a new epoch): it cannot know that no lease of partition 3 was lost,
# and reserves it only on the DBA's word.
like(answer_of($registry, "SELECT sno_partition_reserve(3, 'backfill of third')"),
	qr/may have lost leases/, 'after a registry restart, a reservation needs the DBA\'s word');
$registry->psql('postgres',
	"SELECT sno_partition_reserve(3, 'backfill of third', known_unused => true)");
ok( $third->poll_query_until('postgres',
		"SELECT sno_generate_at(1, now() - interval '1 day') IS NOT NULL"),
	'once reserved (at the next renewal), it makes backfill IDs');
$third->safe_psql('postgres', "INSERT INTO ids SELECT sno_generate_at(1, clock_timestamp() "
	  . "- interval '1 second'), 'backfill' FROM generate_series(1, 2000)");
my $fourth = leased_node('fourth');
ok(wait_for_ids($fourth), 'the next server to start makes IDs');
isnt(lease_of($fourth, '"partition"'), '3', 'never in the reserved partition');
$fourth->safe_psql('postgres', q{INSERT INTO ids SELECT sno_generate(1), 'live'
	FROM generate_series(1, 2000)});
collect_ids($third, $fourth);

# A streaming standby of the fourth, to be promoted beside it (a restore drill, a blue/green
# copy, a failover whose old primary was not fenced).
$fourth->backup('fourth_backup');
my $fourth_copy = PostgreSQL::Test::Cluster->new('fourth_copy');
$fourth_copy->init_from_backup($fourth, 'fourth_backup', has_streaming => 1);
$fourth_copy->start;

my @writers = map { start_writer($_, 30) } $original, $clone, $third, $fourth;

# 4b. The fourth's standby is promoted while the fourth goes on generating: it asks for the
# fourth's partition (its WAL records it), which a live lease holds, and gets another at once.
$fourth->wait_for_catchup($fourth_copy);
$fourth_copy->promote;
my $promoted_at = Time::HiRes::time();
ok(wait_for_ids($fourth_copy), 'the promoted copy makes IDs');
note sprintf('its first ID came %.2f s after the promotion', Time::HiRes::time() - $promoted_at);
isnt(lease_of($fourth_copy, '"partition"'), lease_of($fourth, '"partition"'),
	"with another partition than its primary's, still live");
# The rows the copy replayed are the fourth's, counted there.
$fourth_copy->safe_psql('postgres', 'TRUNCATE ids');
push @writers, start_writer($fourth_copy, 20);

# 5. The registry fails over to its standby, which lacks the latest claims (its replay paused):
# the new timeline is a new epoch, and nothing lost is handed out again without its floor.
$registry_standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
my $fifth = leased_node('fifth');
ok(wait_for_ids($fifth), 'a fifth server claims on the registry, unreplicated, and makes IDs');
push @writers, start_writer($fifth, 20);
$registry->stop('immediate');
$registry_standby->promote;
ok( $registry_standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'the standby is promoted');
my $sixth = leased_node('sixth');
ok(wait_for_ids($sixth), 'a sixth server claims on the promoted registry, and makes IDs');
push @writers, start_writer($sixth, 15);
like(answer_of($registry_standby, 'SELECT reason FROM sno_registry_epoch'),
	qr/new timeline|no row of/, 'the promoted registry began a new epoch, and says why');

# 6. The registry (the promoted standby now) is restored from a copy of its files taken
# earlier (stopped, copied, started; later stopped, the copy put back, started): the leases
# claimed since are lost. Its restart is a new epoch: a partition not renewed since stays after
# its floor, and the holders whose rows vanished write them again.
$registry = $registry_standby;
$registry->stop('fast');
my $copy = "$PostgreSQL::Test::Utils::tmp_check/registry_copy";
system('cp', '-a', $registry->data_dir, $copy) == 0 or die "could not copy the registry";
$registry->start;
my $seventh = leased_node('seventh');
ok(wait_for_ids($seventh), 'a seventh server claims after the copy, and makes IDs');
my $seventh_partition = lease_of($seventh, '"partition"');
push @writers, start_writer($seventh, 10);
$registry->stop('fast');
File::Path::rmtree($registry->data_dir);
system('cp', '-a', $copy, $registry->data_dir) == 0 or die "could not restore the registry";
$registry->start;
my $eighth = leased_node('eighth');
ok(wait_for_lease($eighth), 'an eighth server claims on the restored registry');
isnt(lease_of($eighth, 'start_after'), '', 'and is told to stay after the epoch floor');
ok(wait_for_ids($eighth), 'it makes IDs once past it');
push @writers, start_writer($eighth, 5);
ok( $registry->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM sno_partition_leases WHERE \"partition\" = $seventh_partition"),
	"the seventh's lost partition has a row again (its renewal, or another's claim)");
$_->finish for @writers;

my @servers =
  ($original, $clone, $third, $fourth, $fourth_copy, $fifth, $sixth, $seventh, $eighth);
collect_ids(@servers);
cmp_ok($made_count, '>=', 20_000, "the servers made $made_count IDs");
my @repeated = grep { @{ $made{$_} } > 1 } sort keys %made;
is(scalar(@repeated), 0, 'not one ID was made by two servers');
diag("$_ made by @{ $made{$_} }") for @repeated[ 0 .. ($#repeated < 4 ? $#repeated : 4) ];
my %partitions;
$partitions{ lease_of($_, '"partition"') }++ for grep { lease_of($_, 'holding') eq 't' } @servers;
is(scalar(grep { $_ > 1 } values %partitions), 0, 'no two servers hold one partition now');

$_->stop for @servers, $registry_standby;
done_testing();
