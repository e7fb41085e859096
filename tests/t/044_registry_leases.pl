# Servers that take their partitions from a registry (sno.partition_source = 'registry'): no
# partition set by anyone, none held by two servers, and none of a server's IDs met by another
# server's, through restarts, a registry that is down, and a holder that dies and whose
# partition goes to another server.
#
# Why: the registry replaces a person's list of who has which partition. A server that could
# not reach it must stop before its lease can have ended at the registry (and resume after),
# and the server that gets a partition whose lease expired must make no ID at or before the
# last time its previous holder could have used. Leases of 3 s, renewed every second.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $registry = sno_node('registry');
$registry->safe_psql('postgres', q{
	CREATE ROLE servers LOGIN;
	GRANT EXECUTE ON FUNCTION
	    sno_lease_claim(uuid, bytea, integer, bigint, bigint, bigint, integer, integer, integer),
	    sno_lease_renew(integer, uuid, bigint, bigint, bigint, bigint, integer, integer, integer),
	    sno_lease_release(integer, uuid, bytea) TO servers;
	CREATE DATABASE without_sno;});
my $conninfo = sub {
	my ($dbname, $extra) = @_;
	return join ' ', 'host=' . $registry->host, 'port=' . $registry->port,
	  "dbname=$dbname user=servers connect_timeout=2", $extra // ();
};

