# A damaged, unreadable, missing or unwritable state file (sno_generator.state).
#
# Why: the file is what keeps IDs unique across restarts with the clock set back, but it must
# never keep PostgreSQL down: a damaged or unreadable file turns generation off with an error
# that says what to do, and generation comes back as soon as the file is restored or removed; a
# refresh that cannot be written warns at once while IDs are still covered, and fails only once
# they are not.
use strict;
use warnings;
use File::Copy qw(copy);
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

# The renewer off (a test build's setting): the renewals below are the callers' own.
my $node = sno_node(
	'state_file',
	ids => 1,
	settings => {
		'sno.partition' => 7000,
		'sno.backfill_partition' => 7001,
		'sno.test_renewer_off' => 'on'
	});
my $state = $node->data_dir . '/sno_generator.state';
my $backup = $node->basedir . '/state.backup';
my $off_for = 'DETAIL:  The file records how far this server\'s generator went, so that no ID repeats after a restart with the clock set back. Without it, sno_generate and sno_generate_at are off; everything else works.';
my $off_because = "$off_for
HINT:  Restore sno_generator.state from a backup of this data directory; or, if no clock on this server has gone back since its newest ID was made, remove the file. The next call reads it again.";

generate_into($node, 'before', 1000) or die;
$node->stop;
copy($state, $backup) or die "could not back up $state: $!";

truncate($state, 60) or die "could not truncate $state: $!";
my $log_offset = -s $node->logfile;
ok($node->start(fail_ok => 1), 'cut to 60 bytes, the server still starts');
is( log_count(
		$node,
		'sno: could not read sno_generator.state: sno_generator.state is not a valid sno state file; sno_generate and sno_generate_at raise an error until the file is restored or removed',
		$log_offset),
	1,
	'the log says so once, at start');
is($node->safe_psql('postgres', "SELECT '$SAMPLE'::sno::text"), $SAMPLE, 'the type works');
is($node->safe_psql('postgres', 'SELECT count(sno_time(id)) FROM ids'), 1000, 'existing IDs decode');
my $not_valid = "ERROR:  XX001: sno cannot generate IDs: could not read sno_generator.state: sno_generator.state is not a valid sno state file\n$off_because";
is(error_of($node, 'SELECT sno_generate(1)'),
	$not_valid, 'sno_generate -> XX001, what happened and what to do');
is(error_of($node, 'SELECT sno_generate_at(1, now())'), $not_valid, 'sno_generate_at too');
is($node->safe_psql('postgres', 'SELECT generating FROM sno_generator_stats()'), 'f',
	'sno_generator_stats() says generation is off');
is(-s $state, 60, 'the file is left as it was');

# Restored, with the clock 2 s behind the IDs made before: no restart needed, no repeat.
copy($backup, $state) or die "could not restore $state: $!";
set_clock_offset_ms($node, -2000);
ok(generate_into($node, 'after_restore', 1000),
	'restored from the backup, the next call works (clock 2 s back)');
is(log_count($node, 'sno: read sno_generator.state again; generating IDs', $log_offset),
	1, '... the log says it was read again');
is(no_repeats($node), 't', '... no ID repeats');
is($node->safe_psql('postgres', 'SELECT generating FROM sno_generator_stats()'), 't',
	'... and sno_generator_stats() says it is on');
set_clock_offset_ms($node, 0);

$node->stop;
chmod(0000, $state) or die "could not chmod $state: $!";
$node->start;
is( error_of($node, 'SELECT sno_generate(1)'),
	"ERROR:  58030: sno cannot generate IDs: could not read sno_generator.state: Permission denied (os error 13)\n$off_for\n"
	  . "HINT:  Let the server's operating-system user read sno_generator.state (its owner and permissions, or the disk under it); do not remove it, it may be intact. The next call reads it again.",
	'unreadable -> 58030, and a hint that does not say to remove it');
