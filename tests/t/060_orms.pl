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
#
# The SQL edition (sno_sql, plain SQL form) is installed beside the extension, in the same
# database: the Python and Node.js programs also write IDs through clients/'s edition helpers
# (psycopg, node-postgres) and check that they read back as the same IDs and are native sno's
# same IDs (sno_sql.to_bytea(id)::sno), for the vectors and for sno_sql.generate's IDs.
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

# The SQL edition beside the extension, for the programs' edition checks.
install_edition($node, 'postgres', 'the SQL edition installs beside the extension');
$node->safe_psql('postgres', 'SELECT sno_sql.configure(7)');

run_client_program($node, 'Python', "$orms/venv/bin/python", "$orms/python/orm_python.py",
	$vectors);
run_client_program($node, 'Node.js', 'node', "$orms/node/orm_node.js", $vectors);
run_client_program($node, 'Diesel', "$orms/sno-diesel-tests", $vectors);

done_testing();
