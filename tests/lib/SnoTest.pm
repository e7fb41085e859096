# Helpers shared by sno's TAP tests (tests/t), on top of PostgreSQL's own test framework
# (PostgreSQL::Test::Cluster and PostgreSQL::Test::Utils). tests/tap.sh puts this directory
# in PERL5LIB.
#
# Nodes
#   sno_node($name, %options)       a started node with sno preloaded and CREATE EXTENSION sno
#                                   done in the postgres database. Options:
#                                     settings  => { name => value }  lines for postgresql.conf
#                                     preload   => 0   no shared_preload_libraries
#                                     extension => 0   no CREATE EXTENSION
#                                     ids       => 1   also the ids table (below)
#                                     streaming => 1   a primary a standby can stream from
#                                     archiving => 1   a primary that archives its WAL
#                                     start     => 0   initialized only (no extension, no table)
#                                     install_path => DIR   another PostgreSQL installation
#   create_ids_table($node)         ids (id sno PRIMARY KEY, phase, session, n): every ID a test
#                                   makes goes in, so that a repeat anywhere fails its INSERT
#   start_with_faketime($node, $file)
#                                   start the node under libfaketime, steered through $file
#                                   (write "+0", "-300", ... into it; read every second)
#   crash_backend($node)            kill -9 one backend and wait until the postmaster has
#                                   re-created shared memory and accepts connections again;
#                                   returns the log offset from before the crash
#
# Settings (each waits until new sessions see the change)
#   set_settings($node, name => value, ...)   ALTER SYSTEM SET each pair, then one reload
#   reset_settings($node, name, ...)          ALTER SYSTEM RESET each, then one reload
#   reload_and_wait($node)                    pg_reload_conf() and wait for it
#   session_sees($session, $name, $value)
#                                   polls SHOW $name in an open background_psql session until
#                                   it is $value (a reload reaches an open backend as a signal,
#                                   handled between statements); false if it never is
#   set_clock_offset_ms($node, $ms)           sno.test_clock_offset_ms for every session (test
#                                             builds only): the generator's clock steps by $ms
#
# IDs and the generator
#   generate_into($node, $phase, $count, meta => 1, session => 1)
#                                   $count IDs of sno_generate(meta) from one new session into
#                                   ids; true if the INSERT succeeded (else its errors are shown)
#   generate_concurrently($node, $phase, $sessions, $count, meta => 1)
#                                   $sessions sessions at the same time, each making $count IDs
#                                   into ids (session 1..$sessions); returns how many sessions
#                                   failed (and shows their distinct ERROR/WARNING lines)
#   psql_start($node, $sql, application_name => ...)
#                                   starts psql running $sql in the background (postgres
#                                   database, ON_ERROR_STOP; from a file when $sql is long, each
#                                   statement its own transaction); returns a run for psql_finish
#   psql_finish($run)               waits for it; true if it succeeded (else shows its stderr)
#   sno_stat($node, $expression)    one value from sno_generator_stats()
#   out_of_order($node, $phase)     IDs of $phase not greater than the one before them in the
#                                   same session (by n)
#   ticks_of($node, $where)         the distinct tick-tock bits of the ids WHERE $where, "0,1"
#   no_repeats($node)               't' when no ID in ids repeats, else 'f'
#   first_id_seconds($node, $phase) how long a new session's first sno_generate took (seconds,
#                                   one decimal); its ID goes into ids as $phase
#   derived_partition($node)        the partition the start-up log says sno derived from the
#                                   system identifier (sno.partition not set), or undef
#
# Replication
#   logical_node($name, $partition, %options)
#                                   a started sno_node that can publish and subscribe
#                                   (wal_level = logical, workers to spare) with sno.partition
#   subscribe($subscriber, $name, $publisher, $options)
#                                   CREATE SUBSCRIPTION $name to $publisher's publication
#                                   events (postgres database) WITH ($options)
#   subscription_errors($subscriber)
#                                   the apply and sync errors of its subscriptions, summed
#                                   (pg_stat_subscription_stats, of whichever major it is)
#   start_batched_inserts($node, $writer, $rows)
#                                   psql inserting $rows rows (writer, n) into events, 1,000 per
#                                   transaction, in the background; returns a run for psql_finish
#   start_recorded_load($node, $sessions, $dir)
#                                   $sessions psql clients that generate until the server goes
#                                   away (inserts that commit, inserts rolled back, plain
#                                   SELECTs of sno_generate), each writing every ID it was
#                                   given into a file in $dir; returns the runs
#   recorded_ids(@runs)             waits for the clients to end; a hash of every ID they got
#   kill9_server($node)             kill -9 of the postmaster and every process it started at
#                                   once, as a power loss would
#   promote_back_in_time($standby, $recorded)
#                                   promotes the standby, then sets its generator's clock to
#                                   the time of the earliest recorded ID (test builds): the
#                                   worst case, every ID the old primary made still ahead of
#                                   the clock; returns how many seconds back that is
#   check_promoted_repeats_none($standby, $recorded)
#                                   the failover tests' checks (4 tests): promote_back_in_time,
#                                   then 100,000 IDs from the promoted standby, none recorded;
#                                   returns the IDs
#   generated_ids($node, $count)    $count new IDs from one session (COPY to psql), as a list
#   repeats_of($ids, $recorded)     how many of the list's IDs are keys of the hash
#
# Messages
#   error_of($node, $sql, dbname => ..., user => ...)
#                                   the ERROR/DETAIL/HINT lines a statement fails with, with the
#                                   SQLSTATE ("ERROR:  55000: ..."), or "(no error)"
#   messages($stderr)               psql's stderr without its "psql:<stdin>:N: " prefixes
#   log_count($node, $text, $offset)
#                                   how many times $text (a plain string) is in the server log
#                                   after byte $offset (default: the whole log)
#
# Client programs (tests/clients, built by tests/build_clients.sh and build_orms.sh)
#   run_client_program($node, $language, @command)
#                                   runs a program that connects to $node (PGHOST, PGPORT,
#                                   PGUSER set) and prints "PASS: name" / "FAIL: name" (then
#                                   indented details) per check and "N passed, M failed"; each
#                                   check becomes a test named "$language: name", plus 3 tests:
#                                   it exited with success, it ran checks, its summary counts
#                                   every check and none failed
package SnoTest;

