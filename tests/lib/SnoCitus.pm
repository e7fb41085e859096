# Helpers of the Citus TAP tests (tests/t/03*_citus*.pl), used beside SnoTest's. Citus is
# AGPL-licensed: it is only built (../shared/tools/citus-build.sh, which scripts/setup.sh
# --tests runs) and used by these tests, never linked into or shipped with sno.
#
#   citus_missing()                 why the Citus scenario cannot run with this PostgreSQL
#                                   (PG_CONFIG): a major Citus does not support; undef if it
#                                   can; dies if Citus supports the major but is not installed
#   citus_node($name, $partition, %options)
#                                   a started node with citus and sno preloaded, sno.partition
#                                   $partition (none if undef), wal_level logical, CREATE
#                                   EXTENSION citus done. Options: settings => { name => value }
#                                   more lines for postgresql.conf; streaming => 1 a primary a
#                                   standby can stream from
package SnoCitus;

use strict;
use warnings;

use Exporter 'import';
use SnoTest;

our @EXPORT = qw(citus_missing citus_node);

# The Citus that ../shared/tools/citus-build.sh builds for each major (scripts/setup.sh --tests
# runs it): 13.2.2 for PostgreSQL 15, 14.0.1 for 16, 17 and 18.
sub citus_missing
{
	my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
	my ($major) = `$pg_config --version` =~ /PostgreSQL (\d+)/
	  or return "cannot run $pg_config";
	# Citus 13.2.2 on 15, 14.0.1 on 16 to 18 (scripts/build-citus.sh); none runs on 19.
	return "no released Citus supports PostgreSQL $major"
	  if $major < 15 || $major > 18;
	my $pkglibdir = `$pg_config --pkglibdir`;
	chomp $pkglibdir;
	# A major Citus supports is tested with it: missing, it fails the test rather than skip it.
	die "Citus is not installed for PostgreSQL $major (no $pkglibdir/citus.so; "
	  . "scripts/setup.sh --tests builds it with ../shared/tools/citus-build.sh)\n"
	  unless -f "$pkglibdir/citus.so";
	return undef;
}

# Citus must come first in shared_preload_libraries. Shard moves with logical replication need
# wal_level = logical and WAL senders (Cluster.pm sets none). Nodes reach each other on the
# socket directory that Cluster.pm gives all nodes of a test (libpq takes a directory as a host
# name).
sub citus_node
{
	my ($name, $partition, %options) = @_;
	my $node = sno_node(
		$name,
		preload   => 0,
		extension => 0,
		streaming => $options{streaming},
		settings  => {
			shared_preload_libraries => 'citus,sno',
			defined $partition ? ('sno.partition' => $partition) : (),
			wal_level             => 'logical',
			max_wal_senders       => 10,
			max_replication_slots => 10,
			max_connections       => 100,
			'citus.shard_count'   => 8,
			%{ $options{settings} // {} },
		});
	# How Citus reaches this node itself (shard moves connect back to it): its socket directory,
	# since it listens on no TCP port.
	set_settings($node, 'citus.local_hostname' => $node->host);
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

1;
