# The Debian package, installed the way a user would (tests/package_deb.sh installs it as root
# and runs this with SNO_PACKAGE_INSTALLED=<package name> and SNO_EXTENSION_VERSION=<version>).
#
# Why: a DBA installs sno with apt-get, on a server without Rust. The package must put every
# file where PostgreSQL looks, own all of them and nothing else, depend on its server, carry a
# release build, and work (here: the SQL-level checks; package.sh also runs the dump and restore
# and the extension upgrade tests against it).
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $package = $ENV{SNO_PACKAGE_INSTALLED};
plan skip_all => 'SNO_PACKAGE_INSTALLED is not set (tests/package_deb.sh sets it)'
  unless $package;
my $version = $ENV{SNO_EXTENSION_VERSION} or die 'SNO_EXTENSION_VERSION is not set';

my $node = sno_node('package', extension => 0,
	settings => { 'sno.partition' => 77, 'sno.backfill_partition' => 78 });
my $libdir = $node->config_data('--pkglibdir');
my $ext_dir = $node->config_data('--sharedir') . '/extension';
my ($major) = $node->config_data('--version') =~ /^PostgreSQL (\d+)/;
my $doc_dir = "/usr/share/doc/$package";

my ($listed) = run_command([ 'dpkg', '-L', $package ]);
my @owned = sort grep { !-d $_ } split /\n/, $listed;
# The install scripts of this and earlier versions and the upgrade scripts; the docs pages.
my @scripts = grep { m{^\Q$ext_dir\E/sno--[0-9.]+(--[0-9.]+)?\.sql$} } @owned;
my @pages = grep { m{^\Q$doc_dir\E/docs/[a-z_-]+\.md\.gz$} } @owned;
ok((grep { $_ eq "$ext_dir/sno--$version.sql" } @scripts), "it has the install script of $version");
ok(@pages >= 5, 'it has the docs pages (' . scalar(@pages) . ')');
my %listed = map { $_ => 1 } @scripts, @pages;
is( join("\n", grep { !$listed{$_} } @owned),
	join("\n",
		sort "$doc_dir/README.md.gz", "$doc_dir/changelog.gz", "$doc_dir/copyright",
		"$libdir/sno.so", "$ext_dir/sno.control"),
	'the package owns the library, control, SQL and docs, and nothing else');
my ($description) = run_command([ 'dpkg-query', '-s', $package ]);
like($description, qr/^Depends: postgresql-$major,/m, "it depends on the matching server package (postgresql-$major)");
my $library = slurp_file("$libdir/sno.so");
ok(length($library) > 0 && index($library, 'test_clock_offset_ms') < 0,
	'the library is a release build (no test clock)');

sub query
{
	return $node->safe_psql('postgres', $_[0]);
}

my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION sno');
is($ret . messages($err), '0', 'CREATE EXTENSION sno');
is(query("SELECT 'BRPK4Q72XWF2M63L'::sno::text"), $SAMPLE, 'text in and out, upper case in');
is(query(q{SELECT '\x4e6f2160a0ff9a0a1033'::sno::text}), $SAMPLE, 'the bytea hex form in');
is( query(
		qq{SELECT format('%s %s %s %s', sno_time(i) AT TIME ZONE 'UTC', sno_meta(i), sno_partition(i),
		                 sno_sequence(i))
		   FROM (SELECT '$SAMPLE'::sno AS i) AS s}),
	'2031-05-08 23:03:34.976 255 39434 4147',
	'decoding');
($ret, $out, $err) = $node->psql(
	'postgres', q{
	CREATE TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(3), v int);
	INSERT INTO t (v) SELECT g FROM generate_series(1, 100000) AS g});
is($ret . messages($err), '0', 'a table with a generated key, 100,000 rows');
is( query(
		q{
		SELECT bool_and(sno_partition(id) = 77 AND sno_meta(id) = 3), count(*) FILTER (WHERE id < prev)
		FROM (SELECT id, lag(id) OVER (ORDER BY v) AS prev FROM t) AS s}),
	't|0',
	'... partition 77, meta 3, in insert order');
is(query(q{SELECT sno_partition(sno_generate_at(1, '2021-01-01'))}),
	78, 'a backfill ID in partition 78');
like(
	query(
		q{
		SET enable_seqscan = off;
		EXPLAIN SELECT id FROM t WHERE id >= sno_min(now() - interval '1 hour') AND id < sno_max(now())}
	),
	qr/Index (Only )?Scan using t_pkey|Bitmap Index Scan on t_pkey/,
	'a time range is an index range scan');
is(query('SELECT generated >= 100000 FROM sno_generator_stats()'), 't', 'stats');

done_testing();