use strict;
use warnings;

use Exporter 'import';
use File::Spec;
use File::Temp;
use IPC::Run;
use ClusterCompat;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(
  sno_node create_ids_table start_with_faketime crash_backend
  set_settings reset_settings reload_and_wait session_sees set_clock_offset_ms
  generate_into generate_concurrently psql_start psql_finish sno_stat out_of_order ticks_of no_repeats first_id_seconds
  derived_partition
  logical_node subscribe subscription_errors start_batched_inserts
  start_recorded_load recorded_ids kill9_server promote_back_in_time check_promoted_repeats_none
  generated_ids repeats_of
  error_of messages log_count
  run_client_program edition_file install_edition
  $SAMPLE $FAKETIME_LIB
);

# The format's reference vector (SPEC.md).
our $SAMPLE = 'brpk4q72xwf2m63l';

our $FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

sub sno_node
{
	my ($name, %options) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name,
		$options{install_path} ? (install_path => $options{install_path}) : ());
	$node->init(
		allows_streaming => $options{streaming} ? 1 : 0,
		has_archiving    => $options{archiving} ? 1 : 0);

	# A backend killed with signal 9 must make the postmaster re-create shared memory, as it does
	# in production, instead of shutting down (Cluster.pm's default).
	my @conf = ('restart_after_crash = on');
	push @conf, "shared_preload_libraries = 'sno'" if $options{preload} // 1;
	my $settings = $options{settings} // {};
	push @conf, "$_ = '$settings->{$_}'" for sort keys %$settings;
	$node->append_conf('postgresql.conf', join("\n", @conf));

	return $node unless $options{start} // 1;
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION sno') if $options{extension} // 1;
	create_ids_table($node) if $options{ids};
	return $node;
}

sub create_ids_table
{
	my ($node) = @_;
	$node->safe_psql(
		'postgres', q{
		CREATE TABLE ids (
			id      sno PRIMARY KEY, -- a repeated ID fails its INSERT
			phase   text NOT NULL,
			session int NOT NULL DEFAULT 0,
			n       int NOT NULL DEFAULT 0
		)});
	return;
}

# libfaketime moves the clock of every process of the server (not the monotonic one, which the
# generator's deadlines use); FAKETIME_CACHE_DURATION=1 makes it read $file again every second,
# by an absolute path, since the server runs in its data directory.
sub start_with_faketime
{
	my ($node, $file) = @_;
	die "libfaketime is not installed ($FAKETIME_LIB)" unless -e $FAKETIME_LIB;
	local $ENV{LD_PRELOAD}                  = $FAKETIME_LIB;
	local $ENV{FAKETIME_TIMESTAMP_FILE}     = File::Spec->rel2abs($file);
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = 1;
	local $ENV{FAKETIME_CACHE_DURATION}     = 1;
	$node->start;
	return;
}

