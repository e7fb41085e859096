# Nothing of sno is installed: before the package goes in, and after apt-get remove
# (tests/package_deb.sh runs this as root's helper, with SNO_PACKAGE_REMOVED=<package name>).
#
# Why: a removed package must leave nothing behind; and before the install, nothing that a
# build installed may be there, so that only the package can pass 090_package_installed.pl.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $package = $ENV{SNO_PACKAGE_REMOVED};
plan skip_all => 'SNO_PACKAGE_REMOVED is not set (tests/package_deb.sh sets it)' unless $package;

my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my ($libdir) = run_command([ $pg_config, '--pkglibdir' ]);
my ($share_dir) = run_command([ $pg_config, '--sharedir' ]);
my $ext_dir = "$share_dir/extension";

my @left = grep { -e $_ } "$libdir/sno.so", "/usr/share/doc/$package",
  glob("$ext_dir/sno.control $ext_dir/sno--*.sql");
is(join("\n", @left), '', 'no sno file is installed');
my ($out, $err) = ('', '');
ok(!IPC::Run::run([ 'dpkg-query', '-W', '-f=${Status}', $package ], '>', \$out, '2>', \$err),
	'dpkg does not know the package') or diag("dpkg-query says: $out");

done_testing();
