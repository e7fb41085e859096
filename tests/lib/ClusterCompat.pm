# PostgreSQL's TAP modules of 18 drive this suite's servers of 15 to 18, and 19's own (its
# packages carry them) drive the tests run against 19, whose old clusters (pg_upgrade) and
# publishers (logical replication across majors) are older servers too: newer modules drive
# older installations, as in PostgreSQL's own cross-version upgrade tests
# (scripts/get-postgresql.sh explains where they come from). Where the modules'
# PostgreSQL::Test::Cluster writes a setting that an older server does not know, this takes it
# out again for that server, the way Cluster.pm's own PostgreSQL::Test::Cluster::V_NN packages
# adapt it to majors before 12. Every test loads it, through SnoTest or by itself.
package ClusterCompat;

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;

# Settings that init() writes, and the first major that knows each.
my %FIRST_MAJOR_OF = (autovacuum_worker_slots => 18);

my $init = \&PostgreSQL::Test::Cluster::init;
{
	no warnings 'redefine';
	*PostgreSQL::Test::Cluster::init = sub {
		my ($self, %params) = @_;
		# tests/tap.sh's INITDB_TEMPLATE is an initdb of the installation under test: a node of
		# another installation (an old cluster, a publisher of another major) runs its own.
		$params{force_initdb} = 1 if defined $self->install_path;
		$init->($self, %params);
		for my $setting (sort keys %FIRST_MAJOR_OF)
		{
			$self->adjust_conf('postgresql.conf', $setting, undef)
			  if $self->pg_version < $FIRST_MAJOR_OF{$setting};
		}
		return;
	};
}

1;