# kill -9 of one backend: the postmaster takes it as a crash, ends every session and re-creates
# shared memory (with restart_after_crash = on, which sno_node sets).
sub crash_backend
{
	my ($node) = @_;
	my $offset = -s $node->logfile;
	my $victim_name = 'sno_crash_victim';
	my $victim = psql_start($node, 'SELECT pg_sleep(600)', application_name => $victim_name);
	my $find = "SELECT pid FROM pg_stat_activity WHERE application_name = '$victim_name'";
	$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($find) AS s")
	  or die "the backend to kill never showed up";
	my $pid = $node->safe_psql('postgres', $find);
	kill('KILL', $pid) or die "could not kill backend $pid: $!";
	$victim->{handle}->finish;    # its psql lost the connection and is done
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	# Only then connect: a psql that the recovering server turns away at once can exit before
	# it reads its query from the pipe, and writing it then kills the test (EPIPE).
	$node->wait_for_log(qr/database system is ready to accept connections/, $offset);
	$node->poll_query_until('postgres', 'SELECT 1', '1')
	  or die "the server did not come back after the crash";
	return $offset;
}

sub quoted
{
	my ($text) = @_;
	$text =~ s/'/''/g;
	return "'$text'";
}

# pg_reload_conf() only signals the postmaster, which reads the files a moment later, and new
# sessions inherit its settings: wait until a new session reports a newer load time.
sub reload_and_wait
{
	my ($node) = @_;
	my $before = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		'SELECT pg_conf_load_time() > ' . quoted($before) . '::timestamptz')
	  or die "the reload was not seen";
	return;
}

# One reload for all pairs, so that no session sees half of a change (a new sequence_min with
# the old sequence_max, say).
sub set_settings
{
	my ($node, @pairs) = @_;
	my @statements;
	while (my ($name, $value) = splice(@pairs, 0, 2))
	{
		push @statements, "ALTER SYSTEM SET $name = " . quoted($value) . ';';
	}
	$node->safe_psql('postgres', join("\n", @statements));
	reload_and_wait($node);
	return;
}

sub reset_settings
{
	my ($node, @names) = @_;
	$node->safe_psql('postgres', join("\n", map { "ALTER SYSTEM RESET $_;" } @names));
	reload_and_wait($node);
	return;
}

sub session_sees
{
	my ($session, $name, $value) = @_;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return 1 if $session->query_safe("SHOW $name") eq $value;
		usleep(100_000);
	}
	return 0;
}

sub set_clock_offset_ms
{
	my ($node, $ms) = @_;
	set_settings($node, 'sno.test_clock_offset_ms' => $ms);
	return;
}

# The INSERT of generate_into and generate_concurrently: n numbers the IDs in call order.
sub generate_sql
{
	my ($phase, $count, $meta, $session) = @_;
	return "INSERT INTO ids SELECT sno_generate($meta), " . quoted($phase)
	  . ", $session, g FROM generate_series(1, $count) AS g";
}

sub generate_into
{
	my ($node, $phase, $count, %options) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		generate_sql($phase, $count, $options{meta} // 1, $options{session} // 1));
	diag(messages($err)) if $ret != 0;
	return $ret == 0;
}

sub generate_concurrently
{
	my ($node, $phase, $sessions, $count, %options) = @_;
	my @runs;
	for my $session (1 .. $sessions)
	{
		my $sql = generate_sql($phase, $count, $options{meta} // 1, $session);
		push @runs, psql_start($node, $sql);
	}
	my ($failed, %errors) = (0);
	for my $run (@runs)
	{
		next if $run->{handle}->finish;
		$failed++;
		$errors{$_}++ for grep { /^(ERROR|WARNING):/ } split /\n/, messages($run->{err});
	}
	diag("$errors{$_} x $_") for sort keys %errors;
	return $failed;
}

sub psql_start
{
	my ($node, $sql, %options) = @_;
	my $connstr = $node->connstr('postgres');
	$connstr .= " application_name=$options{application_name}"
	  if defined $options{application_name};
	$connstr .= " user=$options{user}" if defined $options{user};
	my $run = { out => '', err => '' };
	# One argument may hold 128 kB; a longer script goes through a file.
	my @script = ('-c', $sql);
	if (length($sql) > 100_000)
	{
		my ($file, $path) = File::Temp::tempfile(DIR => $PostgreSQL::Test::Utils::tmp_check);
		print $file $sql;
		close $file;
		@script = ('-f', $path);
	}
	$run->{handle} = IPC::Run::start(
		[
			$node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1',
			'-d', $connstr, @script
		],
		'>', \$run->{out}, '2>', \$run->{err},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return $run;
}

sub psql_finish
{
	my ($run) = @_;
	return 1 if $run->{handle}->finish;
	diag(messages($run->{err}));
	return 0;
}

sub sno_stat
{
	my ($node, $expression) = @_;
	return $node->safe_psql('postgres', "SELECT $expression FROM sno_generator_stats()");
}

sub out_of_order
{
	my ($node, $phase) = @_;
	return $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev
			FROM ids WHERE phase = } . quoted($phase) . q{) AS s
		WHERE id <= prev});
}

