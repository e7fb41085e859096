# Fuzzing: random SQL from sqlsmith, then random values at every input sno has, against a
# database rich in sno: tables, every index kind that takes sno (btree, hash, BRIN on the type;
# GiST and SP-GiST on a range of it, GIN on an array of it; partial and expression indexes over
# sno's functions), partitions by sno range, by hash of sno and by a decoded part, views over
# sno_decode, sno_time, sno_min and the rest.
#
# Why: nothing a database role writes may crash PostgreSQL or make sno fail with an internal
# error. The fuzzing runs as a role without privileges beyond its tables, as an attacker would,
# with plans forced parallel so that sno's functions also run in parallel workers. On a
# PostgreSQL built with --enable-cassert (scripts/build-postgresql.sh 18 --cassert), the
# server's assertions also check what sno does with memory, locks and interrupts.
#
# It fails on: any server process terminated by a signal or an assertion (TRAP) in the log, a
# postmaster that is not up at the end, an internal error (SQLSTATE class XX) from sno's inputs,
# a value that does not survive its round trip, and an index amcheck finds corrupt.
#
# Environment (defaults in brackets):
#   SNO_FUZZ_QUERIES  how many queries sqlsmith generates, in all [5000]; 0 skips sqlsmith
#   SNO_FUZZ_SECONDS  the most sqlsmith may run, in seconds [75]
#   SNO_FUZZ_CLIENTS  how many sqlsmith clients run at once, sharing the generator [2]
#   SNO_FUZZ_SEED     the first client's seed (the next one's is one more) and the random
#                     inputs' [1]
#   SNO_FUZZ_ROUNDS   random values per input of sno [2000]
# Needs sqlsmith (Debian: apt-get install sqlsmith).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Utils;
use SnoTest;
use Test::More;

my $queries = $ENV{SNO_FUZZ_QUERIES} // 5000;
my $seconds = $ENV{SNO_FUZZ_SECONDS} // 75;
my $seed    = $ENV{SNO_FUZZ_SEED}    // 1;
my $rounds  = $ENV{SNO_FUZZ_ROUNDS}  // 2000;
my $clients = $ENV{SNO_FUZZ_CLIENTS} // 2;

my $sqlsmith_version = `sqlsmith --version 2>&1`;
die "sqlsmith is not installed (Debian: apt-get install sqlsmith)\n"
  if $queries > 0 && $? != 0;

my $node = sno_node(
	'fuzz',
	settings => {
		# The postmaster's LOG lines (a child terminated by a signal, with the query it ran) and
		# FATAL and PANIC stay; the thousands of ERRORs that random SQL earns do not.
		log_min_messages        => 'log',
		log_min_error_statement => 'panic',
		log_statement           => 'none',
		max_worker_processes    => 8,
		max_parallel_workers    => 4,
	});
my $postmaster = $node->{_pid};
create_schema($node);
my %rows = row_counts($node);

my $log_offset = -s $node->logfile;

SKIP:
{
	skip 'SNO_FUZZ_QUERIES=0', 3 unless $queries > 0;
	chomp $sqlsmith_version;
	note "$sqlsmith_version: up to $queries queries, $seconds s, seed $seed";
	my @reports = run_sqlsmith($node);
	my @ran = map { (/^queries: (\d+)$/mg)[-1] } @reports;
	ok(@ran == $clients, "each of the $clients sqlsmith clients ran and reported")
	  or diag "sqlsmith's output ends with:\n" . join("\n", map { substr($_, -2000) } @reports);
	# Each client's last report (sqlsmith reports every 800 queries, counting from the start).
	my %errors;
	for my $report (@reports)
	{
		my $last = substr($report, rindex($report, "\nqueries: ") + 1);
		$errors{$2} += $1 while $last =~ /^(\d+)\t(.*)$/mg;
	}
	note "sqlsmith ran " . join(' + ', @ran) . " queries; their errors:\n"
	  . join("\n", map { "$errors{$_}\t$_" } sort { $errors{$b} <=> $errors{$a} || $a cmp $b } keys %errors);
	is(crash_lines($node, \$log_offset), '', 'sqlsmith: no server process crashed or failed an assertion');
	is_deeply({ row_counts($node) }, \%rows,
		'every table has the rows it had (sqlsmith rolls each statement back)');
}

