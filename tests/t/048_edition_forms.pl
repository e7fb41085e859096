# The SQL edition installed its three ways, each by a role that is not a superuser, as on a
# managed service (docs/managed.md): the plain SQL file (what a migration tool runs), pg_tle
# (pgtle.install_extension by a pgtle_admin, then CREATE EXTENSION, as on Amazon RDS, Aurora
# and Supabase), and an ordinary trusted extension from files (scripts/extension-files.sh puts
# them beside sno's). In each: the same bytes and text as the spec's vectors, generation after
# configuration, pg_dump and pg_restore keeping the configuration (the restored copy refuses
# until configured, then repeats none of the original's IDs), and an upgrade to a later
# version in the form's own way that keeps the configuration and the generator going (the
# upgrade files scripts/edition-scripts.sh --next writes: one that bumps the version only).
#
# Needs pg_tle built into this major (scripts/build-pg_tle.sh; scripts/test.sh builds it), the
# edition's files that tests/tap.sh writes (SNO_EDITION_DIR), and the extension files of a
# test build installed (scripts/install.sh MAJOR --test).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use SnoTest;

my $edition = dirname(edition_file('sno_sql.sql'));
my ($version) = slurp_file("$edition/sno_sql.control") =~ /default_version = '([^']+)'/;

my $node = PostgreSQL::Test::Cluster->new('edition_forms');
my $has_pg_tle = -f $node->config_data('--pkglibdir') . '/pg_tle.so';
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_tle'") if $has_pg_tle;
$node->start;
$node->safe_psql('postgres', 'CREATE ROLE app_owner LOGIN');

my %made;    # every ID made in any database: text => database
sub made_anew
{
	my ($dbname, $count) = @_;
	my @ids = split /\n/, $node->safe_psql($dbname,
		"COPY (SELECT sno_sql.to_text(sno_sql.generate(1)) FROM generate_series(1, $count)) TO STDOUT",
		connstr => $node->connstr($dbname) . ' user=app_owner');
	my $repeats = grep { exists $made{$_} } @ids;
	$made{$_} = $dbname for @ids;
	return scalar(@ids) == $count ? $repeats : -1;
}

sub as_owner
{
	my ($dbname, $sql) = @_;
	return $node->safe_psql($dbname, $sql, connstr => $node->connstr($dbname) . ' user=app_owner');
}

# What every form must give: the spec's vectors, generation, and the version.
sub check_form
{
	my ($form, $dbname, $partition) = @_;
	is( as_owner($dbname,
			"SELECT encode(sno_sql.to_bytea(sno_sql.from_text('brpk4q72xwf2m63l')), 'hex') || ' ' || "
			  . "sno_sql.to_text(sno_sql.from_parts('2021-11-12T01:43:02.123Z', 42, 9350, 77, 1)) || ' ' || "
			  . 'sno_sql.version()'),
		"4e6f2160a0ff9a0a1033 7gcn3i5n7akae24f $version",
		"$form: the spec's vectors, and version $version");
	like(error_of($node, 'SELECT sno_sql.generate(1)', dbname => $dbname, user => 'app_owner'),
		qr/^ERROR:  55000: sno_sql has no partition in database "$dbname"/,
		"$form: refuses to generate before configuration");
	as_owner($dbname, "SELECT sno_sql.configure($partition)");
	is(made_anew($dbname, 10_000), 0, "$form: 10,000 IDs, none made before anywhere");
	return;
}

# The dump of the database, restored by a superuser into a new database: the configuration
# came with it, the copy refuses, and once configured repeats none of the original's IDs.
sub check_dump_restore
{
	my ($form, $dbname, $partition, @before_restore) = @_;
	my $dump = "$PostgreSQL::Test::Utils::tmp_check/$dbname.dump";
	$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr($dbname) ],
		"$form: pg_dump");
	$node->safe_psql('postgres', "CREATE DATABASE ${dbname}_restored OWNER app_owner");
	$node->safe_psql("${dbname}_restored", $_) for @before_restore;
	$node->command_ok([ 'pg_restore', '-d', $node->connstr("${dbname}_restored"), $dump ],
		"$form: pg_restore into another database");
	is($node->safe_psql("${dbname}_restored", 'SELECT "partition" FROM sno_sql.configuration'),
		$partition, "$form: the restored database has the configuration");
	like(error_of($node, 'SELECT sno_sql.generate(1)', dbname => "${dbname}_restored"),
		qr/^ERROR:  55000: sno_sql's partition $partition was configured in another database/,
		"$form: the restored copy refuses to generate until configured");
	$node->safe_psql("${dbname}_restored", "SELECT sno_sql.configure($partition)");
	$node->safe_psql("${dbname}_restored", 'GRANT USAGE ON SCHEMA sno_sql TO app_owner');
	is(made_anew("${dbname}_restored", 10_000), 0,
		"$form: configured (the original's partition, a new timeline), it repeats none");
	return;
}