sub ticks_of
{
	my ($node, $where) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(DISTINCT sno_tick_tock(id)::text, ',') FROM ids WHERE $where");
}

sub no_repeats
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids');
}

sub first_id_seconds
{
	my ($node, $phase) = @_;
	return $node->safe_psql(
		'postgres', qq{
		SELECT clock_timestamp() AS began \\gset
		INSERT INTO ids (id, phase) SELECT sno_generate(1), } . quoted($phase) . q{;
		SELECT round(extract(epoch FROM clock_timestamp() - :'began')::numeric, 1);});
}

sub derived_partition
{
	my ($node) = @_;
	my ($partition) = slurp_file($node->logfile) =~
	  /sno: sno\.partition is not set; using partition (\d+) derived from the system identifier/;
	return $partition;
}

sub logical_node
{
	my ($name, $partition, %options) = @_;
	return sno_node(
		$name,
		%options,
		streaming => 1,
		settings  => {
			wal_level                       => 'logical',
			max_worker_processes            => 16,
			max_logical_replication_workers => 8,
			'sno.partition'                 => $partition
		});
}

sub subscribe
{
	my ($subscriber, $name, $publisher, $options) = @_;
	my $connstr = $publisher->connstr . ' dbname=postgres';
	$subscriber->safe_psql('postgres',
		"CREATE SUBSCRIPTION $name CONNECTION '$connstr' PUBLICATION events WITH ($options)");
	return;
}

sub subscription_errors
{
	my ($subscriber) = @_;
	# 19 counts the initial synchronization's errors by what was synchronized: its
	# sync_table_error_count and sync_seq_error_count (sequences are new) replace
	# sync_error_count. By major: as a version, 19rc1 is less than 19.
	my $sync_errors =
	  $subscriber->pg_version->major >= 19
	  ? 'sync_table_error_count + sync_seq_error_count'
	  : 'sync_error_count';
	return $subscriber->safe_psql('postgres',
		"SELECT sum(apply_error_count + $sync_errors) FROM pg_stat_subscription_stats");
}

sub start_batched_inserts
{
	my ($node, $writer, $rows) = @_;
	my @firsts = map { 1 + 1000 * $_ } 0 .. $rows / 1000 - 1;
	return psql_start($node,
		join("\n",
			map { "INSERT INTO events (writer, n) SELECT $writer, g FROM generate_series($_, $_ + 999) AS g;" }
			  @firsts));
}

# Each client alternates three ways of being given IDs, so that IDs never committed count too.
sub start_recorded_load
{
	my ($node, $sessions, $parent) = @_;
	# A directory of this load's own: tests that run at the same time (tests/tap.sh runs two)
	# share the work directory, and would write their clients' IDs into one another's files.
	my $dir = File::Temp::tempdir('load_XXXXXX', DIR => $parent);
	$node->safe_psql('postgres',
		'CREATE TABLE IF NOT EXISTS load (id sno PRIMARY KEY DEFAULT sno_generate(1), v int)');
	my $round = join("\n",
		'INSERT INTO load (v) SELECT g FROM generate_series(1, 200) AS g RETURNING id;',
		'BEGIN;',
		'INSERT INTO load (v) SELECT g FROM generate_series(1, 200) AS g RETURNING id;',
		'ROLLBACK;',
		'SELECT sno_generate(1) FROM generate_series(1, 200);');
	my $script = "$dir/load.sql";
	PostgreSQL::Test::Utils::append_to_file($script, "$round\n" x 20_000);
	my @runs;
	for my $session (1 .. $sessions)
	{
		my $out = "$dir/load_$session.out";
		my $handle = IPC::Run::start(
			[
				$node->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1',
				'-d', $node->connstr('postgres'), '-f', $script
			],
			'>', $out, '2>', "$out.err");
		push @runs, { handle => $handle, out => $out };
	}
	return @runs;
}

