# The SQL edition's generator (sno_sql.generate, sql/edition/parts/generator.sql) across
# sessions and servers, where production differs from one session: concurrent sessions with
# rollbacks, a crash (kill -9) in the middle of generation, the server's clock stepped back,
# a standby promoted beside its primary (split brain) and one promoted without the primary's
# last WAL (a failover that lost commits), a dump restored into another database and another
# cluster, a database copied by CREATE DATABASE ... TEMPLATE, and a database reconfigured while
# its sessions hold the partition they read. Every ID any server made or gave a client is kept,
# and each check compares them all: sno never repeats an ID.
#
# What cannot be told apart, and is not tested as if it could: a physical copy of the whole
# cluster started beside its original on the same WAL timeline (a disk snapshot, an Aurora
# clone, a Neon branch): same system identifier, same database oid, same timeline. Such a copy
# must be configured with a partition of its own (docs/managed.md).
#
# Needs the edition's plain SQL file, which tests/tap.sh writes (SNO_EDITION_DIR), and
# libfaketime (the clock step). Sessions connect over the Unix socket, and over TCP where said.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;


my %seen;    # every ID made anywhere: text form => where
# Adds IDs (text forms) made at $where; returns how many of them were made before, anywhere.
sub record_ids
{
	my ($where, $ids) = @_;
	my $repeats = 0;
	for my $id (@$ids)
	{
		$repeats++ if exists $seen{$id};
		$seen{$id} = $where;
	}
	return $repeats;
}

# $count IDs from one statement, as text, in the order they were made.
sub edition_ids
{
	my ($node, $count, %options) = @_;
	my $out = $node->safe_psql($options{dbname} // 'postgres',
		"COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, $count) "
		  . "ORDER BY generate_series) TO STDOUT",
		$options{connstr} ? (connstr => $options{connstr}) : ());
	return [ split /\n/, $out ];
}