sub leased_server
{
	my ($name, $dbname, $extra) = @_;
	return sno_node(
		$name,
		ids      => 1,
		settings => {
			'sno.partition_source'   => 'registry',
			'sno.partition_registry' => $conninfo->($dbname // 'postgres', $extra),
			'sno.partition_lease'    => '3s',
		});
}

sub lease_of
{
	my ($node, $column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM sno_partition_lease()");
}

sub wait_for_lease
{
	my ($node) = @_;
	return $node->poll_query_until('postgres', 'SELECT holding FROM sno_partition_lease()');
}

# What sno_generate says now: 'ok', or its error's SQLSTATE and message.
sub try_generate
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT sno_generate(1);\n\\echo :LAST_ERROR_SQLSTATE", on_error_stop => 0);
	my ($state) = $out =~ /(\w{5})\s*$/;
	return $state eq '00000' ? 'ok' : "$state " . ($err =~ s/\s+$//r);
}

# Waits until the server makes IDs: after a registry restart, a partition not renewed since
# stays after the registry's epoch floor (twice the lease and 5 s later).
sub wait_for_ids
{
	my ($node) = @_;
	return $node->poll_query_until('postgres', 'SELECT sno_generate(1) IS NOT NULL');
}

# Waits until the server's lease is in force now (renewed after the registry came back).
sub wait_for_valid_lease
{
	my ($node) = @_;
	return $node->poll_query_until('postgres',
		'SELECT holding AND valid_until > now() FROM sno_partition_lease()');
}

# 1. Three servers start together and each gets a partition of its own; the IDs carry it.
my @servers = map { leased_server($_) } qw(first second third);
ok(wait_for_lease($_), $_->name . ' holds a lease') for @servers;
my @partitions = map { lease_of($_, '"partition"') } @servers;
is(join(',', sort @partitions), '0,1,2', 'the three hold partitions 0, 1 and 2');
for my $server (@servers)
{
	ok(generate_into($server, 'start', 1000), $server->name . ' makes IDs');
	is( $server->safe_psql('postgres', 'SELECT DISTINCT sno_partition(id) FROM ids'),
		lease_of($server, '"partition"'),
		$server->name . "'s IDs carry its leased partition");
	is( $server->safe_psql('postgres',
			q{SELECT "partition" FROM sno_partitions() WHERE generator = 'sno_generate'}),
		lease_of($server, '"partition"'),
		'sno_partitions() shows it');
}
my ($first, $second, $third) = @servers;
is($registry->safe_psql('postgres',
	'SELECT count(*) FROM sno_partition_leases WHERE expires_at > now()'), 3,
	'the registry shows the three live leases');

# 2. A restart keeps the partition.
my $first_partition = lease_of($first, '"partition"');
$first->restart;
ok(wait_for_lease($first), 'after a restart, the first holds a lease again');
is(lease_of($first, '"partition"'), $first_partition, 'the same partition');

# 2b. The first's clock steps forward 3 s, then back 6 s. Forward, its IDs pass its lease's
# cap (set by the clock before the step): the first caller wakes the lease holder, which renews
# at once by the new clock, and the caller goes on (without that, sno_generate would refuse until
# the next renewal on schedule); back, it goes on in the other tick-tock timeline. Every ID stays
# within what the registry recorded for the partition. A clock 30 s ahead of the registry's is
# more than a 3 s lease allows (the lease and 5 s): the registry refuses to renew, the lease
# runs out, and generation stops until the clock is right again.
set_clock_offset_ms($first, 3_000);
is(try_generate($first), 'ok', 'after a step forward past the lease, sno_generate goes on');
is( $first->safe_psql('postgres',
		q{SELECT valid_until > now() + interval '4 seconds' FROM sno_partition_lease()}),
	't', 'the first renewed by its new clock');
ok(generate_into($first, 'stepped forward', 1000), 'and makes IDs');
set_clock_offset_ms($first, -3_000);
ok(generate_into($first, 'stepped back', 1000), 'after a step back it makes IDs');
is(ticks_of($first, "phase = 'stepped back'"), '1', 'in the other tick-tock timeline');
set_clock_offset_ms($first, 30_000);
ok($first->poll_query_until('postgres',
		q{SELECT problem LIKE '%clock is 30 s ahead of the registry''s%'
		  FROM sno_partition_lease()}),
	"30 s ahead, the registry refuses to renew, saying the clock is ahead of its own");
like(try_generate($first), qr/^F0000/, 'and once the lease runs out, sno_generate refuses');
set_clock_offset_ms($first, 0);
ok(wait_for_ids($first), 'with the clock right again, the first makes IDs');
my $first_max = $first->safe_psql('postgres', 'SELECT max(sno_time(id)) FROM ids');
is( $registry->safe_psql('postgres',
		"SELECT used_through >= '$first_max' FROM sno_partition_leases WHERE \"partition\" = "
		  . lease_of($first, '"partition"')),
	't', "the registry's used_through covers every ID of the first");

# 3. The registry goes down: the second stops generating before its lease can have ended at
# the registry, and the last ID it made is within what the registry recorded for it; once the
# registry is back it renews and goes on.
$registry->stop('fast');
my $stopped_at = time;
ok($second->poll_query_until('postgres', q{SELECT NOT holding FROM sno_partition_lease()}),
	'the lease runs out on the second while the registry is down (holding says so)');
like(try_generate($second), qr/F0000/, 'then sno_generate refuses with F0000');
cmp_ok(time - $stopped_at, '<=', 4, 'within the lease (3 s) of the registry going down');
like(lease_of($second, 'problem'), qr/could not connect/, 'sno_partition_lease() says why');
my $second_last = $second->safe_psql('postgres',
	q{SELECT max(sno_time(id)) <= (SELECT valid_until FROM sno_partition_lease()) FROM ids});
is($second_last, 't', "the second's IDs end within its lease");
$registry->start;
# Its lease ran out meanwhile. The registry began a new epoch at its restart, and the row it has
# is of the last one and had ended: it cannot know that nobody else had the partition since (in
# a history it could have lost), so the renewal makes the second stay after the epoch's floor
# (twice the lease and 5 s after the restart).
ok(wait_for_valid_lease($second), 'with the registry back, the second renews');
ok(wait_for_ids($second), 'and makes IDs again, once past the epoch floor');
my $second_max = $second->safe_psql('postgres', 'SELECT max(sno_time(id)) FROM ids');
is( $registry->safe_psql('postgres',
		"SELECT used_through >= '$second_max' FROM sno_partition_leases WHERE \"partition\" = "
		  . lease_of($second, '"partition"')),
	't', "the registry's used_through for the second's partition covers its IDs");

# 3b. The registry hangs (its postmaster stopped by SIGSTOP: connections are accepted by the
# kernel and never answered). Each renewal gives up at its deadline, the lease runs out on this
# side as before, the server answers meanwhile, and once the registry goes on, so does the lease.
kill 'STOP', $registry->{_pid};
my $hung_at = time;
ok($second->poll_query_until('postgres',
		q{SELECT NOT holding OR valid_until < now() FROM sno_partition_lease()}),
	'the lease runs out on the second while the registry hangs');
like(try_generate($second), qr/^F0000/, 'then sno_generate refuses with F0000');
cmp_ok(time - $hung_at, '<=', 4, 'within the lease of the registry hanging');
like(lease_of($second, 'problem'), qr/no answer within the time allowed/,
	'sno_partition_lease() says the registry did not answer in time');
kill 'CONT', $registry->{_pid};
ok(wait_for_valid_lease($second), 'once the registry goes on, the second renews');
ok(wait_for_ids($second), 'and makes IDs again');

# 4. The third dies (no clean shutdown) and its lease expires. With every other partition held,
# the next server gets the third's partition, after the last time the third could have used:
# the third's clock runs 2 s ahead, so the fourth's first IDs wait for its clock to get there.
ok(wait_for_valid_lease($third), 'the third renewed too');
set_clock_offset_ms($third, 2000);
ok($third->poll_query_until('postgres',
		q{SELECT valid_until > now() + interval '3 seconds' FROM sno_partition_lease()}),
	'the third renews by its clock, 2 s ahead');
# (On a loaded machine the third's lease may have run out while the registry was down in 3: its
# renewal then made it stay after the epoch's floor, as the second's did. Once it generates:)
ok(wait_for_ids($third), 'the third generates');
ok(generate_into($third, 'before death', 1000), 'the third makes IDs until it dies');
my $third_partition = lease_of($third, '"partition"');
my $third_last = $third->safe_psql('postgres', 'SELECT max(id) FROM ids');
$third->stop('immediate');
$registry->safe_psql('postgres', q{
	INSERT INTO sno_partition_leases
	SELECT p, gen_random_uuid(), 9000 + p, 1, NULL, 5432, '1 hour', now(), now(), now() + '1 hour',
	       now(), NULL, (SELECT epoch FROM sno_registry_epoch), NULL
	FROM generate_series(3, 65535) AS p});
ok($registry->poll_query_until('postgres',
		"SELECT expires_at < now() FROM sno_partition_leases WHERE \"partition\" = $third_partition"),
	"the third's lease expires");
my $fourth = leased_server('fourth');
ok(wait_for_lease($fourth), 'a fourth server holds a lease');
is(lease_of($fourth, '"partition"'), $third_partition, "the third's partition");
isnt(lease_of($fourth, 'start_after'), '', 'with the time to stay after');
ok(generate_into($fourth, 'after', 1000), 'the fourth makes IDs');
is( $fourth->safe_psql('postgres',
		"SELECT count(*) FROM ids WHERE id <= '$third_last'::sno OR sno_time(id) <= "
		  . '(SELECT start_after FROM sno_partition_lease())'),
	0, "every one of its IDs is later than the third's last and than start_after");

$registry->safe_psql('postgres',
	'DELETE FROM sno_partition_leases WHERE system_identifier BETWEEN 9003 AND 9000 + 65535');

# 5. A registry that is down at start, or a connection string that names a database without
# sno, or with a sno without the registry (0.1.0): the server is up, sno_generate refuses naming
# the problem; fixed, the server claims by itself. A connection string that gives a password is
# refused (PostgreSQL logs a reloaded setting's value), without the password in any message.
$registry->stop('fast');
my $fifth = leased_server('fifth', 'without_sno');
like(try_generate($fifth), qr/F0000.*no partition lease/s,
	'with the registry down at start, sno_generate refuses');
$registry->start;
ok($fifth->poll_query_until('postgres',
		q{SELECT problem LIKE '%no sno extension%' FROM sno_partition_lease()}),
	'a registry database without sno is named as such');
$registry->safe_psql('postgres', 'CREATE DATABASE old_sno');
$registry->safe_psql('old_sno', q{CREATE EXTENSION sno VERSION '0.1.0'});
$fifth->safe_psql('postgres',
	"ALTER SYSTEM SET sno.partition_registry = '" . $conninfo->('old_sno') . "'");
$fifth->reload;
ok($fifth->poll_query_until('postgres',
		q{SELECT problem LIKE '%has sno 0.1.0, without the partition registry%'
		  FROM sno_partition_lease()}),
	'a registry whose sno has no registry is named as such');
my ($ret, $out, $err) = $fifth->psql('postgres',
	"ALTER SYSTEM SET sno.partition_registry = '"
	  . $conninfo->('postgres', 'password=NotToBeSeen') . "'");
like($err, qr/sno.partition_registry must not give a password/,
	'a connection string with a password is refused');
unlike($err, qr/NotToBeSeen/, 'without the password in the error');
($ret, $out, $err) = $fifth->psql('postgres',
	"ALTER SYSTEM SET sno.partition_registry = 'postgresql://servers:NotToBeSeen\@localhost/postgres'");
like($err, qr/must not give a password/, 'and so is a URI with one');
$fifth->safe_psql('postgres',
	"ALTER SYSTEM SET sno.partition_registry = '" . $conninfo->('postgres') . "'");
$fifth->reload;
ok(wait_for_lease($fifth), 'with the connection string fixed, it claims');
ok(wait_for_ids($fifth), 'and makes IDs once past the epoch floor of the registry\'s restart');
like($registry->safe_psql('postgres', 'SELECT epoch || \' \' || reason FROM sno_registry_epoch'),
	qr/^\d+ the registry's server started/,
	'the registry began a new epoch at its restart, and says why');
($ret, $out, $err) = $fifth->psql('postgres',
	'CREATE ROLE someone; SET ROLE someone; SHOW sno.partition_registry');
like($err, qr/permission denied|must be superuser|privileges/, 'other roles cannot read it');
is( $fifth->safe_psql('postgres',
		'SET ROLE someone; SELECT problem IS NULL OR problem LIKE \'(hidden%\' FROM sno_partition_lease()'),
	't', "nor the registry's host and user in sno_partition_lease().problem");
($ret, $out, $err) = $fifth->psql('postgres',
	"ALTER SYSTEM SET sno.partition_registry = '" . $conninfo->('postgres', 'sslpassword=NotToBeSeen') . "'");
like($err, qr/must not give a password/, 'a connection string with an sslpassword is refused too');

# A server whose configuration file gives a password starts with the setting refused and says
# so, without the password.
my $sixth = leased_server('sixth', 'postgres', 'password=NotToBeSeen');
ok($sixth->poll_query_until('postgres',
		q{SELECT problem LIKE '%sno.partition_registry is not set%' FROM sno_partition_lease()}),
	'a password in the file leaves the setting unset');
like(slurp_file($sixth->logfile), qr/must not give a password/, 'the log says why');
unlike(slurp_file($sixth->logfile), qr/NotToBeSeen/, 'without the password');

# 6. A promoted standby asks the registry for its primary's partition, which the primary's WAL
# brings (its base backup was taken before the primary made any ID). The primary is up and its
# lease is live: the standby gets another partition at once, and the primary keeps its own. A
# failover costs no wait, and the two never share a partition.
my $primary = sno_node(
	'primary',
	ids       => 1,
	streaming => 1,
	settings  => {
		'sno.partition_source'   => 'registry',
		'sno.partition_registry' => $conninfo->('postgres'),
		'sno.partition_lease'    => '3s',
	});
ok(wait_for_lease($primary), 'a primary holds a lease');
my $primary_partition = lease_of($primary, '"partition"');
$primary->backup('before_ids');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'before_ids', has_streaming => 1);
$standby->start;
ok(generate_into($primary, 'primary', 1000), 'the primary makes IDs');
$primary->wait_for_catchup($standby);
$standby->promote;
ok(wait_for_lease($standby), 'the promoted standby holds a lease');
isnt(lease_of($standby, '"partition"'), $primary_partition, "not its primary's live one");
ok(wait_for_ids($standby), 'and makes IDs');
ok(generate_into($standby, 'promoted', 1000), 'many');
ok(generate_into($primary, 'primary after', 1000), 'the old primary goes on making IDs');
is(lease_of($primary, '"partition"') . ' ' . lease_of($primary, 'failures'),
	"$primary_partition 0", 'with its partition, no renewal refused');
my %seen;
# (Each split in parentheses: a second split unparenthesized would be the first one's limit,
# and the standby's IDs would never be counted.)
$seen{$_}++ for (split(/\n/, $primary->safe_psql('postgres', 'SELECT id FROM ids')),
	split(/\n/, $standby->safe_psql('postgres', "SELECT id FROM ids WHERE phase = 'promoted'")));
cmp_ok(scalar(keys %seen), '>=', 2000, 'the IDs of both are counted');
is(scalar(grep { $seen{$_} > 1 } keys %seen), 0, 'no ID of one is an ID of the other');

# 7. pg_terminate_backend on the lease holder: it is back within a second and keeps the lease,
# and IDs go on meanwhile. A shutdown gives the lease back: the registry shows it ended at once,
# not when it would have expired. Started again, the server takes its partition back.
my $holder_pid = $first->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'sno partition lease holder'});
$first->safe_psql('postgres', "SELECT pg_terminate_backend($holder_pid, 10000)");
is(try_generate($first), 'ok', 'with its lease holder terminated, the first makes IDs');
my $lease_live = "SELECT expires_at > now() FROM sno_partition_leases WHERE \"partition\" = "
  . lease_of($first, '"partition"');
