# sno as a model's primary key in the ORMs applications use, through the libraries of clients/:
# SQLAlchemy 2 (psycopg and asyncpg) and Django with clients/python (and its psycopg and asyncpg
# adapters), Drizzle and node-postgres with clients/node, Diesel with the crate's diesel feature.
#
# Why: an application declares models, not queries. Each program runs the same scenario: the
# server's default (sno_generate) as the key and the ID back from the insert, get by ID, a time
# window with sno_min, order, bulk insert, a foreign key, a string where an ID is expected (it
# works, or fails with a clear error, never matches wrongly), and SPEC.md's reference vectors,
# which must decode, come back and sort the same in every library as in SQL. Each program's
# checks become TAP tests (run_client_program). tests/tap.sh builds the programs
# (tests/build_orms.sh) into SNO_CLIENTS_DIR/orms, with packages from PyPI, npm and crates.io.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $orms = ($ENV{SNO_CLIENTS_DIR} // '') . '/orms';
die 'SNO_CLIENTS_DIR/orms is missing: run this test through tests/tap.sh, which builds the programs'
  unless -d $orms;

my $node = sno_node('orms', settings => { 'sno.partition' => 31 });
my $vectors = "$orms/vectors.txt";

run_client_program($node, 'Python', "$orms/venv/bin/python", "$orms/python/orm_python.py",
	$vectors);
run_client_program($node, 'Node.js', 'node', "$orms/node/orm_node.js", $vectors);
run_client_program($node, 'Diesel', "$orms/sno-diesel-tests", $vectors);

done_testing();
