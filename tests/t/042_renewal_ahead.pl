# While IDs are made steadily, the renewer renews the state file's reservation before any caller
# needs to, so that no caller writes the file itself: the write (a WAL flush, two fsyncs and a
# rename) was a latency outlier about every 5 s for the caller that renewed.
#
# The session below generates with a slow disk of its own (sno.test_state_write_delay_ms, in test
# builds only: each of its writes takes 2 s longer), for longer than a reservation lasts. With
# the renewer, no step of it takes the 2 s; with the renewer off (sno.test_renewer_off, in test
# builds only), one does: the session renewed itself.
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SnoTest;

my $node = sno_node('renewal', settings => { 'sno.partition' => 42 });
$node->safe_psql('postgres', 'CREATE TABLE steps (round text, took interval)');

my $renewer = "SELECT pid FROM pg_stat_activity WHERE backend_type = 'sno reservation renewer'";
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($renewer) AS r"),
	'the renewer runs, as a background worker');

# 100 IDs every 0.1 s for 12 s, the longest step recorded: the reservation reaches 10 s ahead.
sub generate_slowly
{
	my ($round) = @_;
	# The first ID writes a reservation: from a session whose writes are not slow.
	$node->safe_psql('postgres', 'SELECT sno_generate(1)');
	$node->safe_psql(
		'postgres', qq{
		SET sno.test_state_write_delay_ms = 2000;
		DO \$\$ DECLARE started timestamptz; BEGIN
			FOR i IN 1..120 LOOP
				started := clock_timestamp();
				PERFORM sno_generate(1) FROM generate_series(1, 100);
				INSERT INTO steps VALUES ('$round', clock_timestamp() - started);
				PERFORM pg_sleep(0.1);
			END LOOP;
		END \$\$});
	return $node->safe_psql('postgres',
		"SELECT max(took) < interval '1.5 s' FROM steps WHERE round = '$round'");
}

is(generate_slowly('renewer'), 't', 'with the renewer, no caller waits for a renewal');

$node->append_conf('postgresql.conf', 'sno.test_renewer_off = on');
reload_and_wait($node);
sleep(1);    # the renewer's next look reads the reload
is(generate_slowly('callers'), 'f', 'with the renewer off, a caller renews, and waits for the disk');

$node->append_conf('postgresql.conf', 'sno.test_renewer_off = off');
reload_and_wait($node);
my $terminated = $node->safe_psql('postgres', $renewer);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($terminated)");
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($renewer) AS r WHERE pid <> $terminated"),
	'a terminated renewer is back by itself');

done_testing();
