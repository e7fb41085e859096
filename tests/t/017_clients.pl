# sno through the drivers applications use: Python's psycopg 3 and asyncpg, Go's pgx v4 and
# lib/pq, Java's pgJDBC, and the Rust crate's own postgres-types and sqlx impls.
#
# Why: an ID must go through each driver and back unchanged, from the drivers' plain defaults
# to the smallest registration. The programs (tests/clients) print PASS/FAIL per check and
# "N passed, M failed"; each of their checks becomes one TAP test here. tests/tap.sh builds
# them (tests/build_clients.sh) into SNO_CLIENTS_DIR.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $clients = $ENV{SNO_CLIENTS_DIR};
die 'SNO_CLIENTS_DIR is not set: run this test through tests/tap.sh, which builds the programs'
  unless defined $clients && -d $clients;

# pgJDBC connects over TCP only.
my $node = sno_node('clients',
	settings => { 'sno.partition' => 31, listen_addresses => 'localhost' });

my $jdbc_jar = '/usr/share/java/postgresql.jar';
my @programs = (
	[ 'Python', '/usr/bin/python3', "$clients/python_drivers.py" ],
	[ 'Go',   "$clients/sno_drivers" ],
	[ 'Java', 'java', '-cp', "$clients/java:$jdbc_jar", 'SnoJdbc' ],
	[ 'Rust', "$clients/sno-client-tests" ]);

for my $program (@programs)
{
	run_client_program($node, @$program);
}

done_testing();
