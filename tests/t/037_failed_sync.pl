# A failed fsync of the state file is never trusted (issue 34, item 3). After an fsync fails, the
# kernel may report a later one as successful without the data ever reaching the disk, so
# PostgreSQL stops the server (data_sync_retry = off). sno must not publish a reservation that
# rests on such a sync either, and must not stop the server over it: generation goes off, the
# session whose sync failed never retries, and another session writes and syncs the whole file
# again before anything more is generated. The failing disk is the test builds'
# sno.test_state_sync_fails (EIO from the sync of the data directory).
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;

# The renewer off (a test build's setting): the renewal below is a caller's own.
my $node = sno_node('sync', settings => { 'sno.partition' => 1, 'sno.test_renewer_off' => 'on' });
# A fresh start: the state written at shutdown is behind the clock, so the first ID writes.
$node->restart;

# What a statement in the open session writes to stderr (its errors and warnings).
sub fails_with
{
	my ($session, $sql) = @_;
	$session->{stderr} = '';
	$session->query($sql);
	return $session->{stderr};
}

# A statement in the open session that must succeed without a message.
sub succeeds
{
	my ($session, $sql) = @_;
	$session->{stderr} = '';
	return $session->query_safe($sql);
}

my $failing = $node->background_psql('postgres', on_error_stop => 0);
succeeds($failing, 'SET sno.test_state_sync_fails = on');
like(
	fails_with($failing, 'SELECT sno_generate(1)'),
	qr/ERROR:  sno: could not write sno_generator.state: fsync failed: Input\/output error/,
	'the first ID needs a write; its fsync fails, and so does the call');
is(sno_stat($node, 'generating'), 'f', 'generation is off');
succeeds($failing, 'SET sno.test_state_sync_fails = off');
like(
	fails_with($failing, 'SELECT sno_generate(1)'),
	qr/ERROR:  sno cannot generate IDs: an fsync of sno_generator.state failed in this session/,
	'the session whose sync failed does not try again: a later sync there proves nothing');

my $offset = -s $node->logfile;
is($node->safe_psql('postgres', 'SELECT sno_generate(1) IS NOT NULL'),
	't', 'another session writes and syncs the whole file again, then generates');
is(log_count($node, 'wrote and synced sno_generator.state whole again after a failed sync', $offset),
	1, 'and says so');
is(sno_stat($node, 'generating'), 't', 'generation is on again');
is(succeeds($failing, 'SELECT sno_generate(1) IS NOT NULL'),
	't', 'for every session, the one whose sync failed too');

# A renewal that fails while the reservation still covers the callers: the caller's ID is covered
# by an earlier durable write, so it is returned, with a WARNING; the next call finds generation off.
# The reservation reaches 10 s past the clock and is renewed when less than 5 s are left.
sleep 6;
succeeds($failing, 'SET sno.test_state_sync_fails = on');
$failing->{stderr} = '';
is($failing->query('SELECT sno_generate(1) IS NOT NULL'), 't',
	'a renewal whose fsync fails still returns the covered ID');
like($failing->{stderr}, qr/WARNING:  sno: could not extend the reservation in sno_generator.state: fsync failed/,
	'with a WARNING');
is(sno_stat($node, 'generating'), 'f', 'and turns generation off');
succeeds($failing, 'SET sno.test_state_sync_fails = off');
like(
	fails_with($failing, 'SELECT sno_generate(1)'),
	qr/failed in this session/,
	'that session does not try again');
is($node->safe_psql('postgres', 'SELECT sno_generate(1) IS NOT NULL'),
	't', 'another session does');
$failing->quit;

done_testing();
