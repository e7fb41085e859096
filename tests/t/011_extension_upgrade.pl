# ALTER EXTENSION sno UPDATE from every earlier version that has an install script.
#
# Why: users who installed an earlier release get the new one through ALTER EXTENSION sno
# UPDATE, which only works if the sno--A--B.sql scripts chain every released version to the
# current default_version. For each earlier version this installs it, updates, and checks that
# the result is the default version and still works. With a single release there is nothing to
# upgrade from; the test then still checks that CREATE EXTENSION and the no-op ALTER EXTENSION
# ... UPDATE succeed, so that it is ready to catch a broken chain the day a second version
# ships. Needs no test build: it also runs against the Debian package.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('upgrade', extension => 0);
my $ext_dir = $node->config_data('--sharedir') . '/extension';

my ($current) = slurp_file("$ext_dir/sno.control") =~ /^\s*default_version\s*=\s*'([^']*)'/m;
die "no default_version in $ext_dir/sno.control" unless defined $current;
my @install_versions = sort map { m{/sno--([^/]*)\.sql$} && $1 !~ /--/ ? $1 : () }
  glob("$ext_dir/sno--*.sql");
my @upgrade_steps = sort map { m{/sno--(.*)--(.*)\.sql$} ? "$1 -> $2" : () }
  glob("$ext_dir/sno--*--*.sql");
note("default_version: $current");
note('install scripts: ' . (join(', ', @install_versions) || '(none)'));
note('upgrade scripts: ' . (join(', ', @upgrade_steps) || '(none)'));
ok(-f "$ext_dir/sno--$current.sql", "the install script for the default version $current exists");

sub installed_version
{
	return $node->safe_psql($_[0], "SELECT extversion FROM pg_extension WHERE extname = 'sno'");
}

# Runs SQL, true if it succeeded (else its errors are shown).
sub runs
{
	my ($db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql);
	diag(messages($err)) if $ret != 0;
	return $ret == 0;
}

sub update_extension
{
	return runs($_[0], 'SET client_min_messages = warning; ALTER EXTENSION sno UPDATE');
}

# What an installation is made of: each member object, with a function's definition, settings
# and privileges, a table's columns and privileges, and the configuration tables, so that an
# update that misses or changes anything (a privilege included) differs from a fresh install.
my $MEMBERS = q{
SELECT string_agg(description, E'\n' ORDER BY description)
FROM (
    SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
           || coalesce(' ' || md5(p.prosrc || coalesce(array_to_string(p.proconfig, ','), '')
                                  || p.prosecdef || p.provolatile::text || p.proisstrict
                                  || p.proparallel::text || coalesce(p.proacl::text, '')), '')
           || coalesce(' ' || (SELECT string_agg(a.attname || ':' || format_type(a.atttypid,
                                                 a.atttypmod), ',' ORDER BY a.attnum)
                               FROM pg_attribute a
                               WHERE a.attrelid = c.oid AND a.attnum > 0)
                      || ' ' || coalesce(c.relacl::text, ''), '') AS description
    FROM pg_depend d
    LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
    LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sno')
    UNION ALL
    SELECT 'configuration tables: ' || coalesce(array_to_string(extconfig::regclass[], ','), '')
    FROM pg_extension WHERE extname = 'sno'
) AS members};
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION sno');
my $fresh_members = $node->safe_psql('fresh', $MEMBERS);

my @earlier = grep { $_ ne $current } @install_versions;
if (!@earlier)
{
	note("no earlier release to upgrade from (only $current is installed): the no-op update");
	$node->safe_psql('postgres', 'CREATE DATABASE current');
	ok(runs('current', 'CREATE EXTENSION sno'), 'CREATE EXTENSION sno');
	is(installed_version('current'), $current, "installed as $current");
	ok(update_extension('current'), 'ALTER EXTENSION sno UPDATE (no-op)');
	is(installed_version('current'), $current, "extversion still $current");
	is($node->safe_psql('current', "SELECT '$SAMPLE'::sno::text"), $SAMPLE,
		"'$SAMPLE'::sno::text works");
}

# One database per starting version, so that each upgrade starts from a clean install.
for my $from (@earlier)
{
	(my $db = "upgrade_from_$from") =~ s/[^a-zA-Z0-9_]/_/g;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	is( $node->safe_psql(
			$db,
			"SELECT count(*) FROM pg_extension_update_paths('sno') WHERE source = '$from' AND target = '$current' AND path IS NOT NULL"
		),
		1,
		"$from -> $current: an update path exists");
	ok(runs($db, "CREATE EXTENSION sno VERSION '$from'"), "$from: CREATE EXTENSION sno VERSION '$from'");
	is(installed_version($db), $from, "$from: installed as $from");
	ok(update_extension($db), "$from -> $current: ALTER EXTENSION sno UPDATE");
	is(installed_version($db), $current, "$from -> $current: extversion is now $current");
	is($node->safe_psql($db, "SELECT '$SAMPLE'::sno::text"),
		$SAMPLE, "$from -> $current: '$SAMPLE'::sno::text still works");
	is($node->safe_psql($db, $MEMBERS),
		$fresh_members, "$from -> $current: the same objects, definitions and settings as a fresh install");
}

done_testing();
