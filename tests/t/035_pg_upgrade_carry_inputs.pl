# What the carry across pg_upgrade (src/pg/recovery/pg_upgrade_carry.rs) takes, and what it refuses (issue 22,
# items 2 and 3), on one major and without pg_upgrade: a node is started as pg_upgrade starts the
# new server (binary-upgrade mode, -b, its output appended to the run's server log) with that
# log written into its pg_upgrade_output.d by the test, beside an "old data directory" the test
# makes. The log holds
# pg_upgrade's own line for starting the old server, and after it what a database role can make
# the old server log: a whole report line of the earlier design and a forged start line naming a
# directory whose state reaches 2079, and bytes that are not UTF-8. The carry takes the old
# directory's file and nothing else; without pg_upgrade's line, or with an old state it cannot
# use, the new cluster refuses to generate until an operator decides, and says why.
# 018_pg_upgrade.pl runs a real pg_upgrade with forgeries through a database's settings.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(make_path remove_tree);
use File::Basename qw(dirname);
use SnoTest;

my $node = sno_node('new');
my $data = $node->data_dir;
my $state_path = "$data/sno_generator.state";
my $run = '20261124T090000.000';
my $output = "$data/pg_upgrade_output.d";

# The old cluster's data directory: PG_VERSION and a state file. Its IDs reach 30 s past now in
# one timeline (a clock that was ahead), 4 s before now in the other; a state of 2079 in both is
# what a forgery would bring.
my $now_units = int((time() - 1_262_304_000) * 250);    # 4 ms units since the sno epoch
my $old_wall_hi = $now_units + 7_500;
my $state = sub {
	my ($wall_hi, $wall_safe) = @_;
	return "# sno generator state\nversion=2\nwall_hi=$wall_hi\nwall_safe=$wall_safe\n"
	  . "drifts=0\nbackfill.3=400000000000,0,-,0\n";
};
my $old = dirname($data) . '/old data';
make_path($old);
append_to_file("$old/PG_VERSION", "15\n");
append_to_file("$old/sno_generator.state", $state->($old_wall_hi, $now_units - 1_000));
my $forged_dir = dirname($data) . '/forged';
make_path($forged_dir);
append_to_file("$forged_dir/PG_VERSION", "15\n");
append_to_file("$forged_dir/sno_generator.state", $state->(549755813887, 549755813887));

# pg_upgrade's line for a server start (exec_prog and start_postmaster, PostgreSQL 15 to 18).
sub start_line
{
	my ($new_spelled, $dir) = @_;
	my $log = "$new_spelled/pg_upgrade_output.d/$run/log/pg_upgrade_server.log";
	return qq{command: "/usr/lib/postgresql/15/bin/pg_ctl" -w -l "$log" -D "$dir" }
	  . qq{-o "-p 50432 -b  -c listen_addresses='' -c unix_socket_permissions=0700" }
	  . qq{start >> "$log" 2>&1\n};
}

# What a database role can make the old server write into that log after pg_upgrade started it:
# the whole report line sno's first carry trusted, a start line naming the forged directory,
# and bytes that are not UTF-8 (a Latin-1 message).
my $forgeries =
    qq{2026-11-24 09:00:01.000 UTC [42] WARNING:  sno: generator state for pg_upgrade of }
  . qq{data directory "x": version=2 wall_hi=549755813887 wall_safe=549755813887 drifts=0\n}
  . start_line($data, $forged_dir)
  . "2026-11-24 09:00:02.000 UTC [42] FATAL:  r\xe9le \xabappdb\xbb\n";

# Writes this run's server log into the node's data directory: pg_upgrade's header, then $text.
sub write_run_log
{
	my ($text) = @_;
	remove_tree($output);
	make_path("$output/$run/log");
	append_to_file("$output/$run/log/pg_upgrade_server.log",
		"\n-----\n  pg_upgrade run on Tue Nov 24 09:00:00 2026\n-----\n\n$text");
}

# Starts the node as pg_upgrade starts the new server, its output going to the run's server log
# (or to $log), and stops it; returns what it logged.
sub start_as_pg_upgrade_does
{
	my ($log) = @_;
	$log //= "$output/$run/log/pg_upgrade_server.log";
	my $offset = -s $log;
	system_or_bail('pg_ctl', '-w', '-D', $data, '-l', $log, '-o', '-b', 'start');
	system_or_bail('pg_ctl', '-w', '-D', $data, '-m', 'fast', 'stop');
	return slurp_file($log, $offset);
}

sub wall_hi_recorded
{
	my ($text) = slurp_file($state_path) =~ /^wall_hi=(\d+)$/m;
	return $text;
}

# sno_generate in a session whose statements may wait 5 s at most: "ok", or its error.
sub generate_now
{
	my ($ok, $out, $err) =
	  $node->psql('postgres', "SET statement_timeout = '5s'; SELECT sno_generate(1)");
	return $ok == 0 ? 'ok' : $err;
}