my $outcomes = fuzz_inputs($node);
note "random inputs, by outcome:\n$outcomes";
is(crash_lines($node, \$log_offset), '', 'random inputs: no server process crashed or failed an assertion');
is( $node->safe_psql('postgres',
		"SELECT string_agg(format('%s %s: %s', probe, sqlstate, message), E'\\n') FROM fuzz.outcome WHERE sqlstate LIKE 'XX%'"),
	'',
	'no input of sno gives an internal error (XX)');
is( $node->safe_psql('postgres',
		"SELECT string_agg(format('%s: %s', probe, message), E'\\n') FROM fuzz.outcome WHERE sqlstate = 'wrong'"
	),
	'',
	'every accepted input gives the value it stands for (round trips, orders, decoded parts)');
is(fuzz_binary_input($node), '',
	'binary input (COPY FORMAT binary): 10 bytes in, the same 10 bytes out; any other length refused');

is(corrupt_indexes($node), '', 'amcheck finds every btree index on sno intact');
ok(kill(0, $postmaster) && $node->safe_psql('postgres', 'SELECT 1') eq '1',
	'the postmaster that started is still up and answers');
is(crash_lines($node, \$log_offset), '', 'at the end: no server process crashed or failed an assertion');
$node->stop;
done_testing();

# The schema, as the superuser; the role fuzzer gets its tables and nothing else.
sub create_schema
{
	my ($node) = @_;
	$node->safe_psql('postgres', <<'SQL');
CREATE ROLE fuzzer LOGIN;
CREATE SCHEMA fuzz;
GRANT USAGE ON SCHEMA fuzz TO fuzzer;
ALTER ROLE fuzzer SET search_path = fuzz, public;
-- Parallel plans wherever one is possible: sno's functions then run in parallel workers too.
ALTER ROLE fuzzer SET parallel_setup_cost = 0;
ALTER ROLE fuzzer SET parallel_tuple_cost = 0;
ALTER ROLE fuzzer SET min_parallel_table_scan_size = 0;
ALTER ROLE fuzzer SET min_parallel_index_scan_size = 0;
ALTER ROLE fuzzer SET max_parallel_workers_per_gather = 2;
SET search_path = fuzz, public;

CREATE DOMAIN recent_sno AS sno CHECK (VALUE >= sno_min('2020-01-01'));
CREATE TYPE sno_range AS RANGE (subtype = sno);
CREATE TYPE sno_pair AS (first sno, last sno);

-- events: IDs from every 17 minutes of 2024, with all metas, partitions and both tick-tocks,
-- indexed every way sno can be.
CREATE TABLE events (
    id     sno PRIMARY KEY DEFAULT sno_generate(1),
    parent sno,
    kind   int NOT NULL,
    at     timestamptz NOT NULL,
    raw    bytea,
    body   text,
    stamp  sno GENERATED ALWAYS AS (sno_from_parts(at, kind, 0, 0)) STORED
);
INSERT INTO events (id, parent, kind, at, raw, body)
SELECT sno_from_parts(t, i % 256, i % 7, i % 65536, i % 2),
       CASE WHEN i % 5 <> 0 THEN sno_from_parts(t - interval '1 hour', 1, 0, i % 100) END,
       i % 10, t,
       CASE WHEN i % 3 = 0 THEN sno_to_bytea(sno_min(t)) ELSE decode(md5(i::text), 'hex') END,
       md5(i::text)
FROM generate_series(1, 20000) AS i,
     LATERAL (SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '17 minutes' AS t) AS s;
INSERT INTO events (id, kind, at) VALUES
    ('2222222222222222', 0, '2010-01-01'), ('xxxxxxxxxxxxxxxx', 0, '2079-01-01');
CREATE INDEX events_hash ON events USING hash (id);
CREATE INDEX events_brin ON events USING brin (id) WITH (pages_per_range = 4);
CREATE INDEX events_parent ON events (parent DESC NULLS FIRST);
CREATE INDEX events_kind_id ON events (kind, id) INCLUDE (at);
CREATE INDEX events_time ON events (sno_time(id));
CREATE INDEX events_meta_hash ON events USING hash (sno_meta(id));
CREATE INDEX events_parent_time_brin ON events USING brin (sno_time(parent));
CREATE INDEX events_ticked ON events (sno_partition(id), sno_sequence(id)) WHERE sno_tick_tock(id) = 1;
CREATE INDEX events_max ON events (sno_max(at)) WHERE kind < 3;
CREATE INDEX events_late_parent ON events USING hash (parent) WHERE parent > sno_min('2024-03-01');
CREATE INDEX events_bytes ON events ((id::bytea));
CREATE INDEX events_raw ON events USING hash ((sno_to_bytea(parent)));
CREATE INDEX events_cast_time ON events ((id::timestamptz)) WHERE sno_meta(id) BETWEEN 10 AND 20;
CREATE UNIQUE INDEX events_stamp ON events (stamp, id);
CREATE STATISTICS events_kind_parent ON kind, parent FROM events;

-- spans: sno inside a range, an array, a composite and a domain.
CREATE TABLE spans (
    span   sno_range,
    ids    sno[],
    pair   sno_pair,
    marked recent_sno
);
INSERT INTO spans
SELECT sno_range(sno_min(t), sno_max(t + interval '1 hour')),
       ARRAY[sno_min(t), sno_from_parts(t, i % 256, 1, i), sno_max(t)],
       ROW(sno_min(t), sno_max(t))::sno_pair,
       sno_from_parts(t, 2, 3, i)
FROM generate_series(1, 3000) AS i,
     LATERAL (SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '37 minutes' AS t) AS s;
CREATE INDEX spans_gist ON spans USING gist (span);
CREATE INDEX spans_spgist ON spans USING spgist (span);
CREATE INDEX spans_gin ON spans USING gin (ids);
CREATE INDEX spans_pair ON spans (pair);
CREATE INDEX spans_pair_hash ON spans USING hash (pair);
CREATE INDEX spans_marked ON spans (marked);
CREATE TABLE bookings (
    span sno_range,
    EXCLUDE USING gist (span WITH &&)
);
INSERT INTO bookings
SELECT sno_range(sno_min(t), sno_min(t + interval '1 hour'))
FROM generate_series(1, 500) AS i,
     LATERAL (SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour' AS t) AS s;

-- orders: partitioned by ID range (a quarter each), the last quarter by hash of the ID again.
CREATE TABLE orders (
    id       sno NOT NULL,
    customer int,
    total    numeric,
    note     text,
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);
CREATE TABLE orders_2024_q1 PARTITION OF orders
    FOR VALUES FROM (sno_min('2024-01-01')) TO (sno_min('2024-04-01'));
CREATE TABLE orders_2024_q2 PARTITION OF orders
    FOR VALUES FROM (sno_min('2024-04-01')) TO (sno_min('2024-07-01'));
CREATE TABLE orders_2024_q3 PARTITION OF orders
    FOR VALUES FROM (sno_min('2024-07-01')) TO (sno_min('2024-10-01'));
CREATE TABLE orders_2024_q4 PARTITION OF orders
    FOR VALUES FROM (sno_min('2024-10-01')) TO (sno_min('2025-01-01')) PARTITION BY HASH (id);
CREATE TABLE orders_2024_q4_h0 PARTITION OF orders_2024_q4 FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE orders_2024_q4_h1 PARTITION OF orders_2024_q4 FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE orders_2024_q4_h2 PARTITION OF orders_2024_q4 FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE TABLE orders_other PARTITION OF orders DEFAULT;
INSERT INTO orders
SELECT sno_from_parts(timestamptz '2023-12-01 00:00:00+00' + i * interval '50 minutes', 4, 0, i % 65536),
       i % 500, i * 1.5, 'order ' || i
FROM generate_series(1, 12000) AS i;
CREATE INDEX orders_brin ON orders USING brin (id);
CREATE INDEX orders_hash ON orders USING hash (id);
CREATE INDEX orders_time ON orders (sno_time(id)) WHERE customer < 100;
CREATE TABLE items (
    id       sno PRIMARY KEY DEFAULT sno_generate(2),
    order_id sno NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    qty      int
);
INSERT INTO items
SELECT sno_from_parts(sno_time(id) + interval '1 second', 5, 0, 1), id, 1 FROM orders WHERE customer % 4 = 0;
CREATE INDEX items_order ON items (order_id);

-- by_meta: partitioned by a decoded part of the ID; sessions: by hash of the ID.
CREATE TABLE by_meta (id sno NOT NULL, v int) PARTITION BY LIST (sno_meta(id));
CREATE TABLE by_meta_low PARTITION OF by_meta FOR VALUES IN (0, 1);
CREATE TABLE by_meta_two PARTITION OF by_meta FOR VALUES IN (2);
CREATE TABLE by_meta_rest PARTITION OF by_meta DEFAULT;
INSERT INTO by_meta SELECT id, kind FROM events WHERE kind < 5;
CREATE INDEX by_meta_id ON by_meta (id);
CREATE TABLE sessions (id sno, user_id int) PARTITION BY HASH (id);
CREATE TABLE sessions_0 PARTITION OF sessions FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE sessions_1 PARTITION OF sessions FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO sessions SELECT parent, kind FROM events;
CREATE INDEX sessions_brin ON sessions USING brin (id);

CREATE VIEW event_parts AS
    SELECT e.id, d."time", d.tick_tock, d.meta, d."partition", d."sequence"
    FROM events AS e, sno_decode(e.id) AS d;
CREATE VIEW event_times AS
    SELECT id, sno_time(id) AS made, id::timestamptz AS made_cast, sno_min(at) AS low,
           sno_max(at) AS high, id::bytea AS bytes, sno_from_bytea(sno_to_bytea(parent)) AS parent_again,
           id::text AS text, upper(id::text)::sno AS from_upper
    FROM events;
CREATE VIEW daily AS
    SELECT date_trunc('day', sno_time(id)) AS day, min(id) AS first, max(id) AS last, count(*) AS n
    FROM orders GROUP BY 1;
CREATE VIEW fresh AS SELECT sno_generate(3) AS id, sno_tick_tock(sno_generate(3)) AS tick;
CREATE VIEW windowed AS
    SELECT id, lag(id) OVER (ORDER BY id) AS previous,
           row_number() OVER (PARTITION BY sno_meta(id) ORDER BY id DESC) AS rank
    FROM events;
CREATE VIEW recent_orders AS
    SELECT * FROM orders WHERE id >= sno_min('2024-06-01') WITH CHECK OPTION;
CREATE VIEW span_bounds AS
    SELECT lower(span) AS low, upper(span) AS high, sno_time(upper(span)) - sno_time(lower(span)) AS length,
           (pair).first, ids[2] AS second
    FROM spans;

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA fuzz TO fuzzer;
ANALYZE;
SQL
	return;
}

# Rows per table of the schema fuzz.
sub row_counts
{
	my ($node) = @_;
	my $counts = $node->safe_psql('postgres', q{
		SELECT string_agg(format('%s=%s', c.relname,
		           (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM fuzz.%I', c.relname), false, true, '')))[1]),
		       ' ' ORDER BY c.relname)
		FROM pg_class AS c
		WHERE c.relnamespace = 'fuzz'::regnamespace AND c.relkind IN ('r', 'p')});
	return map { split /=/ } split / /, $counts;
}

# sqlsmith as fuzzer, bounded in queries and in time; returns its report (stderr). A timeout
# interrupts it (SIGINT) so that it still reports.
sub run_sqlsmith
{
	my ($node) = @_;
	my $target = $node->connstr('postgres') . ' user=fuzzer';
	my @runs;
	for my $client (1 .. $clients)
	{
		my $output = "$PostgreSQL::Test::Utils::log_path/sqlsmith_$client.log";
		my $client_seed = $seed + $client - 1;
		push @runs, [
			$output,
			IPC::Run::start(
				[
					'timeout', '--signal=INT', '--kill-after=10', $seconds,
					'sqlsmith', "--target=$target", "--seed=$client_seed",
					'--max-queries=' . int(($queries + $clients - 1) / $clients),
					'--exclude-catalog', '--verbose'
				],
				'<', \undef, '>', '/dev/null', '2>', $output)
		];
	}
	my @reports;
	for my $run (@runs)
	{
		my ($output, $handle) = @$run;
		$handle->finish;
		note "sqlsmith's exit status: " . $handle->full_result(0);
		push @reports, slurp_file($output);
	}
	return @reports;
}

# Random values (seeded) at every input of sno, as fuzzer; each outcome, by SQLSTATE, goes into
# fuzz.outcome ('00000' accepted, 'wrong' a value that is not what it should be). Returns a
# summary: probe, SQLSTATE, how many.
sub fuzz_inputs
{
	my ($node) = @_;
	$node->safe_psql('postgres', <<'SQL');
CREATE TABLE fuzz.outcome (probe text, sqlstate text, message text);
GRANT INSERT ON fuzz.outcome TO fuzzer;

-- A text of up to 24 characters: mostly near the format (16 symbols, some uppercase), else
-- bytea's hex form, else anything.
CREATE FUNCTION fuzz.random_text() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(string_agg(substr(alphabet, 1 + floor(random() * length(alphabet))::int, 1), ''), '')
    FROM (SELECT CASE floor(random() * 4)::int
                     WHEN 0 THEN '23456789abcdefghijklmnopqrstuvwx'
                     WHEN 1 THEN '23456789abcdefghijklmnopqrstuvwxABCDEFXYZ'
                     WHEN 2 THEN '0123456789abcdefABCDEFgx'
                     ELSE E'0123456789abcxyzAXYZ \\\t-é€\u00ad'
                 END AS alphabet,
                 CASE WHEN random() < 0.7 THEN 16 ELSE floor(random() * 25)::int END AS len) AS p,
         generate_series(1, p.len)
$$;
CREATE FUNCTION fuzz.random_bytes(len int) RETURNS bytea LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(decode(string_agg(lpad(to_hex(floor(random() * 256)::int), 2, '0'), ''), 'hex'), '')
    FROM generate_series(1, len)
$$;
-- An integer: half the time one that fits every field (meta, partition, sequence), else one at
-- or near the edges of sno's fields and of int, or any.
CREATE FUNCTION fuzz.random_int() RETURNS int LANGUAGE sql VOLATILE AS $$
    SELECT CASE WHEN random() < 0.5 THEN floor(random() * 256)::int
                ELSE (ARRAY[-2147483648, -65536, -1, 0, 1, 255, 256, 65535, 65536, 2147483647,
                            floor(random() * 70000)::int,
                            floor((random() - 0.5) * 4294967295)::int])[1 + floor(random() * 12)::int]
           END
$$;
-- A time in sno's range or near its ends (2010, 2079), or far outside, or infinite.
CREATE FUNCTION fuzz.random_time() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
    SELECT CASE floor(random() * 6)::int
               WHEN 0 THEN timestamptz '2010-01-01 00:00:00+00' + (random() - 0.5) * interval '10 ms'
               WHEN 1 THEN timestamptz '2079-01-01 00:00:00+00' + (random() - 0.5) * interval '400 days'
               WHEN 2 THEN (ARRAY[timestamptz 'infinity', '-infinity', '4713-01-01 00:00:00+00 BC',
                                  '294276-12-31 00:00:00+00', 'epoch'])[1 + floor(random() * 5)::int]
               WHEN 3 THEN to_timestamp((random() - 0.5) * 1e11)
               ELSE timestamptz '2010-01-01 00:00:00+00' + random() * interval '69 years'
           END
$$;

CREATE FUNCTION fuzz.note_outcome(probe text, sqlstate text, message text) RETURNS void
LANGUAGE sql AS $$ INSERT INTO fuzz.outcome VALUES (probe, sqlstate, message) $$;

CREATE FUNCTION fuzz.expect(probe text, fine boolean, what text) RETURNS void
LANGUAGE sql AS $$
    SELECT fuzz.note_outcome(probe, CASE WHEN fine THEN '00000' ELSE 'wrong' END,
                       CASE WHEN fine THEN NULL ELSE what END)
$$;

CREATE FUNCTION fuzz.inputs(rounds int, seed float8) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    soft boolean := current_setting('server_version_num')::int >= 160000;
    t text; b bytea; s sno; s2 sno; at timestamptz; m int; p int; q int; tt int;
    valid boolean;
    d record;
    report text;
BEGIN
    PERFORM setseed(seed);
    FOR i IN 1 .. rounds LOOP
        -- text input (and, from 16 on, the soft-error path of pg_input_is_valid: same verdict)
        t := fuzz.random_text();
        BEGIN
            s := t::sno;
            PERFORM fuzz.expect('text', s::text = lower(t) OR (t ILIKE E'\\\\x%' AND s::bytea = decode(substr(t, 3), 'hex')),
                               format('%L::sno is %s', t, s));
            valid := true;
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome('text', SQLSTATE, SQLERRM);
            valid := false;
        END;
        IF soft THEN
            BEGIN
                EXECUTE 'SELECT pg_input_is_valid($1, ''sno'')' INTO STRICT d USING t;
                PERFORM fuzz.expect('pg_input_is_valid', d.pg_input_is_valid = valid,
                                   format('pg_input_is_valid(%L) is %s, the cast %s', t, d.pg_input_is_valid,
                                          CASE WHEN valid THEN 'accepts it' ELSE 'refuses it' END));
            EXCEPTION WHEN others THEN
                PERFORM fuzz.note_outcome('pg_input_is_valid', SQLSTATE, SQLERRM);
            END;
        END IF;

        -- bytea: 10 bytes most of the time
        b := fuzz.random_bytes(CASE WHEN random() < 0.7 THEN 10 ELSE floor(random() * 13)::int END);
        BEGIN
            s := sno_from_bytea(b);
            PERFORM fuzz.expect('sno_from_bytea', length(b) = 10 AND sno_to_bytea(s) = b AND s::bytea = b,
                               format('sno_from_bytea(%s) is %s', b, s));
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome('sno_from_bytea', SQLSTATE, SQLERRM);
        END;

        -- any 10 bytes: text round trip, order (bytes, text), decoding, rebuilding from the parts
        s := sno_from_bytea(fuzz.random_bytes(10));
        s2 := sno_from_bytea(fuzz.random_bytes(10));
        BEGIN
            PERFORM fuzz.expect('round trips', s::text::sno = s AND upper(s::text)::sno = s
                                              AND ('\x' || encode(s::bytea, 'hex'))::sno = s,
                               format('%s does not survive text', s));
            PERFORM fuzz.expect('order', (s < s2) = (s::bytea < s2::bytea)
                                        AND (s < s2) = (s::text COLLATE "C" < s2::text COLLATE "C")
                                        AND (sno_cmp(s, s2) < 0) = (s < s2) AND (sno_cmp(s, s2) = 0) = (s = s2)
                                        AND (sno_hash(s) = sno_hash(s2)) >= (s = s2)
                                        AND sno_smaller(s, s2) = LEAST(s, s2),
                               format('%s and %s', s, s2));
            d := sno_decode(s);
            PERFORM fuzz.expect('decode', d.meta BETWEEN 0 AND 255 AND d."partition" BETWEEN 0 AND 65535
                                         AND d."sequence" BETWEEN 0 AND 65535 AND d.tick_tock IN (0, 1)
                                         AND d."time" = sno_time(s) AND d."time" = s::timestamptz,
                               format('sno_decode(%s) is %s', s, d));
            BEGIN
                s2 := sno_from_parts(d."time", d.meta, d."partition", d."sequence", d.tick_tock);
                PERFORM fuzz.expect('rebuilt', s2 = s, format('%s rebuilt from %s is %s', s, d, s2));
            EXCEPTION WHEN others THEN
                -- times outside 2010..2079 are refused on the way in
                PERFORM fuzz.note_outcome('rebuilt', SQLSTATE, SQLERRM);
            END;
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome('10 bytes', SQLSTATE, SQLERRM);
        END;

        -- times and parts
        at := fuzz.random_time();
        BEGIN
            s := sno_min(at);
            s2 := sno_max(at);
            PERFORM fuzz.expect('sno_min/sno_max', s <= s2 AND sno_time(s) = sno_time(s2)
                                                  AND sno_time(s) <= at AND at < sno_time(s) + interval '4 ms'
                                                  AND sno_min(sno_time(s)) = s,
                               format('sno_min/sno_max(%s) are %s, %s', at, s, s2));
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome('sno_min/sno_max', SQLSTATE, SQLERRM);
        END;
        m := fuzz.random_int(); p := fuzz.random_int(); q := fuzz.random_int();
        tt := (ARRAY[0, 1, 0, 1, 2, -1])[1 + floor(random() * 6)::int];
        BEGIN
            s := sno_from_parts(at, m, p, q, tt);
            d := sno_decode(s);
            PERFORM fuzz.expect('sno_from_parts', d.meta = m AND d."partition" = p AND d."sequence" = q
                                                 AND d.tick_tock = tt AND d."time" <= at
                                                 AND at < d."time" + interval '4 ms',
                               format('sno_from_parts(%s, %s, %s, %s, %s) decodes as %s', at, m, p, q, tt, d));
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome('sno_from_parts', SQLSTATE, SQLERRM);
        END;

        -- generation
        BEGIN
            s := sno_generate(m);
            PERFORM fuzz.expect('sno_generate', sno_meta(s) = m, format('sno_generate(%s) is %s', m, s));
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome('sno_generate', SQLSTATE, SQLERRM);
        END;
        IF i % 20 = 0 THEN
            BEGIN
                s := sno_generate_at(m % 256, at);
                PERFORM fuzz.expect('sno_generate_at', sno_meta(s) = m % 256, format('sno_generate_at(%s, %s) is %s', m, at, s));
            EXCEPTION WHEN others THEN
                PERFORM fuzz.note_outcome('sno_generate_at', SQLSTATE, SQLERRM);
            END;
        END IF;
    END LOOP;

    -- what reports on the generator and its partitions, once each
    FOREACH report IN ARRAY ARRAY['sno_generator_stats', 'sno_backfill_cursors', 'sno_partitions',
                                  'sno_check_partitions'] LOOP
        BEGIN
            EXECUTE format('SELECT count(*) FROM %I()', report);
            PERFORM fuzz.note_outcome(report, '00000', NULL);
        EXCEPTION WHEN others THEN
            PERFORM fuzz.note_outcome(report, SQLSTATE, SQLERRM);
        END;
    END LOOP;
END
$$;
SQL
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT fuzz.inputs($rounds, 1.0 / ($seed + 1))",
		connstr => $node->connstr('postgres') . ' user=fuzzer');
	ok($ret == 0, 'the random inputs ran to the end') or diag messages($err);
	$node->poll_query_until('postgres', 'SELECT 1', '1') if $ret != 0;    # after a crash
	return $node->safe_psql('postgres', q{
		SELECT string_agg(format('%s %s %s', probe, sqlstate, n), E'\n' ORDER BY probe, sqlstate)
		FROM (SELECT probe, sqlstate, count(*) AS n FROM fuzz.outcome GROUP BY 1, 2) AS o});
}

# Binary input (sno's receive function), which only COPY FORMAT binary and the protocol's binary
# parameters reach: one COPY per value, of random lengths around 10. Returns what went wrong.
sub fuzz_binary_input
{
	my ($node) = @_;
	srand($seed);
	$node->safe_psql('postgres', 'CREATE TABLE fuzz.received (n int, id sno); GRANT INSERT ON fuzz.received TO fuzzer');
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my (@script, %expected);
	for my $n (1 .. 100)
	{
		my $length = rand() < 0.5 ? 10 : int(rand(16));
		my $bytes = join '', map { chr(int(rand(256))) } 1 .. $length;
		my $file = "$dir/$n.copy";
		open my $fh, '>:raw', $file or die "could not write $file: $!";
		print $fh "PGCOPY\n\377\r\n\0", pack('NN', 0, 0),
		  pack('n', 2), pack('N', 4), pack('N', $n), pack('N', $length), $bytes,
		  pack('n', 0xffff);
		close $fh;
		push @script, "\\copy fuzz.received FROM '$file' WITH (FORMAT binary)";
		$expected{$n} = unpack('H*', $bytes) if $length == 10;
	}
	my ($ret, $out, $err) = $node->psql('postgres', join("\n", @script),
		connstr => $node->connstr('postgres') . ' user=fuzzer', on_error_stop => 0, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	my @wrong;
	my %states;
	$states{$_}++ for $err =~ /ERROR:  (\w{5}):/g;
	push @wrong, map { "$_ refusals with SQLSTATE $_" } grep { /^XX/ } keys %states;
	my $refused = 0;
	$refused += $_ for values %states;
	push @wrong, "$refused of 100 COPYs refused, " . (100 - keys %expected) . ' expected'
	  unless $refused == 100 - keys %expected;
	note 'binary input refusals by SQLSTATE: ' . join(', ', map { "$_ $states{$_}" } sort keys %states);
	my %received = split /[|\n]/,
	  $node->safe_psql('postgres', q{SELECT n || '|' || encode(id::bytea, 'hex') FROM fuzz.received});
	push @wrong, 'received ' . join(',', map { "$_=" . ($received{$_} // 'none') } sort keys %expected)
	  unless join(',', map { "$_=$received{$_}" } sort keys %received) eq
	  join(',', map { "$_=$expected{$_}" } sort keys %expected);
	return join "\n", @wrong;
}

# amcheck on every btree index of the schema fuzz (with every heap tuple looked up in it).
sub corrupt_indexes
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS amcheck');
	my ($ret, $out, $err) = $node->psql('postgres', q{
		SELECT bt_index_check(c.oid, true)
		FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_am AS a ON a.oid = c.relam
		WHERE c.relnamespace = 'fuzz'::regnamespace AND a.amname = 'btree' AND c.relkind = 'i'});
	return $ret == 0 ? '' : messages($err);
}

# Lines of the server log after $$offset that tell of a crash (a process terminated by a signal
# or an exception, with the start of the statement it ran; a failed assertion; a PANIC); moves
# $$offset to the end of the log. After a crash, waits until the server takes connections again.
sub crash_lines
{
	my ($node, $offset) = @_;
	my $log = slurp_file($node->logfile, $$offset);
	$$offset += length $log;
	my @lines =
	  map { substr($_, 0, 300) }
	  grep { /terminated by (signal|exception)|was terminated|Failed process was running|TRAP:|PANIC:/ }
	  split /\n/, $log;
	$node->poll_query_until('postgres', 'SELECT 1', '1') if @lines;
	return join "\n", @lines;
}
