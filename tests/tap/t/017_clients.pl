# sno through the drivers applications use: Python's psycopg 3 and asyncpg, Go's pgx v4 and
# lib/pq, Java's pgJDBC, and the Rust crate's own postgres-types and sqlx impls.
#
# Why: an ID must go through each driver and back unchanged, from the drivers' plain defaults
# to the smallest registration. The programs (tests/clients) print PASS/FAIL per check and
# "N passed, M failed"; each of their checks becomes one TAP test here. tests/tap/run.sh builds
# them (tests/tap/build_clients.sh) into SNO_CLIENTS_DIR.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $clients = $ENV{SNO_CLIENTS_DIR};
die 'SNO_CLIENTS_DIR is not set: run this test through tests/tap/run.sh, which builds the programs'
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
	my ($language, @command) = @$program;
	my $output = '';
	my $succeeded = do
	{
		local $ENV{PGHOST} = $node->host;
		local $ENV{PGPORT} = $node->port;
		local $ENV{PGUSER} = scalar getpwuid($<);
		IPC::Run::run(\@command, '>', \$output, '2>&1');
	};

	# Each PASS/FAIL line is a test; a FAIL's indented lines (expected, got) are its diagnostics.
	my ($passes, $summary, @other) = (0, undef);
	my @lines = split /\n/, $output;
	while (defined(my $line = shift @lines))
	{
		if ($line =~ /^PASS: (.*)/)
		{
			pass("$language: $1");
			$passes++;
		}
		elsif ($line =~ /^FAIL: (.*)/)
		{
			my $name = $1;
			my @details;
			push @details, shift @lines while @lines && $lines[0] =~ /^\s/;
			fail("$language: $name");
			diag(join("\n", @details)) if @details;
		}
		elsif ($line =~ /^(\d+) passed, (\d+) failed$/)
		{
			$summary = "$1:$2";
		}
		else
		{
			push @other, $line;
		}
	}
	# Whatever else it printed (a traceback, say) explains a failed exit.
	ok($succeeded, "$language: the program exits with success") or diag(join("\n", @other));
	note(join("\n", @other)) if $succeeded && @other;
	cmp_ok($passes, '>', 0, "$language: it ran checks");
	is($summary, "$passes:0", "$language: its summary counts every check, none failed");
}

done_testing();