sub increasing
{
	my ($ids) = @_;
	for my $i (1 .. $#$ids)
	{
		return 0 unless $ids->[$i] gt $ids->[ $i - 1 ];
	}
	return 1;
}

sub install_configured
{
	my ($node, $dbname, $partition) = @_;
	install_edition($node, $dbname, "the plain SQL form installs into $dbname");
	$node->safe_psql($dbname, "SELECT sno_sql.configure($partition)");
	return;
}

my $primary = sno_node('edition_primary', streaming => 1, extension => 0, preload => 0,
	settings => { listen_addresses => '127.0.0.1' });
install_configured($primary, 'postgres', 11);
$primary->safe_psql('postgres',
	'CREATE TABLE eids (id sno_sql.sno PRIMARY KEY, phase text NOT NULL)');
my $tcp = 'host=127.0.0.1 port=' . $primary->port . ' dbname=postgres';

# 1. Four sessions at once (two over TCP), and a fifth whose transactions roll back after the
# IDs reached it.
my @runs;
for my $session (1 .. 4)
{
	my $sql = "INSERT INTO eids SELECT sno_sql.generate(1), 'concurrent' FROM generate_series(1, 25000)";
	push @runs, psql_start($primary, $sql);
}
my $rolled_back = psql_start($primary,
	join(';', map { 'BEGIN; COPY (SELECT sno_sql.to_text(sno_sql.generate(2)) FROM generate_series(1, 5000)) TO STDOUT; ROLLBACK' } 1 .. 4));
ok(psql_finish($_), 'a concurrent session generated 25,000 IDs') for @runs, $rolled_back;
my $committed = [ split /\n/, $primary->safe_psql('postgres',
	"COPY (SELECT sno_sql.to_text(id) FROM eids) TO STDOUT") ];
is(scalar(@$committed), 100_000, '100,000 IDs committed by four sessions, each once (primary key)');
is(record_ids('concurrent', $committed), 0, 'no committed ID repeats');
my @rolled = split /\n/, $rolled_back->{out};
is(scalar(@rolled), 20_000, '20,000 IDs reached a client in transactions rolled back');
is(record_ids('rolled back', \@rolled), 0, '... none of them equals a committed one');
my $over_tcp = edition_ids($primary, 10_000, connstr => $tcp);
is(record_ids('tcp', $over_tcp), 0, '10,000 IDs over TCP repeat none');
ok(increasing($over_tcp), '... and increase');

# 2. kill -9 of the whole server while a session generates: every ID a client was given
# before the crash stays given.
my $streaming = psql_start($primary,
	'COPY (SELECT sno_sql.to_text(sno_sql.generate(3)) FROM generate_series(1, 5000000)) TO STDOUT');
$primary->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT sno_sql%'")
  or die 'the generating session did not start';
sleep 2;
kill9_server($primary);
$streaming->{handle}->finish;
my @before_crash = grep { /^[2-9a-x]{16}$/ } split /\n/, $streaming->{out};
cmp_ok(scalar(@before_crash), '>', 0,
	scalar(@before_crash) . ' IDs reached the client before the crash');
is(record_ids('before the crash', \@before_crash), 0, '... and repeat none');
$primary->start;
my $after_crash = edition_ids($primary, 50_000);
is(record_ids('after the crash', $after_crash), 0,
	'50,000 IDs after the restart repeat none of those before');

# 3. The server's clock stepped back 30 s (libfaketime): IDs go on after the last, with its
# time, and never repeat.
$primary->stop;
my $faketime = $primary->basedir . '/faketime';
append_to_file($faketime, "-30\n");
start_with_faketime($primary, $faketime);
my $stepped = edition_ids($primary, 30_000);
is(record_ids('clock stepped back', $stepped), 0, '30,000 IDs with the clock 30 s back repeat none');
ok($stepped->[0] gt $after_crash->[-1], '... and sort after the last ID before the step');
$primary->restart;    # without libfaketime again (start_with_faketime's environment is gone)

# 4. A standby promoted beside its primary (split brain): both generate at once.
$primary->backup('edition_backup');
my $standby = PostgreSQL::Test::Cluster->new('edition_standby');
$standby->init_from_backup($primary, 'edition_backup', has_streaming => 1);
$standby->start;
record_ids('before the standby', edition_ids($primary, 20_000));
$primary->wait_for_catchup($standby);
# (generate's first step is its nextval, which a standby refuses before anything of sno_sql's.)
like(error_of($standby, 'SELECT sno_sql.generate(1)'),
	qr/^ERROR:  25006: cannot execute nextval\(\) in a read-only transaction/,
	'a standby refuses to generate (25006)');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'not promoted';
my $old_side = psql_start($primary,
	'COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 50000)) TO STDOUT');
my $new_side = psql_start($standby,
	'COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 50000)) TO STDOUT');
ok(psql_finish($old_side) && psql_finish($new_side), 'both sides generated 50,000 IDs at once');
my @old_side = split /\n/, $old_side->{out};
my @new_side = split /\n/, $new_side->{out};
is(record_ids('old primary, split', \@old_side), 0, "the old primary's IDs repeat none made before");
is(record_ids('promoted standby, split', \@new_side), 0,
	"the promoted standby's repeat none of the old primary's, before or beside it");
my $ticks = $standby->safe_psql('postgres',
	"SELECT string_agg(DISTINCT sno_sql.tick_tock(sno_sql.from_text(t))::text, ',') FROM unnest(ARRAY['$old_side[0]', '$new_side[0]']) AS t");
is($ticks, '0,1', 'the two sides are in the two tick-tock timelines');
$standby->stop;

# 5. A standby promoted without the primary's last WAL (an asynchronous failover that lost
# commits): it never received the IDs made after it stopped following.
$primary->backup('edition_backup_2');
my $lagging = PostgreSQL::Test::Cluster->new('edition_lagging');
$lagging->init_from_backup($primary, 'edition_backup_2', has_streaming => 1);
$lagging->start;
$primary->wait_for_catchup($lagging);
$lagging->stop;
my $lost = edition_ids($primary, 30_000);
is(record_ids('lost in the failover', $lost), 0, '30,000 IDs made after the standby stopped following');
$lagging->append_conf('postgresql.conf', "primary_conninfo = ''");
$lagging->start;
$lagging->promote;
$lagging->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'not promoted';
is(record_ids('after the lossy failover', edition_ids($lagging, 50_000)), 0,
	'50,000 IDs of the promoted standby repeat none of the lost ones, nor any other');
$lagging->stop;

# 6. A dump restored into another database of the same server and into another cluster:
# refused (55000) until configured; then a new timeline, after the clock.
my $dump = "$PostgreSQL::Test::Utils::tmp_check/edition.dump";
$primary->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump of the database');
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
$primary->command_ok([ 'pg_restore', '-d', $primary->connstr('restored'), $dump ],
	'restored into another database');
# Its own initdb: Cluster.pm would otherwise copy one template, and every cluster of the test
# would have the same system identifier, as only physical copies do.
my $other = PostgreSQL::Test::Cluster->new('edition_other');
$other->init(force_initdb => 1);
$other->start;
my $system_identifier = 'SELECT system_identifier FROM pg_control_system()';
isnt($other->safe_psql('postgres', $system_identifier),
	$primary->safe_psql('postgres', $system_identifier), 'the other cluster is a new initdb');
$other->command_ok([ 'pg_restore', '-d', $other->connstr('postgres'), $dump ],
	'restored into another cluster');
for my $copy ([ $primary, 'restored' ], [ $other, 'postgres' ])
{
	my ($node, $dbname) = @$copy;
	like(error_of($node, 'SELECT sno_sql.generate(1)', dbname => $dbname),
		qr/^ERROR:  55000: sno_sql's partition 11 was configured in another database/,
		"the restored copy in $dbname of " . $node->name . ' refuses to generate');
	is($node->safe_psql($dbname, "SELECT \"partition\" FROM sno_sql.configuration"), '11',
		'... its configuration came with the dump');
}
$primary->safe_psql('restored', 'SELECT sno_sql.configure(12)');
is(record_ids('restored, partition 12', edition_ids($primary, 20_000, dbname => 'restored')), 0,
	'configured with a partition of its own, it repeats none');
# The original retired, the copy may take its partition: a new timeline keeps them apart.
$other->safe_psql('postgres', 'SELECT sno_sql.configure(11)');
is(record_ids('restored, partition 11', edition_ids($other, 20_000)), 0,
	'configured with the original partition, after the clock, it repeats none');

# 7. CREATE DATABASE ... TEMPLATE: a copy with another oid.
$primary->safe_psql('postgres', 'CREATE DATABASE copied TEMPLATE postgres');
like(error_of($primary, 'SELECT sno_sql.generate(1)', dbname => 'copied'),
	qr/^ERROR:  55000: sno_sql's partition 11 was configured in another database/,
	'a database copied from a template refuses to generate');
is(record_ids('original after the copies', edition_ids($primary, 20_000)), 0,
	'the original goes on, repeating none');

# 8. Reconfigured while sessions hold the partition they read: a session that generated before
# two configures in a row (the second brings its tick-tock bit back), one that begins while a
# configure is in progress (it has begun its run, but its partition is not committed) and
# transactions whose snapshot is older than a configure never make IDs with the old partition.
my $held = $primary->background_psql('postgres');
is($held->query_safe('SELECT sno_sql."partition"(sno_sql.generate(1))'), '11',
	'a session generates with partition 11');
$primary->safe_psql('postgres', 'SELECT sno_sql.configure(21)');
$primary->safe_psql('postgres', 'SELECT sno_sql.configure(22)');
sub partitions_of_ids
{
	my ($ids) = @_;
	return $primary->safe_psql('postgres',
		"SELECT string_agg(DISTINCT sno_sql.\"partition\"(sno_sql.from_text(t))::text, ',') "
		  . 'FROM unnest(ARRAY[' . join(',', map { "'$_'" } @$ids) . ']) AS t');
}
my $after_two = [ split /\n/, $held->query_safe(
	'COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 1000)) TO STDOUT') ];
is(partitions_of_ids($after_two), '22',
	'after two configures, the session that read partition 11 makes IDs with 22');
is(record_ids('after two configures', $after_two), 0, '... and repeats none');
my $configuring = $primary->background_psql('postgres');
$configuring->query_safe('BEGIN');
$configuring->query_safe('SELECT sno_sql.configure(23)');
my $beginning = psql_start($primary,
	'COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 1000)) TO STDOUT',
	application_name => 'beginning');
$primary->poll_query_until('postgres',
	"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE application_name = 'beginning'")
  or die 'the new session did not wait for the configure in progress';
$configuring->query_safe('COMMIT');
ok(psql_finish($beginning), 'a session that began during a configure generated once it committed');
my $during = [ split /\n/, $beginning->{out} ];
is(partitions_of_ids($during), '23', "... with the configure's new partition, 23");
is(record_ids('during a configure', $during), 0, '... repeating none');
my $held_after = [ split /\n/, $held->query_safe(
	'COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 1000)) TO STDOUT') ];
is(partitions_of_ids($held_after), '23', 'the session of partition 22 goes on with 23');
is(record_ids('the held session, again', $held_after), 0, '... repeating none');
# A REPEATABLE READ or SERIALIZABLE transaction whose snapshot is older than a configure that
# committed since: its session check fails with a serialization failure (40001) rather than read
# the old partition beside the new run; retried, it takes the new one.
my $snapshot = $primary->background_psql('postgres', on_error_stop => 0);
for my $isolation ('REPEATABLE READ', 'SERIALIZABLE')
{
	my $partition = $isolation eq 'SERIALIZABLE' ? 25 : 24;
	$snapshot->query_safe("BEGIN ISOLATION LEVEL $isolation");
	$snapshot->query_safe('SELECT count(*) FROM sno_sql.configuration');    # the snapshot
	$primary->safe_psql('postgres', "SELECT sno_sql.configure($partition)");
	$snapshot->query('SELECT sno_sql."partition"(sno_sql.generate(1))');
	like($snapshot->{stderr}, qr/could not serialize access due to concurrent update/,
		"$isolation: a snapshot older than the configure fails to serialize (40001)");
	$snapshot->{stderr} = '';    # (BackgroundPsql keeps it; query_safe would see it again)
	$snapshot->query_safe('ROLLBACK');
	my $retried = [ split /\n/, $snapshot->query_safe(
		"BEGIN ISOLATION LEVEL $isolation; "
		  . 'COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 1000)) TO STDOUT; '
		  . 'COMMIT') ];
	is(partitions_of_ids($retried), $partition, "... and retried, takes partition $partition");
	is(record_ids("$isolation, retried", $retried), 0, '... repeating none');
}
$_->quit for $held, $configuring, $snapshot;

# 9. With the generator's clock an hour ahead of the server's, IDs of a transaction that
# rolled back (a sequence's WAL is not flushed for them) before a crash: the restart begins a
# new run, in the other tick-tock timeline, so the clock that comes back cannot repeat them.
# (Last: with the clock ahead, the copies above would no longer be apart by time alone.)
$primary->safe_psql('postgres',
	"SELECT sno_sql.start_after(sno_sql.from_parts(now() + interval '1 hour', 0, 0, 0)); CHECKPOINT");
my $unflushed = [ split /\n/, $primary->safe_psql('postgres',
	'BEGIN; COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, 1000)) TO STDOUT; ROLLBACK') ];
is(record_ids('rolled back before a crash', $unflushed), 0, '1,000 IDs an hour ahead, rolled back');
kill9_server($primary);
$primary->start;
is(record_ids('after the second crash', edition_ids($primary, 20_000)), 0,
	'after the crash, 20,000 IDs repeat none of them');

note(scalar(keys %seen) . ' distinct IDs from every server compared');
done_testing();
