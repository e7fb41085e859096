# With sno.partition_source = 'citus' nobody chooses a partition: each node takes its Citus group
# (plus sno.partition_offset), and no ID repeats across a coordinator, two workers, a standby of
# one worker that is promoted, a worker added later and a worker removed and added again. And what
# a split brain (a standby promoted while its primary still generates) does to their IDs.
#
# Why: a partition left to a person is the one way sno repeats IDs across servers (issue 32). Citus
# gives every node a group id that it never gives again, and a primary and its standbys share
# theirs. But a worker the coordinator has not added yet reads group 0, as the coordinator does:
# sno must refuse until Citus confirms the group, never guess. And a restart or a promotion must
# not wait for a database to be read: the group in use is in the state file and the WAL.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnoCitus;
use SnoTest;
use Test::More;
use Time::HiRes qw(usleep);

my $missing = citus_missing();
plan skip_all => $missing if defined $missing;

# Rounds every second: a group is taken within about a second of Citus confirming it.
my %from_citus = ('sno.partition_source' => 'citus', 'sno.citus_watch_interval' => 1);
my $coordinator = citus_node('citus_coordinator', undef, settings => \%from_citus);
my $worker1 = citus_node('citus_worker1', undef, settings => \%from_citus, streaming => 1);
my $worker2 = citus_node('citus_worker2', undef, settings => \%from_citus);
$_->safe_psql('postgres', 'CREATE EXTENSION sno') for $coordinator, $worker1, $worker2;
# A standby of worker1 from before any group is known: the group reaches it through the WAL only.
$worker1->backup('before_groups');

sub on_coordinator { return $coordinator->safe_psql('postgres', $_[0]); }

sub add_worker
{
	my ($worker) = @_;
	# Citus refuses to add a node while a node with metadata is out of sync ("is a metadata node,
	# but is out of sync"), as one is for a moment after citus_update_node: its maintenance
	# daemon syncs it in the background.
	$coordinator->poll_query_until('postgres',
		'SELECT coalesce(bool_and(metadatasynced), true) FROM pg_dist_node WHERE hasmetadata AND isactive')
	  or die 'Citus did not sync the metadata of its nodes';
	on_coordinator("SELECT citus_add_node('" . $worker->host . "', " . $worker->port . ')');
	return on_coordinator(
		'SELECT groupid FROM pg_dist_node WHERE nodeport = ' . $worker->port);
}

# The error of sno_generate once the watch has read the node's databases.
sub waiting_error
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'sno partition watch'})
	  or die 'no partition watch';
	my $error;
	for (1 .. 100)
	{
		$error = error_of($node, 'SELECT sno_generate(1)');
		last if $error =~ /in database/;
		usleep(100_000);
	}
	return $error;
}

# The partition of a new ID, once the node generates (polled: a group is taken at the next round).
sub generated_partition
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		q{SELECT sno_partition(sno_generate(1)) IS NOT NULL}, 't')
	  or return undef;
	return $node->safe_psql('postgres', 'SELECT sno_partition(sno_generate(1))');
}

my $unconfirmed = qr/^ERROR:  F0000: sno cannot generate IDs: sno.partition_source = 'citus' and this node's Citus group is not known yet: in database "postgres" its group is 0 and pg_dist_node lists no active node: a worker that the coordinator has not added yet reads the same as a coordinator without workers\n/;
like(waiting_error($worker1), $unconfirmed,
	'a worker not yet added refuses: group 0 unconfirmed, named with its database');
like(waiting_error($coordinator), $unconfirmed,
	'so does a coordinator without workers: the two cannot be told apart');
like(error_of($worker1, 'SELECT sno_generate(1)'),
	qr/\nHINT:  Generation starts by itself, within a second or two, once the group is known/,
	'the hint says generation starts on its own');
is($worker1->safe_psql('postgres', q{SELECT count(*) FROM sno_partitions() WHERE generator = 'sno_generate'}),
	'0', 'sno_partitions() claims no live partition meanwhile');

my %group;
$group{$_->name} = add_worker($_) for $worker1, $worker2;
$group{ $coordinator->name } = 0;
isnt($group{ $worker1->name }, $group{ $worker2->name }, 'Citus gave the workers groups of their own');
for my $node ($coordinator, $worker1, $worker2)
{
	is(generated_partition($node), $group{ $node->name },
		$node->name . ' generates with its group as the partition, nobody having set one');
}
like(slurp_file($worker1->logfile),
	qr/sno: using partition $group{citus_worker1} from Citus group $group{citus_worker1} \(database "postgres"\)/,
	'the log says where the partition came from');