sub recorded_ids
{
	my (@runs) = @_;
	my %ids;
	for my $run (@runs)
	{
		$run->{handle}->finish;    # ends with an error once the server is gone
		open my $file, '<', $run->{out} or die "cannot read $run->{out}: $!";
		while (my $line = <$file>)
		{
			chomp $line;
			# Only whole IDs: the last line may have been cut off by the kill.
			$ids{$line} = 1 if $line =~ /^[0-9a-z]{16}$/;
		}
		close $file;
	}
	return \%ids;
}

sub kill9_server
{
	my ($node) = @_;
	my $postmaster = $node->{_pid} or die "the node is not running";
	my @children = split ' ', `pgrep -P $postmaster`;
	kill('KILL', $postmaster, @children) or die "kill -9 failed: $!";
	# Wait until no process of the server is left, so that nothing more reaches its clients.
	for (1 .. 100)
	{
		last unless grep { kill(0, $_) } $postmaster, @children;
		usleep(100_000);
	}
	$node->{_pid} = undef;    # as Cluster.pm's own kill9 does
	return;
}

sub promote_back_in_time
{
	my ($standby, $recorded) = @_;
	$standby->promote;
	$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "the standby was not promoted";
	my ($earliest) = sort keys %$recorded;    # the text form sorts by time
	my $back_ms = $standby->safe_psql('postgres',
		"SELECT (extract(epoch FROM clock_timestamp() - sno_time('$earliest')) * 1000)::bigint");
	set_clock_offset_ms($standby, -$back_ms);
	return sprintf('%.1f', $back_ms / 1000);
}

sub check_promoted_repeats_none
{
	my ($standby, $recorded) = @_;
	cmp_ok(scalar(keys %$recorded), '>=', 100_000,
		'the clients were given at least 100,000 IDs by the old primary');
	my $back = promote_back_in_time($standby, $recorded);
	cmp_ok($back, '>=', 3,
		"the promoted standby's clock is set back $back s, to the old primary's first ID");
	my $ids = generated_ids($standby, 100_000);
	is(scalar(@$ids), 100_000, 'the promoted standby generates 100,000 IDs');
	is(repeats_of($ids, $recorded), 0, 'not one of them was given out by the old primary');
	return $ids;
}

sub generated_ids
{
	my ($node, $count) = @_;
	my $ids = $node->safe_psql('postgres',
		"COPY (SELECT sno_generate(1) FROM generate_series(1, $count)) TO STDOUT");
	return [ split /\n/, $ids ];
}

sub repeats_of
{
	my ($ids, $recorded) = @_;
	return scalar grep { $recorded->{$_} } @$ids;
}

sub error_of
{
	my ($node, $sql, %options) = @_;
	my $connstr = $node->connstr($options{dbname} // 'postgres');
	$connstr .= " user=$options{user}" if defined $options{user};
	my ($ret, $out, $err) = $node->psql(
		undef, $sql,
		connstr      => $connstr,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return '(no error)' if $ret == 0;
	return join("\n", grep { /^(ERROR|DETAIL|HINT):/ } split /\n/, messages($err));
}

sub messages
{
	my ($stderr) = @_;
	return join("\n", map { s/^psql:[^:]*:\d+: //r } split /\n/, $stderr // '');
}

sub log_count
{
	my ($node, $text, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset // 0);
	my $count = () = $log =~ /\Q$text\E/g;
	return $count;
}


sub run_client_program
{
	my ($node, $language, @command) = @_;
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
	return;
}

# The SQL edition's files (sql/edition/), which tests/tap.sh writes into SNO_EDITION_DIR: the
# path of the one named.
sub edition_file
{
	my ($name) = @_;
	my $path = ($ENV{SNO_EDITION_DIR} // '') . "/$name";
	die "no SQL edition file $path (tests/tap.sh writes them; SNO_EDITION_DIR)" unless -f $path;
	return $path;
}

# Installs the edition's plain SQL file into a database as its docs say (psql -1 -f), as the
# role `user` if given; one test named `name`.
sub install_edition
{
	my ($node, $dbname, $name, %options) = @_;
	my $connstr = $node->connstr($dbname);
	$connstr .= " user=$options{user}" if defined $options{user};
	$node->command_ok(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-1', '-f', edition_file('sno_sql.sql'),
			'-d', $connstr
		],
		$name);
	return;
}

1;
