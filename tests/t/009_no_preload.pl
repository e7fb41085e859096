# sno without shared_preload_libraries.
#
# Why: the type must keep working (existing data stays readable, the extension can be created);
# only generation needs the shared memory, and it must say how to get it.
use strict;
use warnings;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $node = sno_node('no_preload', ids => 1);
generate_into($node, 'preloaded', 100) or die;
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;

is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'the server runs without preloading');
# The error names the function called, and the hint keeps the libraries already preloaded.
sub refused
{
	my ($function) = @_;
	return "ERROR:  55000: $function requires sno to be loaded via shared_preload_libraries\n"
	  . "HINT:  Add sno to the libraries listed in shared_preload_libraries (postgresql.conf), "
	  . 'keeping those already there, and restart the server.';
}
my $refused = refused('sno_generate');
is(error_of($node, 'SELECT sno_generate()'), $refused,
	'sno_generate -> 55000 with the message and hint');
is(error_of($node, 'SELECT * FROM sno_generator_stats()'), refused('sno_generator_stats'),
	'sno_generator_stats names itself');
is(error_of($node, "SELECT sno_generate_at(1, now())"), refused('sno_generate_at'),
	'sno_generate_at names itself');
is($node->safe_psql('postgres', "SELECT '$SAMPLE'::sno::text"), $SAMPLE, "'$SAMPLE'::sno still works");
is($node->safe_psql('postgres', "SELECT count(*) || ':' || count(DISTINCT id::text) FROM ids"),
	'100:100', 'the 100 existing IDs are readable');

$node->safe_psql('postgres', 'CREATE DATABASE nopreload');
my ($ret, $out, $err) = $node->psql('nopreload', 'CREATE EXTENSION sno');
is($ret . messages($err), '0', 'CREATE EXTENSION sno works without preloading');
is(error_of($node, 'SELECT sno_generate()', dbname => 'nopreload'),
	$refused, '... and sno_generate there -> 55000');

done_testing();