my $new_history = 'sno: no state file (sno_generator.state): starting a new history at';
my $histories = log_count($node, $new_history);
unlink($state) or die "could not remove $state: $!";
ok(generate_into($node, 'after_remove', 100), 'removed, the next call works');
is(log_count($node, $new_history), $histories + 1, '... and the log says a new history starts');

$node->stop;
unlink($state) or die "could not remove $state: $!";
$node->start;
is(log_count($node, $new_history), $histories + 2, 'missing at start: the log says a new history starts');

# A refresh that cannot be written (a directory where the file goes, so that the rename of the
# new file over it fails): WARNING at once while IDs are still covered, then an error once they
# are not.
generate_into($node, 'covered', 10) or die;
my $blocker = $state;
unlink($state) or die "could not remove $state: $!";
mkdir($blocker) or die "could not create $blocker: $!";
set_clock_offset_ms($node, 6000);
my ($ret, $out, $err) =
  $node->psql('postgres', "INSERT INTO ids (id, phase) SELECT sno_generate(1), 'refresh_failed'");
like(
	messages($err),
	qr/\AWARNING:  sno: could not extend the reservation in sno_generator\.state: Is a directory \(os error 21\)
DETAIL:  IDs are covered through \S+ \S+; after that sno_generate fails until the file can be written\. Failed attempts so far: 1 \(sno_generator_stats\(\)\.state_file_failures\)\.\z/,
	'a failed refresh warns at once, saying until when IDs are covered');
is($ret . $node->safe_psql('postgres', "SELECT count(*) FROM ids WHERE phase = 'refresh_failed'"),
	'01', '... and the ID is still made');
is(sno_stat($node, 'state_file_failures'), 1, '... sno_generator_stats().state_file_failures counts it');
set_clock_offset_ms($node, 12000);
is( error_of($node, 'SELECT sno_generate(1)'),
	"ERROR:  58030: sno: could not write sno_generator.state: Is a directory (os error 21)
HINT:  The file in the data directory keeps IDs unique across restarts; make it writable (disk space, permissions) and call again.",
	'past the reservation -> 58030, and no ID');
rmdir($blocker) or die "could not remove $blocker: $!";
ok(generate_into($node, 'writable_again', 100), 'writable again, IDs are made');
is( join(',', map { s{.*/}{}r } glob($node->data_dir . '/sno_generator.state*')),
	'sno_generator.state',
	'... and no file of a failed write is left beside the state file');
is(no_repeats($node), 't', '... no ID repeats');

# A data directory where no file can be made (full, or read-only, with pg_wal elsewhere): a call
# past the reservation fails with 58030, and adds nothing to the WAL (issue 34): its record is
# inserted only once the state it records is written beside the file.
sub sno_records_between
{
	my ($from, $to) = @_;
	my $dump = `pg_waldump -p "@{[ $node->data_dir ]}/pg_wal" -s $from -e $to 2>&1`;
	return scalar(() = $dump =~ /^rmgr: (?:sno|custom167) /mg);
}
my $wal_before = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
generate_into($node, 'before_read_only', 10) or die;
set_clock_offset_ms($node, 60000);
chmod(0500, $node->data_dir) or die "chmod: $!";
END { chmod(0700, $node->data_dir) if $node; }
like(error_of($node, 'SELECT sno_generate(1)'), qr/\AERROR:  58030: sno: could not write sno_generator\.state: Permission denied/,
	'a data directory where no file can be made: 58030') for 1 .. 3;
my $wal_after = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
chmod(0700, $node->data_dir) or die "chmod: $!";
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
is(sno_records_between($wal_before, $wal_after), 0, '... and no sno record was added to the WAL');
ok(generate_into($node, 'writable_at_last', 10), 'writable again, IDs are made');
my $wal_end = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
cmp_ok(sno_records_between($wal_after, $wal_end), '>=', 1, '... with their record in the WAL (control)');
set_clock_offset_ms($node, 0);

done_testing();