$node->stop;

# 1. pg_upgrade's line, then the forgeries: the old directory's state is carried, whole. A run
# kept from before (--retain, or a failed run) whose first line names the forged directory is
# not this run: not read.
write_run_log(start_line($data, $old) . $forgeries . start_line($data, $data));
make_path("$output/20261101T000000.000/log");
append_to_file("$output/20261101T000000.000/log/pg_upgrade_server.log",
	start_line($data, $forged_dir));
my $log = start_as_pg_upgrade_does();
like(
	$log,
	qr/sno: pg_upgrade: sno_generator\.state now covers the IDs of "\Q$old\E"/,
	'the new server took the state of the directory pg_upgrade started first');
is(wall_hi_recorded(), $old_wall_hi, '... its wall_hi, not the forged one of 2079');
like(slurp_file($state_path), qr/^backfill\.3=400000000000,0,-,0$/m, '... with its backfill cursor');
$node->start;
is(generate_now(), 'ok', 'the new cluster generates at once');
my $first_unit = $node->safe_psql('postgres',
	q{SET statement_timeout = '5s';
	SELECT ((extract(epoch FROM sno_time(sno_generate(1))) - 1262304000) * 250)::bigint});
cmp_ok($first_unit, '<=', $now_units + 1000, '... at the clock, not in 2079');
$node->stop;
# A later start of the same run writes nothing again.
$log = start_as_pg_upgrade_does();
unlike($log, qr/now covers/, 'a later start of the same pg_upgrade run has nothing to add');

# 2. Relative paths, as pg_upgrade gets them when run from the directory above both clusters.
unlink $state_path;
my $new_name = (split m{/}, $data)[-1];
write_run_log(start_line($new_name, 'old data') . $forgeries);
$log = start_as_pg_upgrade_does();
like(
	$log,
	qr/now covers the IDs of "\Q$old\E"/,
	'relative paths resolve against pg_upgrade\'s working directory');
is(wall_hi_recorded(), $old_wall_hi, '... and carry the old state');

# 3. A first command of a form this build does not know (a later pg_upgrade's), then the
# forgeries: nothing after it is taken, so the carry failed; a run log without any command, or
# whose first start is this server's own, is no carry either. The new cluster then refuses to
# generate, at every start, until an operator decides.
unlink $state_path;
write_run_log(start_line($data, $data) . start_line($data, $old));
like(
	start_as_pg_upgrade_does(),
	qr/not carried into this one: pg_upgrade started this server before the old cluster's/,
	'the new server started first: the carry failed');
write_run_log("");
like(
	start_as_pg_upgrade_does(),
	qr/not carried into this one: the first command in \S+ is not a server start this build knows/,
	'no command at all: the carry failed');
write_run_log(qq{command: "/usr/lib/postgresql/15/bin/pg_ctl" -w -D "$old" start\n} . $forgeries);
$log = start_as_pg_upgrade_does();
like(
	$log,
	qr/WARNING:  sno: pg_upgrade: the old cluster's generator state was not carried into this one: the first command in pg_upgrade_output\.d\/$run\/log\/pg_upgrade_server\.log is not a server start this build knows/,
	'a first command of an unknown form: the new server says the carry failed, forgeries or not');
unlike(slurp_file($state_path), qr/^wall_hi=549755813887$/m, '... and took nothing forged');
remove_tree($output);    # pg_upgrade deletes its output when it succeeds
my $offset = -s $node->logfile;
$node->start;
like(
	generate_now(),
	qr/ERROR:  sno cannot generate IDs: could not read sno_generator\.state: pg_upgrade did not carry the old cluster's generator state into it: the first command in \S+ is not a server start this build knows.*\nHINT:  Copy sno_generator\.state from the old cluster's data directory \(the one pg_upgrade upgraded from\) over this one; or, if no clock on this server is behind the old cluster's newest ID, remove the file\./s,
	'sno_generate refuses, naming the reason, and says where the state is: the old data directory');
$node->restart;
my @said = slurp_file($node->logfile, $offset) =~
  /LOG:  sno: could not read sno_generator\.state: pg_upgrade did not carry the old cluster's generator state into it: the first command/g;
is(scalar @said, 2, 'each start after pg_upgrade logs it');
like(generate_now(), qr/pg_upgrade did not carry/, '... and a restart does not lift it');
# The operator copies the old file over it: the next call generates, without a restart.
copy_file("$old/sno_generator.state", $state_path);
is(generate_now(), 'ok', 'with the old state file copied in, the next call generates');
$node->stop;

# 4. pg_upgrade's line names a directory whose state reaches 2079 (damaged, or forged by
# someone who could write there): refused, with the reason.
unlink $state_path;
write_run_log(start_line($data, $forged_dir));
$log = start_as_pg_upgrade_does();
like(
	$log,
	qr/not carried into this one: \Q$forged_dir\E\/sno_generator\.state reaches 2079-\S+ \S+, more than a day past this server's clock/,
	'a state more than a day past the clock is refused');