# Every node at once: no ID repeats (each node's IDs are in order of their own, and the
# partitions differ).
my %seen;
my $repeats = 0;
for my $node ($coordinator, $worker1, $worker2)
{
	$repeats += $seen{$_}++ ? 1 : 0 for @{ generated_ids($node, 20_000) };
}
is($repeats, 0, '60,000 IDs from three nodes, none repeated');

# Recorded: in the state file, and so in the WAL, before any ID with the group was returned.
like(slurp_file($worker2->data_dir . '/sno_generator.state'),
	qr/^citus_group=$group{citus_worker2}$/m, 'the state file records the group');
$worker2->restart;
is($worker2->safe_psql('postgres', 'SELECT sno_partition(sno_generate(1))'),
	$group{citus_worker2}, 'after a restart, the first call generates with the group');
like(slurp_file($worker2->logfile),
	qr/sno: using partition $group{citus_worker2} from Citus group $group{citus_worker2}, as sno_generator.state records/,
	'taken from the state file at start-up, before any database is read');

# A standby of worker1, from the backup taken before any group: it learns the group by replay.
my $standby = PostgreSQL::Test::Cluster->new('citus_worker1_standby');
$standby->init_from_backup($worker1, 'before_groups', has_streaming => 1);
# The key Citus made for SSL: PostgreSQL refuses it with the group access the backup gave it.
chmod 0600, $standby->data_dir . '/server.key';
$standby->start;
$repeats += $seen{$_}++ ? 1 : 0 for @{ generated_ids($worker1, 20_000) };
$worker1->wait_for_catchup($standby);
like(slurp_file($standby->data_dir . '/sno_generator.state'),
	qr/^citus_group=$group{citus_worker1}$/m, 'the standby recorded its primary\'s group from the WAL');
# A split brain: another standby of worker1 promoted while worker1 is still up and taking writes
# (a failover that did not fence the old primary). Citus's groups cannot tell the two apart, so
# both generate with worker1's group; docs/citus.md says exactly what that does to their IDs and
# what the watch reports, and this shows it.
$repeats += $seen{$_}++ ? 1 : 0 for @{ generated_ids($worker1, 20_000) };
$worker1->backup('before_split');
my $split = PostgreSQL::Test::Cluster->new('citus_worker1_split');
$split->init_from_backup($worker1, 'before_split', has_streaming => 1);
chmod 0600, $split->data_dir . '/server.key';
$split->start;
$worker1->wait_for_catchup($split);
my $before_split =
  $worker1->safe_psql('postgres', 'SELECT max(sno_generate(1)) FROM generate_series(1, 10)');
$worker1->wait_for_catchup($split);
$split->promote;
is($split->safe_psql('postgres', 'SELECT sno_partition(sno_generate(1))'),
	$group{citus_worker1}, 'split brain: the standby promoted beside its primary takes the same group');
# Both at once, as the application's writes on each side would; the IDs each side made.
sub split_brain_ids
{
	my @runs = map {
		psql_start($_, 'COPY (SELECT sno_generate(1) FROM generate_series(1, 100000)) TO STDOUT')
	} $worker1, $split;
	psql_finish($_) or die 'a split-brain generator failed' for @runs;
	return map { [ split /\n/, $_->{out} ] } @runs;
}

# How many IDs of the second list are in the first.
sub shared_ids
{
	my ($old_side, $new_side) = @_;
	my %old_side = map { $_ => 1 } @$old_side;
	return scalar grep { $old_side{$_} } @$new_side;
}

# An ID's tick-tock bit, from its text: the lowest bit of its eighth character (SPEC.md section 2).
sub sno_tick_tock_of
{
	return index('23456789abcdefghijklmnopqrstuvwx', substr($_[0], 7, 1)) & 1;
}

# The tick-tock bits a list of IDs uses, as a string ("0", "1" or "01").
sub tick_tocks_of
{
	my ($ids) = @_;
	my %bits = map { sno_tick_tock_of($_) => 1 } @$ids;
	return join '', sort keys %bits;
}

my ($old_side, $new_side) = split_brain_ids();
is(scalar(grep { $seen{$_} } @$new_side), 0,
	'split brain: none of the IDs worker1 made before the promotion repeats: they were replayed');
ok((sort @$new_side)[0] gt $before_split,
	'the promoted side starts after the last ID whose reservation it replayed');
# Its clock is behind that reservation (about 10 s ahead of worker1's clock), so it continues in
# the other tick-tock timeline, as after a crash restart: for now the two sides differ there.
isnt(tick_tocks_of($new_side), tick_tocks_of($old_side),
	'the promoted side generates in the other tick-tock timeline');
