# pg_upgrade from an older major to this one (issue 13, item 4): the rows of sno tables come
# through identical, every btree index passes amcheck, and the new cluster's generator repeats
# no ID the old cluster made, though its clock is set back into the time the old cluster made
# them: the generator state is carried across by sno itself (src/pg/recovery/pg_upgrade_carry.rs), without the
# operator copying sno_generator.state.
#
# Forgeries (issue 22, item 2): a role with CREATEDB writes the text of a generator state in
# 2079 into pg_upgrade's server log through its databases' settings (local_preload_libraries,
# whose FATAL fails a first pg_upgrade run, kept with its log; default_tablespace, whose WARNING
# goes into the run that succeeds), and the whole text with forged pg_upgrade start lines is
# appended to the failed run's log, as a WARNING echoing a longer value would put it. The new
# cluster takes none of it: it carries the old data directory's own file and generates at once.
# (035_pg_upgrade_carry_inputs.pl puts the whole text into the log of the run that starts the
# new server, after pg_upgrade's line, which a real run cannot be made to do at will.)
#
# Debian's layout (issue 34): into 16 and 17, pg_upgrade is given the old cluster as Debian's
# pg_upgradecluster gives it, by its configuration directory, whose postgresql.conf names the
# data directory; sno follows it there as pg_upgrade does. Into the other majors, by its data
# directory.
#
# A check first (issue 34): `pg_upgrade --check` carries nothing into the new cluster (it changes
# nothing) and says so; the upgrade after it carries, and logs it in its own run's log.
#
# The old major's installation (with a test build of sno) is SNO_UPGRADE_FROM, e.g.
# /usr/lib/postgresql/15; the new one is the PostgreSQL this suite runs against.
use strict;
use warnings FATAL => 'all';
use ClusterCompat;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(abs_path getcwd);

my $old_install = $ENV{SNO_UPGRADE_FROM}
  or plan skip_all => 'SNO_UPGRADE_FROM (the old major\'s installation) is not set';

my $settings = "shared_preload_libraries = 'sno'\n"
  . "sno.partition = 7\n"
  . "sno.backfill_partition = 8\n";

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init;
$old->append_conf('postgresql.conf', $settings);
$old->start;
$old->safe_psql(
	'postgres', q{
	CREATE EXTENSION sno;
	CREATE EXTENSION amcheck;
	-- A primary key, a hash and a BRIN index, a generated default and a generated column.
	CREATE TABLE orders (
		id sno PRIMARY KEY DEFAULT sno_generate(1),
		n int NOT NULL,
		made timestamptz GENERATED ALWAYS AS (sno_time(id)) STORED);
	CREATE INDEX orders_id_hash ON orders USING hash (id);
	CREATE INDEX orders_id_brin ON orders USING brin (id);
	-- Partitioned by hash on the sno column.
	CREATE TABLE events (id sno PRIMARY KEY DEFAULT sno_generate(2), n int NOT NULL)
		PARTITION BY HASH (id);
	CREATE TABLE events_0 PARTITION OF events FOR VALUES WITH (MODULUS 3, REMAINDER 0);
	CREATE TABLE events_1 PARTITION OF events FOR VALUES WITH (MODULUS 3, REMAINDER 1);
	CREATE TABLE events_2 PARTITION OF events FOR VALUES WITH (MODULUS 3, REMAINDER 2);
	-- Backfilled IDs for old rows.
	CREATE TABLE legacy (id sno PRIMARY KEY, created_at timestamptz NOT NULL);
	INSERT INTO orders (n) SELECT g FROM generate_series(1, 5000) g;
	INSERT INTO events (n) SELECT g FROM generate_series(1, 5000) g;
	INSERT INTO legacy SELECT sno_generate_at(3, t), t
		FROM generate_series(timestamptz '2020-01-01', '2020-01-01 00:00:00.999', '1 ms') t;
});

# The forged state, as sno's first carry read it from any log line.
my $forged = 'sno: generator state for pg_upgrade of data directory "x": drifts=0 version=2 '
  . 'wall_hi=549755813887 wall_safe=549755813887 zz';
$old->safe_psql(
	'postgres', qq{
	CREATE ROLE app LOGIN CREATEDB;
	SET ROLE app;
	CREATE DATABASE appdb;
	ALTER DATABASE appdb SET local_preload_libraries = '$forged';
	CREATE DATABASE appdb2;
	ALTER DATABASE appdb2 SET default_tablespace = '$forged';
});

