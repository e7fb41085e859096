# With sno.partition_source = 'citus' nobody chooses a partition: each node takes its Citus group
# (plus sno.partition_offset), and no ID repeats across a coordinator, two workers, a standby of
# one worker that is promoted, a worker added later and a worker removed and added again.
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