is(shared_ids($old_side, $new_side), 0, 'so, for now, no ID of one side is one of the other');
$repeats += $seen{$_}++ ? 1 : 0 for @$old_side;
# Until something flips one of them: here the old primary crashes (kill -9) and restarts, its
# clock behind its own reservation. Both then make IDs in one timeline, in the same 4 ms units,
# with the same partition and sequences from the same range.
kill9_server($worker1);
$worker1->start;
($old_side, $new_side) = split_brain_ids();
is(tick_tocks_of($old_side), tick_tocks_of($new_side),
	'after the old primary\'s crash and restart, both sides generate in one tick-tock timeline');
my $shared = shared_ids($old_side, $new_side);
# IDs repeat where the two runs met in one 4 ms unit; a loaded machine may have run them one after
# the other, so up to two more tries.
for (1 .. 2)
{
	last if $shared > 0;
	$shared = shared_ids(split_brain_ids());
}
ok($shared > 0, "and IDs made on both sides at once repeat ($shared of 100,000 the same)");
$seen{$_}++ for @$old_side;
# What the watch reports: the promoted side is no node of Citus's, so no clash is seen; the
# coordinator lists worker1 and not it.
my $listed = on_coordinator(q{SELECT string_agg(nodeport::text, ',' ORDER BY nodeport)
	FROM sno_check_partitions() WHERE "partition" = } . $group{citus_worker1});
is($listed, $worker1->port, 'sno_check_partitions() lists the old primary only, and raises nothing');
is(on_coordinator('SELECT clashes FROM sno_partition_watch()'), '0', 'and the watch sees no clash');
$split->stop('immediate');

$worker1->stop('immediate');
$standby->promote;
# At once: the watch on the promoted server need not have read anything.
is($standby->safe_psql('postgres', 'SELECT sno_partition(sno_generate(1))'),
	$group{citus_worker1}, 'the promoted standby generates at once with its primary\'s group');
like(slurp_file($standby->logfile),
	qr/sno: using partition $group{citus_worker1} from Citus group $group{citus_worker1}, as the primary's WAL records/,
	'taken from the WAL');
is(log_count($standby, '(database "postgres")'), 0, 'not from reading the metadata');
$repeats += $seen{$_}++ ? 1 : 0 for @{ generated_ids($standby, 20_000) };
is($repeats, 0, 'none of its IDs repeats one of its primary\'s');
on_coordinator("SELECT citus_update_node(nodeid, '"
	  . $standby->host . "', "
	  . $standby->port
	  . ') FROM pg_dist_node WHERE nodeport = '
	  . $worker1->port);

# A worker added later: its own group, never one given before.
my $worker3 = citus_node('citus_worker3', undef, settings => \%from_citus);
$worker3->safe_psql('postgres', 'CREATE EXTENSION sno');
like(waiting_error($worker3), $unconfirmed, 'a new worker waits');
$group{citus_worker3} = add_worker($worker3);
is(generated_partition($worker3), $group{citus_worker3}, 'and takes the group it is given');
ok(!grep({ $_ ne 'citus_worker3' && $group{$_} == $group{citus_worker3} } keys %group),
	'a group no other node has had');

# worker2 removed and added again: Citus gives it a new group, and sno takes it.
my $offset = -s $worker2->logfile;
on_coordinator('SELECT citus_remove_node(' . quoted($worker2->host) . ', ' . $worker2->port . ')');
my $old_group = $group{citus_worker2};
$group{citus_worker2} = add_worker($worker2);
isnt($group{citus_worker2}, $old_group, 'Citus gave it a new group');
$worker2->poll_query_until('postgres',
	"SELECT sno_partition(sno_generate(1)) = $group{citus_worker2}")
  or die 'worker2 never took its new group';
is(log_count($worker2, "sno: Citus group $old_group became $group{citus_worker2}", $offset),
	1, 'it took the new group, and said so');
$repeats += $seen{$_}++ ? 1 : 0 for @{ generated_ids($worker2, 20_000) };
is($repeats, 0, 'no repeats after the group changed');

# A group that the offset puts beyond partition 65535 is refused, not wrapped.
$worker3->append_conf('postgresql.conf', 'sno.partition_offset = 65535');
$worker3->restart;
is(error_of($worker3, 'SELECT sno_generate(1)') =~ s/\nDETAIL.*//sr,
	"ERROR:  F0000: sno cannot generate IDs: Citus group $group{citus_worker3} plus sno.partition_offset 65535 is beyond partition 65535",
	'a group beyond partition 65535 with the offset is refused');

sub quoted { return "'" . ($_[0] =~ s/'/''/gr) . "'"; }

done_testing();