# Every row of every table, as one digest per table.
my $contents = q{
	SELECT string_agg(format('%s %s %s', relname, rows, digest), ' ' ORDER BY relname) FROM (
		SELECT 'orders' AS relname, count(*) AS rows,
			md5(string_agg(format('%s|%s|%s', id, n, made), ',' ORDER BY id)) AS digest FROM orders
		UNION ALL
		SELECT 'events', count(*), md5(string_agg(format('%s|%s', id, n), ',' ORDER BY id)) FROM events
		UNION ALL
		SELECT 'legacy', count(*), md5(string_agg(format('%s|%s', id, created_at), ',' ORDER BY id))
			FROM legacy) t};
my $before = $old->safe_psql('postgres', $contents);
my $first_id_ms = $old->safe_psql('postgres',
	q{SELECT (extract(epoch FROM min(sno_time(id))) * 1000)::bigint FROM orders});
# This machine's PostgreSQL 15.20 (Debian bookworm-security) stamps every column with an
# attribute option, pg_attver, that the 17 and 18 built here do not know, so that pg_upgrade's
# restore of any table fails (not a sno matter). The stamp goes before the upgrade.
$old->safe_psql(
	'postgres', q{
	UPDATE pg_attribute SET attoptions = (
		SELECT array_agg(option) FROM unnest(attoptions) option WHERE option NOT LIKE 'pg_attver=%')
	WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg_attver=%'});
$old->stop;
my $old_state = slurp_file($old->data_dir . '/sno_generator.state');
like($old_state, qr/^wall_hi=\d+$/m, 'the old cluster recorded its generator state');

my $new = PostgreSQL::Test::Cluster->new('new');
# pg_upgrade needs both clusters alike in data checksums, which initdb turns on from 18: the
# new cluster goes without them only where the old one, older than 18, has none (from 18 into
# 19, both have them).
$new->init(
	$old->pg_version < 18 && $new->pg_version >= 18
	? (extra => ['--no-data-checksums'])
	: ());
$new->append_conf('postgresql.conf', $settings);

# pg_upgrade writes files into the current directory; the servers see absolute paths.
my ($old_data, $new_data) = (abs_path($old->data_dir), abs_path($new->data_dir));
my $old_dir = $old_data;
if ($new->pg_version >= 16 && $new->pg_version < 18)
{
	$old_dir = abs_path($old->basedir) . '/etc postgresql main';
	mkdir $old_dir or die "mkdir $old_dir: $!";
	append_to_file("$old_dir/postgresql.conf",
		    "data_directory = '$old_data'\n"
		  . "hba_file = '$old_data/pg_hba.conf'\n"
		  . "ident_file = '$old_data/pg_ident.conf'\n"
		  . "include '$old_data/postgresql.conf'\n");
	note "the old cluster given by its configuration directory, $old_dir";
}
my $cwd = getcwd();
chdir ${PostgreSQL::Test::Utils::tmp_check};
my @pg_upgrade = (
	'pg_upgrade', '--no-sync', '--retain',
	'-d', $old_dir, '-D', $new_data,
	'-b', $old->config_data('--bindir'), '-B', $new->config_data('--bindir'),
	'-s', $new->host, '-p', $old->port, '-P', $new->port);
command_fails(\@pg_upgrade, 'a first pg_upgrade fails: appdb refuses every connection');
my ($failed_run_log) = glob("$new_data/pg_upgrade_output.d/*/log/pg_upgrade_server.log");
like(slurp_file($failed_run_log), qr/\Q$forged\E/,
	'... and its kept log holds the forged state, whole, through appdb\'s settings');
append_to_file($failed_run_log,
	    "2026-11-24 09:00:01.000 UTC [42] WARNING:  $forged\n"
	  . qq{command: "/b/pg_ctl" -w -l "/l" -D "$old_data" -o "" start >> "/l" 2>&1\n}
	  . qq{command: "/b/pg_ctl" -w -l "/l" -D "/tmp" -o "" start >> "/l" 2>&1\n});
$old->start;
$old->safe_psql('postgres', 'ALTER DATABASE appdb RESET local_preload_libraries');
$old->stop;
$old_state = slurp_file($old->data_dir . '/sno_generator.state');
# A check first, as DBAs run it: it changes nothing in the new cluster and says that the upgrade
# carries, and the upgrade then carries and says so in its own log.
# The server logs of the pg_upgrade runs made since @before (the runs' directories then).
sub server_logs_since
{
	my %before = map { $_ => 1 } @_;
	return join '', map { slurp_file("$_/log/pg_upgrade_server.log") }
	  grep { !$before{$_} } glob("$new_data/pg_upgrade_output.d/*");
}
my @runs_before = glob("$new_data/pg_upgrade_output.d/*");
command_ok([ @pg_upgrade, '--check' ], 'pg_upgrade --check passes');
my $check_log = server_logs_since(@runs_before);
unlike($check_log, qr/now covers/, '... carries no generator state into the new cluster');
like($check_log,
	qr/LOG:  sno: pg_upgrade --check: the old cluster's generator state is carried by the upgrade itself, not by the check/,
	'... and says that the upgrade carries it');
@runs_before = glob("$new_data/pg_upgrade_output.d/*");
command_ok(\@pg_upgrade, 'pg_upgrade from ' . $old->pg_version . ' to ' . $new->pg_version);
chdir $cwd;

# The upgrade's own run, not the failed one's or the check's.
my $server_log = server_logs_since(@runs_before);
like($server_log, qr/WARNING:  invalid value for parameter "default_tablespace": "sno: generator state/,
	'the successful run\'s log holds forged text too, through appdb2\'s default_tablespace');
like(
	$server_log,
	qr/sno: pg_upgrade: sno_generator\.state now covers the IDs of "\Q$old_data\E"/,
	'the new server says it took in the old cluster\'s generator state');
my ($old_wall_hi) = $old_state =~ /^wall_hi=(\d+)$/m;
like(slurp_file("$new_data/sno_generator.state"),
	qr/^wall_hi=$old_wall_hi$/m, 'the new state file reaches as far as the old one');

$new->start;
my ($generated, $stdout, $stderr) =
  $new->psql('postgres', "SET statement_timeout = '5s'; SELECT sno_generate(1)");
is($generated, 0, 'the new cluster generates at once') or diag($stderr);

is($new->safe_psql('postgres', $contents), $before, 'every row came through identical');
is( $new->safe_psql(
		'postgres', q{
		SELECT count(bt_index_check(c.oid, true)) FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE a.amname = 'btree' AND c.relkind = 'i' AND c.relnamespace = 'public'::regnamespace
		  -- the test's tables, not the extension's own (sno_partition_leases)
		  AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
		                  AND d.objid = i.indrelid AND d.deptype = 'e')}),
	'5',
	'amcheck (heapallindexed) passes on all 5 btree indexes of sno columns');

# The session's generator clock goes back to the old cluster's first ID (the test build's
# sno.test_clock_offset_ms), so the IDs it makes fall in units the old cluster used; then
# inserts through the generated defaults, and backfills of the same instants. A repeat would
# violate a primary key.
my $generate_again = qq{
	SET statement_timeout = '60s';
	SELECT set_config('sno.test_clock_offset_ms',
		($first_id_ms - extract(epoch FROM clock_timestamp()) * 1000)::bigint::text, false);
	INSERT INTO orders (n) SELECT g FROM generate_series(5001, 10000) g;
	INSERT INTO events (n) SELECT g FROM generate_series(5001, 10000) g;
	INSERT INTO legacy SELECT sno_generate_at(3, t), t
		FROM generate_series(timestamptz '2020-01-01', '2020-01-01 00:00:00.999', '1 ms') t;
};
my ($status, $out, $err) = $new->psql('postgres', $generate_again);
is($status, 0, 'the upgraded cluster generates without repeating an old ID') or diag($err);
isnt(
	$new->safe_psql(
		'postgres', q{
		SELECT count(*) FROM orders
		WHERE n > 5000 AND sno_time(id) <= (SELECT max(sno_time(id)) FROM orders WHERE n <= 5000)}),
	'0',
	'... although its clock was inside the time of the old IDs');
is( $new->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT sno_tick_tock(id)::text, ',') FROM orders WHERE n > 5000}),
	'1',
	'... because it made them in the other tick-tock timeline');
is($new->safe_psql('postgres', 'SELECT count(*) FROM legacy'),
	'2000', 'the backfill of the same instants continues too');

# The control: without the carried state, the same inserts repeat old IDs.
$new->stop;
unlink("$new_data/sno_generator.state") or die "unlink: $!";
$new->start;
$new->safe_psql('postgres', 'DELETE FROM orders WHERE n > 5000');
($status, $out, $err) = $new->psql('postgres', $generate_again);
like(
	$err,
	qr/duplicate key value violates unique constraint "orders_pkey"/,
	'control: without the carried state the new cluster repeats old IDs');

$new->stop;
done_testing();