is($registry->safe_psql('postgres', $lease_live), 't', 'and its lease is still live');
ok($first->poll_query_until('postgres',
		qq{SELECT pid <> $holder_pid FROM pg_stat_activity
		   WHERE backend_type = 'sno partition lease holder'}),
	'the lease holder is back');
my $first_partition_now = lease_of($first, '"partition"');
my $log_before_stop = -s $first->logfile;
$first->stop('fast');
unlike(substr(slurp_file($first->logfile), $log_before_stop),
	qr/background worker "sno[^"]*" \(PID \d+\) exited with exit code 1/,
	'a clean stop logs no sno worker ending with exit code 1');
is($registry->safe_psql('postgres', $lease_live), 'f',
	'a shutdown gives the lease back at once');
like(slurp_file($first->logfile), qr/gave partition $first_partition_now back to the registry/,
	'and the log says so');
$first->start;
ok(wait_for_lease($first), 'started again, the first holds a lease');
unlike(substr(slurp_file($first->logfile), $log_before_stop), qr/WARNING/,
	'and its start logged no WARNING before its claim');
is(lease_of($first, '"partition"'), $first_partition_now, 'its partition');

# A shutdown while the registry hangs waits for it no longer than a request's deadline (a third
# of the lease), and the lease expires instead.
kill 'STOP', $registry->{_pid};
my $stopping_at = time;
$first->stop('fast');
cmp_ok(time - $stopping_at, '<=', 4, 'a shutdown is not held up by a hung registry');
like(slurp_file($first->logfile),
	qr/could not give partition $first_partition_now back \(no answer within the time allowed\)/,
	'the log says the lease expires instead');
kill 'CONT', $registry->{_pid};

$_->stop for $second, $fourth, $fifth, $sixth, $primary, $standby, $registry;
done_testing();