# After an upgrade: the new version, the same partition, IDs that repeat none made before.
sub check_upgraded
{
	my ($form, $dbname) = @_;
	is(as_owner($dbname, 'SELECT sno_sql.version()'), "$version-next", "$form: upgraded");
	is(made_anew($dbname, 10_000), 0, "$form: after the upgrade, 10,000 IDs repeat none");
	return;
}

# 1. One plain SQL file, run by the database's owner (CREATE on the database).
$node->safe_psql('postgres', 'CREATE DATABASE plain OWNER app_owner');
install_edition($node, 'plain', 'plain: the file installs as the owner of the database',
	user => 'app_owner');
check_form('plain', 'plain', 21);
check_dump_restore('plain', 'plain', 21);
my $plain_upgrade = "$edition/sno_sql-upgrade--$version--$version-next.sql";
my @run_plain_upgrade = ('psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-1', '-f', $plain_upgrade,
	'-d', $node->connstr('plain') . ' user=app_owner');
$node->command_ok(\@run_plain_upgrade, 'plain: the upgrade file runs');
check_upgraded('plain', 'plain');
$node->command_fails_like(\@run_plain_upgrade,
	qr/ERROR:  this upgrades sno_sql \Q$version\E, and \Q$version-next\E is installed/,
	'plain: the upgrade file refuses to run on another version');

# 2. An ordinary extension from files, trusted: CREATE EXTENSION by the database's owner. The
# two files go into the installation's extension directory for this part only (tests/tap.sh
# lets the test's user write there): pg_tle, below, refuses a name with a control file there.
my $extension_dir = $node->config_data('--sharedir') . '/extension';
my @extension_files =
  ('sno_sql.control', "sno_sql--$version.sql", "sno_sql--$version--$version-next.sql");
END { unlink map { "$extension_dir/$_" } @extension_files if $extension_dir; }
for my $file (@extension_files)
{
	system('cp', "$edition/$file", "$extension_dir/$file") == 0
	  or die "could not copy $file into $extension_dir";
}
$node->safe_psql('postgres', 'CREATE DATABASE files OWNER app_owner');
as_owner('files', 'CREATE EXTENSION sno_sql');
is(as_owner('files', "SELECT extversion FROM pg_extension WHERE extname = 'sno_sql'"),
	$version, 'files: CREATE EXTENSION sno_sql by the owner of the database');
check_form('files', 'files', 22);
check_dump_restore('files', 'files', 22);
as_owner('files', "ALTER EXTENSION sno_sql UPDATE TO '$version-next'");
check_upgraded('files', 'files');
as_owner('files', 'DROP EXTENSION sno_sql');
is(as_owner('files', "SELECT count(*) FROM pg_namespace WHERE nspname = 'sno_sql'"), '0',
	'files: DROP EXTENSION leaves nothing');
unlink map { "$extension_dir/$_" } @extension_files;

# 3. pg_tle: installed by a pgtle_admin, created by the owner of the database.
SKIP:
{
	skip 'pg_tle is not built into this major (scripts/build-pg_tle.sh)', 1 unless $has_pg_tle;
	$node->safe_psql('postgres', 'CREATE DATABASE tle OWNER app_owner');
	$node->safe_psql('tle', 'CREATE EXTENSION pg_tle');
	$node->safe_psql('postgres', 'GRANT pgtle_admin TO app_owner');
	$node->command_ok(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$edition/sno_sql--pg_tle.sql",
			'-d', $node->connstr('tle') . ' user=app_owner'
		],
		'pg_tle: pgtle.install_extension by a pgtle_admin');
	as_owner('tle', 'CREATE EXTENSION sno_sql');
	is(as_owner('tle', "SELECT extversion FROM pg_extension WHERE extname = 'sno_sql'"),
		$version, 'pg_tle: CREATE EXTENSION sno_sql');
	check_form('pg_tle', 'tle', 23);
	# pg_tle's own schema comes with the dump as well: restored over CREATE EXTENSION pg_tle,
	# its CREATE SCHEMA pgtle fails and pg_restore goes on (counted in its exit status).
	check_dump_restore('pg_tle', 'tle', 23);

	$node->command_ok(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f',
			"$edition/sno_sql--$version--$version-next--pg_tle.sql",
			'-d', $node->connstr('tle') . ' user=app_owner'
		],
		'pg_tle: pgtle.install_update_path');
	as_owner('tle', "ALTER EXTENSION sno_sql UPDATE TO '$version-next'");
	check_upgraded('pg_tle', 'tle');
}

note(scalar(keys %made) . ' distinct IDs compared');
done_testing();
