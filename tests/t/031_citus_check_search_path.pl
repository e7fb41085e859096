# sno_check_partitions() resolves no name through the caller's search_path, on the coordinator
# or on the nodes it asks.
#
# Why: it used to call format, concat_ws and string_agg unqualified, so in a database where a
# role can create objects in a schema on the caller's search_path (public, where PUBLIC could
# create before PostgreSQL 15 and still can wherever that grant was kept), that role's own
# functions of those names ran with the rights of whoever ran the check: a superuser, usually
# (issue 22). Here an unprivileged role creates them in public on every node, recording each call.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoCitus;
use SnoTest;
use Test::More;

my $missing = citus_missing();
plan skip_all => $missing if defined $missing;

my $coordinator = citus_node('citus_coordinator', 1);
my $worker = citus_node('citus_worker', 2);
my @nodes = ($coordinator, $worker);
$coordinator->safe_psql('postgres',
	"SELECT citus_add_node('" . $worker->host . "', " . $worker->port . ')');
$coordinator->safe_psql('postgres', 'CREATE EXTENSION sno');

is( $coordinator->safe_psql('postgres',
		"SELECT array_to_string(proconfig, ',') FROM pg_proc WHERE proname = 'sno_check_partitions'"),
	'search_path=pg_catalog, pg_temp',
	'sno_check_partitions() runs with search_path = pg_catalog, pg_temp');

# Each node on its own (no DDL propagation): an unprivileged role that may create in public, and a
# database whose search_path puts public first, as some installations do.
for my $node (@nodes)
{
	$node->safe_psql(
		'postgres', q{
		SET citus.enable_ddl_propagation = off;
		CREATE ROLE mallory LOGIN;
		GRANT CREATE ON SCHEMA public TO mallory;
		ALTER DATABASE postgres SET search_path = public, pg_catalog;});
	$node->safe_psql(
		'postgres', q{
		SET citus.enable_ddl_propagation = off;
		CREATE TABLE public.hostile_calls (function text, caller text);
		GRANT INSERT ON public.hostile_calls TO PUBLIC;
		-- Each does what the real one does, and notes who called it.
		CREATE FUNCTION public.format(text, name) RETURNS text LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO public.hostile_calls VALUES ('format', current_user);
			RETURN pg_catalog.format($1, $2);
		END $$;
		CREATE FUNCTION public.concat_ws(text, text, integer, integer, integer) RETURNS text
		LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO public.hostile_calls VALUES ('concat_ws', current_user);
			RETURN pg_catalog.concat_ws($1, $2, $3, $4, $5);
		END $$;
		CREATE FUNCTION public.hostile_agg(state text, value text, separator text) RETURNS text
		LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO public.hostile_calls VALUES ('string_agg', current_user);
			RETURN CASE WHEN state IS NULL THEN value ELSE state || separator || value END;
		END $$;
		CREATE AGGREGATE public.string_agg(text, text) (SFUNC = public.hostile_agg, STYPE = text);},
		extra_params => [ '-U', 'mallory' ]);
}

is( $coordinator->safe_psql('postgres',
		q{SELECT pg_catalog.string_agg(concat_ws(' ', coalesce(nodeid::text, 'coordinator'), generator, "partition"), ', '
		                    ORDER BY nodeid NULLS FIRST)
		  FROM sno_check_partitions()}),
	'coordinator sno_generate 1, 1 sno_generate 2',
	'the check gives the same answer with the hostile functions in place');
is(join(' | ', map { $_->safe_psql('postgres', 'SELECT count(*) FROM public.hostile_calls') } @nodes),
	'0 | 0', 'the check called none of them, on the coordinator or the worker');
# The trap is set: the same call in a session of the caller's gets the hostile format.
is($coordinator->safe_psql('postgres', q{SELECT format('%s', 'x'::name)}), 'x', 'format(text, name) ...');
is($coordinator->safe_psql('postgres', q{SELECT function || ' ' || caller FROM public.hostile_calls}),
	'format postgres', "... is the hostile one in the caller's own session, run with the caller's rights");

done_testing();