$node->start;
like(generate_now(), qr/reaches 2079/, '... and generation waits for an operator, not for 2079');
# The operator removes the file: generation starts a new history.
unlink $state_path;
is(generate_now(), 'ok', 'with the file removed, the next call generates');
$node->stop;

# 5. Debian's layout: pg_upgradecluster gives pg_upgrade the configuration directory
# (/etc/postgresql/15/main), whose postgresql.conf names the data directory, here in a file it
# includes, as Debian's conf.d may. The carry finds the data directory as pg_upgrade does.
unlink $state_path;
my $config_dir = dirname($data) . '/etc postgresql 15 main';
make_path("$config_dir/conf.d");
append_to_file("$config_dir/postgresql.conf",
	"data_directory = '/nowhere'  # a later one wins\nport = 5432\ninclude_dir = 'conf.d'\n");
append_to_file("$config_dir/conf.d/data.conf", "data_directory = '$old'\n");
write_run_log(start_line($data, $config_dir) . $forgeries);
$log = start_as_pg_upgrade_does();
like(
	$log,
	qr/sno: pg_upgrade: sno_generator\.state now covers the IDs of "\Q$old\E"/,
	'a configuration directory: the state of the data directory its postgresql.conf names');
is(wall_hi_recorded(), $old_wall_hi, '... carried');

# A configuration directory that names no data directory, or a directory that is neither: refused.
unlink $state_path;
unlink "$config_dir/conf.d/data.conf";
write_run_log(start_line($data, $config_dir));
$log = start_as_pg_upgrade_does();
like(
	$log,
	qr/not carried into this one: \Q$config_dir\E\/postgresql\.conf sets data_directory to \/nowhere, which is not a data directory/,
	'a configuration directory whose data_directory is not a data directory is refused');
unlink $state_path;
my $empty_dir = dirname($data) . '/empty';
make_path($empty_dir);
write_run_log(start_line($data, $empty_dir));
$log = start_as_pg_upgrade_does();
like(
	$log,
	qr/not carried into this one: \Q$empty_dir\E is neither a data directory nor a configuration directory/,
	'a directory that is neither is refused');

# 6. An old cluster that never recorded a state: nothing to carry, generation on.
unlink $state_path;
my $unused = dirname($data) . '/unused';
make_path($unused);
append_to_file("$unused/PG_VERSION", "15\n");
write_run_log(start_line($data, $unused) . $forgeries);
$log = start_as_pg_upgrade_does();
like($log, qr/the old cluster \(\Q$unused\E\) recorded no generator state; none to carry/,
	'an old cluster without a state file: none to carry');
$node->start;
is(generate_now(), 'ok', '... and the new cluster generates');
$node->stop;

# 7. The old server's part: binary-upgrade mode, a pg_upgrade_output.d of its own (kept from when
# it was the new cluster of an earlier upgrade), its output going elsewhere (the new cluster's
# log). It carries nothing: its state file stays as it was.
write_run_log(start_line($data, $forged_dir));
$log = start_as_pg_upgrade_does($node->logfile);
unlike($log, qr/sno: pg_upgrade/, 'a server whose output is not a run\'s log here carries nothing');
unlike(slurp_file($state_path), qr/carry_failed/, '... and its state file stays a state');

# 8. The carry fails and not even the mark that keeps generation off can be written (here a
# directory where it is written before its rename into place), in a new cluster with no state of
# its own: the server pg_upgrade starts does not start, so pg_upgrade stops there, and the log
# says why. Without it, the upgraded cluster would generate at once.
rename($state_path, "$state_path.kept") or die "rename $state_path: $!";
mkdir "$state_path.tmp" or die "mkdir $state_path.tmp: $!";
write_run_log(start_line($data, $empty_dir));
my $run_log = "$output/$run/log/pg_upgrade_server.log";
my $before_start = -s $run_log;
isnt(system('pg_ctl', '-w', '-D', $data, '-l', $run_log, '-o', '-b', 'start'),
	0, 'the mark cannot be written: the server pg_upgrade starts does not start');
like(
	slurp_file($run_log, $before_start),
	qr/FATAL:  sno: pg_upgrade: the old cluster's generator state was not carried \(\Q$empty_dir\E is neither a data directory nor a configuration directory\), and sno_generator\.state, which would keep this cluster from generating until that is fixed, could not be written: /,
	'... and says why');
rmdir "$state_path.tmp" or die "rmdir $state_path.tmp: $!";
rename("$state_path.kept", $state_path) or die "rename back: $!";

done_testing();

sub copy_file
{
	my ($from, $to) = @_;
	unlink $to;
	append_to_file($to, slurp_file($from));
}
