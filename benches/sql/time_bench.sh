#!/usr/bin/env bash
# Benchmarks time predicates on a sno key (docs/time.md): how long a window of
# rows takes to find when written
#   natural, before   sno_time(id) >= a AND sno_time(id) < b, sno.rewrite_time_predicates off
#                     (what PostgreSQL does without sno's help: a scan of the table),
#   natural           the same, rewritten into a range of id (the default),
#   cast              id::timestamptz >= a AND id::timestamptz < b,
#   hand-written      id >= sno_min(a) AND id < sno_min(b),
#   timestamptz column  at >= a AND at < b, on a column with its own btree,
# for three windows: the last hour (a = bench_now() - interval '1 hour', no upper bound: a
# stable expression like now() - interval '1 hour', but one that stays at the time the table
# was loaded, so the rows of the window stay the same from round to round), one day in the middle of the table, and one
# 4 ms unit. The goal: natural within 1.2x of hand-written at
# every window. Each timing includes planning (the rewrite happens there): a statement run by
# EXECUTE in PL/pgSQL, repeated until it has taken at least 200 ms, per-run median of REPS.
# Everything happens in ONE run on ONE throwaway cluster, rounds interleaved over the forms.
#
# Second part (`cases`, or CASES=1): what the rewrite does to the cases of issue 31 (the queries
# it must not slow down, and the natural forms it must make fast), each measured three ways in
# the same run: the rewrite off, the rewrite on (the default), and hand-written on id:
#   equality joins whose inner side has no index on id (200 x 5,000 and 2,000 x 5,000 rows),
#     EXISTS and NOT EXISTS on `=`: the hand form is the same query, the goal on = off;
#   a table partitioned BY RANGE ((sno_time(id))), 241 one-minute partitions, a one-minute
#     window: hand-written adds the same window on id (pruning and the index on id);
#   on a CASE_ROWS-row table (one ID a second, a primary key on id): a view exposing
#     sno_time(id) AS created_at (the last hour), a CTE (an hour), sno_time(id) IN (a, b),
#     = ANY(array of 5), an RLS policy on sno_time(id) read by a role that is not the owner,
#     HAVING on the grouped time, and ORDER BY sno_time(id) DESC LIMIT 10 (hand: ORDER BY id
#     DESC): goal on / hand-written <= 1.2x and on / off <= 1.
# Each timing includes planning (as above); the rows of each form are compared once (a digest
# of all their rows). The result column is the count the query returns (the ORDER BY: rows).
#
# Needs: a release build of sno installed into PG_CONFIG's PostgreSQL (default: this checkout's 15;
# scripts/install.sh MAJOR), run as root (the server runs as the `postgres` user).
#
# Usage: benches/sql/time_bench.sh                   # 10,000,000 rows over a year up to now
#        ROWS=2000000 SPACING='3 s' benches/sql/time_bench.sh   # the issue's table (#25)
#        benches/sql/time_bench.sh cases        # the second part only (or CASES=1)
# Environment: ROWS (default 10000000), SPACING (default: a year / ROWS), REPS (default 9),
# CASE_ROWS (the second part's table, default 200000), BENCH_DIR (default /tmp/sno-bench-time).
set -euo pipefail

ROWS=${ROWS:-10000000}
REPS=${REPS:-9}
SPACING=${SPACING:-}
DIR=${BENCH_DIR:-/tmp/sno-bench-time}
CASE_ROWS=${CASE_ROWS:-200000}
PART=${1:-}
[[ -z $PART && ${CASES:-} =~ ^(1|yes|on|true)$ ]] && PART=cases
[[ -z $PART || $PART == cases ]] || { echo "usage: $0 [cases]" >&2; exit 2; }
cd "$(dirname "$0")/../.."
source scripts/cluster.sh

[[ $ROWS =~ ^[1-9][0-9]*$ ]] || { echo "ROWS must be a positive integer, got '$ROWS'" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "REPS must be a positive integer, got '$REPS'" >&2; exit 2; }
[[ $CASE_ROWS =~ ^[1-9][0-9]*$ ]] || { echo "CASE_ROWS must be a positive integer, got '$CASE_ROWS'" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run as root (the server is started as the postgres user)" >&2; exit 2; }

log() { echo "==> $*" >&2; }

# Milliseconds per run of a statement: runs it until 200 ms have passed (at least once). Both
# parts create it in their database.
BENCH_MS=$(cat <<'SQL'
CREATE FUNCTION bench_ms(stmt text, OUT ms float8, OUT rows_found bigint) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    runs integer := 0;
BEGIN
    LOOP
        EXECUTE stmt INTO rows_found;
        runs := runs + 1;
        EXIT WHEN clock_timestamp() - t0 > interval '200 ms';
    END LOOP;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000 / runs;
END $$;
SQL
)


start_bench_cluster() {
    start_cluster "$DIR" 5520
    cat >>"$CLUSTER_DIR/data/postgresql.conf" <<EOF

# --- sno time predicate benchmark: the table and its indexes in memory, one process per
# query, no JIT, no durability or autovacuum work while loading and measuring ---
shared_buffers = 3GB
max_parallel_workers_per_gather = 0
jit = off
fsync = off
synchronous_commit = off
autovacuum = off
maintenance_work_mem = 1GB
max_wal_size = 20GB
TimeZone = 'UTC'
client_min_messages = warning
EOF
    restart_cluster
    psql_in postgres -c "CREATE DATABASE bench"
}

sql() {
    psql_in bench "$@"
}

# The table: ROWS IDs evenly over the year before now (or SPACING apart, ending now), with the
# same time in a timestamptz column that has its own btree.
load() {
    local spacing=${SPACING:-"$((365 * 86400 * 1000 / ROWS)) ms"}
    log "loading $ROWS rows, one every $spacing"
    sql <<SQL
CREATE EXTENSION sno;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
CREATE TABLE events (id sno PRIMARY KEY, at timestamptz NOT NULL, payload integer NOT NULL);
INSERT INTO events
SELECT sno_from_parts(t, 1, 7, 0), date_trunc('milliseconds', sno_time(sno_from_parts(t, 1, 7, 0))),
       i % 1000
FROM (SELECT i, now() - ($ROWS - i) * interval '$spacing' AS t
      FROM generate_series(1, $ROWS) AS i) AS s;
CREATE INDEX events_at ON events (at);
-- now() as it was when the table was loaded: an SQL function that the planner inlines into a
-- stable expression as cheap as now() (the time of loading plus now() - now()), so the
-- 'before' scan pays no more per row for it than for now() itself.
DO \$\$ BEGIN
    EXECUTE format('CREATE FUNCTION bench_now() RETURNS timestamptz LANGUAGE sql STABLE
        AS %L', format('SELECT %L::timestamptz + (now() - now())', now()));
END \$\$;
VACUUM (FREEZE, ANALYZE) events;
CHECKPOINT;
SELECT pg_prewarm('events') + pg_prewarm('events_pkey') + pg_prewarm('events_at') AS pages \\gset
CREATE TABLE results (time_window text, form text, rep integer, ms float8, rows_found bigint);
$BENCH_MS
SQL
}

# The windows: name|lower|upper (upper empty: none). The day in the middle starts at midnight;
# the unit is that of the middle row.
windows() {
    sql -F '|' <<'SQL'
SELECT 'last hour', $$bench_now() - interval '1 hour'$$, '';
SELECT 'a day in the middle', quote_literal(d), quote_literal(d + interval '1 day')
FROM (SELECT date_trunc('day', min(at) + (max(at) - min(at)) / 2) AS d FROM events) AS m;
SELECT 'one 4 ms unit', quote_literal(t), quote_literal(t + interval '4 ms')
FROM (SELECT sno_time(id) AS t FROM events ORDER BY id OFFSET (SELECT count(*) / 2 FROM events) LIMIT 1) AS m;
SQL
}

# The predicate of one form for one window.
predicate() {
    local form=$1 lower=$2 upper=$3 left
    case $form in
    "natural, before" | natural) left="sno_time(id)" ;;
    cast) left="id::timestamptz" ;;
    "timestamptz column") left="at" ;;
    hand-written)
        echo "id >= sno_min($lower)${upper:+ AND id < sno_min($upper)}"
        return
        ;;
    esac
    echo "$left >= $lower${upper:+ AND $left < $upper}"
}

FORMS=("natural, before" natural cast hand-written "timestamptz column")

measure() {
    local rep form name lower upper rewrite stmt
    while IFS='|' read -r name lower upper; do
        for rep in $(seq "$REPS"); do
            for form in "${FORMS[@]}"; do
                rewrite=on
                [[ $form == "natural, before" ]] && rewrite=off
                stmt="SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE $(predicate "$form" "$lower" "$upper")"
                log "$name, $form (rep $rep)"
                sql -c "SET sno.rewrite_time_predicates = $rewrite" \
                    -c "INSERT INTO results SELECT \$n\$$name\$n\$, \$f\$$form\$f\$, $rep, ms, rows_found FROM bench_ms(\$s\$$stmt\$s\$)"
            done
        done
        # The plan of each form, once.
        for form in "${FORMS[@]}"; do
            rewrite=on
            [[ $form == "natural, before" ]] && rewrite=off
            echo "-- $name, $form" >>"$DIR/plans.txt"
            sql -c "SET sno.rewrite_time_predicates = $rewrite" \
                -c "EXPLAIN (COSTS OFF) SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE $(predicate "$form" "$lower" "$upper")" >>"$DIR/plans.txt"
        done
    done < <(windows)
}

report() {
    echo
    echo "# sno time predicate benchmark"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- PostgreSQL: $(sql -c "SHOW server_version") (sno $(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'sno'"))"
    echo "- $ROWS rows; ms per query including planning, median of $REPS; one process"
    echo "- host: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; other work may have shared it, so read the ratios"
    echo
    sql -F '|' <<'SQL' | awk -F'|' '
        BEGIN {
            printf "| window | rows | natural, before | natural | cast | hand-written | timestamptz column | natural / hand-written |\n"
            printf "|---|--:|--:|--:|--:|--:|--:|--:|\n"
        }
        { printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
WITH med AS (
    SELECT time_window, form, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms,
           max(rows_found) AS rows_found
    FROM results GROUP BY time_window, form
), wide AS (
    SELECT time_window, max(rows_found) AS rows_found,
           max(ms) FILTER (WHERE form = 'natural, before') AS before,
           max(ms) FILTER (WHERE form = 'natural') AS rewritten,
           max(ms) FILTER (WHERE form = 'cast') AS cast_form,
           max(ms) FILTER (WHERE form = 'hand-written') AS hand,
           max(ms) FILTER (WHERE form = 'timestamptz column') AS col
    FROM med GROUP BY time_window
)
SELECT time_window, rows_found, round(before::numeric, 3), round(rewritten::numeric, 3),
       round(cast_form::numeric, 3), round(hand::numeric, 3), round(col::numeric, 3),
       round((rewritten / hand)::numeric, 2) || 'x'
FROM wide
ORDER BY array_position(ARRAY['last hour', 'a day in the middle', 'one 4 ms unit'], time_window);
SQL
    echo
    sql -F '|' <<'SQL' | awk -F'|' '{ printf "Goal, natural within 1.2x of hand-written at every window: %s (worst %sx)\n", $1, $2 }'
WITH med AS (
    SELECT time_window, form, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
    FROM results GROUP BY time_window, form
), ratio AS (
    SELECT max(n.ms / h.ms) AS worst FROM med n JOIN med h USING (time_window)
    WHERE n.form = 'natural' AND h.form = 'hand-written'
)
SELECT CASE WHEN worst <= 1.2 THEN 'MET' ELSE 'NOT MET' END, round(worst::numeric, 2) FROM ratio;
SQL
    echo
    echo "Rows found agree across forms: $(sql -c "SELECT CASE WHEN bool_and(n = 1) THEN 'yes' ELSE 'NO' END
        FROM (SELECT count(DISTINCT rows_found) AS n FROM results GROUP BY time_window) AS c")"
    echo
}

main() {
    local t0=$SECONDS
    start_bench_cluster
    if [[ $PART == cases ]]; then
        load_cases
        measure_cases
        report_cases
        cp "$DIR/plans.txt" "$DIR.cases-plans.txt"
        echo "(plans copied to $DIR.cases-plans.txt)"
        log "done in $((SECONDS - t0)) s"
        return
    fi
    load
    measure
    report
    cp "$DIR/plans.txt" "$DIR.plans.txt"
    echo "(plans copied to $DIR.plans.txt)"
    log "done in $((SECONDS - t0)) s"
}

# --- Second part: the cases of issue 31, each with the rewrite off, on, and hand-written ---

# The tables: events (CASE_ROWS IDs, one a second up to the time of loading, a primary key on
# id), a view over it, a copy of it under an RLS policy on sno_time(id) and one under the same
# policy written on id; b (5,000 of those IDs, a heap: no index on id), c200 and c2000 (times,
# half of c2000 of no ID); parted (the last 241 minutes of events, one partition a minute, an
# index on id). The results of each run, and a digest of each form's rows.
load_cases() {
    log "loading $CASE_ROWS rows, one a second"
    sql <<SQL
CREATE EXTENSION sno;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
CREATE TABLE events (id sno PRIMARY KEY, payload integer NOT NULL);
INSERT INTO events
SELECT sno_from_parts(t, 1, 7, 0), i % 1000
FROM (SELECT i, date_trunc('second', now()) - ($CASE_ROWS - i) * interval '1 s' AS t
      FROM generate_series(1, $CASE_ROWS) AS i) AS s;
CREATE VIEW events_v AS SELECT id, sno_time(id) AS created_at, payload FROM events;

CREATE TABLE b AS SELECT id FROM events ORDER BY id LIMIT 5000;
CREATE TABLE c200 AS
SELECT sno_time(id) AS ts FROM (SELECT id, row_number() OVER (ORDER BY id) AS r FROM b) AS s
WHERE r % 25 = 0;
CREATE TABLE c2000 AS
SELECT sno_time(id) + CASE WHEN r % 5 = 0 THEN interval '0' ELSE interval '500 ms' END AS ts
FROM (SELECT id, row_number() OVER (ORDER BY id) AS r FROM b) AS s
WHERE r % 5 IN (0, 1);

CREATE TABLE parted (id sno NOT NULL, payload integer NOT NULL) PARTITION BY RANGE ((sno_time(id)));
DO \$\$
DECLARE
    top timestamptz := date_trunc('minute', (SELECT max(sno_time(id)) FROM events));
BEGIN
    FOR m IN 0..240 LOOP
        EXECUTE format('CREATE TABLE parted_%s PARTITION OF parted FOR VALUES FROM (%L) TO (%L)',
                       m, top - (m + 1) * interval '1 minute', top - m * interval '1 minute');
    END LOOP;
END \$\$;
INSERT INTO parted SELECT id, payload FROM events
WHERE sno_time(id) >= date_trunc('minute', (SELECT max(sno_time(id)) FROM events)) - interval '241 minutes'
  AND sno_time(id) < date_trunc('minute', (SELECT max(sno_time(id)) FROM events));
CREATE INDEX ON parted (id);
ANALYZE parted;

CREATE ROLE bench_reader;
CREATE TABLE secured (LIKE events INCLUDING ALL);
INSERT INTO secured SELECT * FROM events;
CREATE TABLE secured_hand (LIKE events INCLUDING ALL);
INSERT INTO secured_hand SELECT * FROM events;
ALTER TABLE secured ENABLE ROW LEVEL SECURITY;
ALTER TABLE secured_hand ENABLE ROW LEVEL SECURITY;
SELECT quote_literal(max(sno_time(id)) - interval '1 hour') AS lo FROM events \\gset
CREATE POLICY last_hour ON secured USING (sno_time(id) >= :lo);
CREATE POLICY last_hour ON secured_hand USING (id >= sno_min_at_or_after(:lo));
GRANT SELECT ON secured, secured_hand TO bench_reader;

VACUUM (FREEZE, ANALYZE);
CHECKPOINT;
SELECT sum(pg_prewarm(c.oid)) AS pages FROM pg_class c
WHERE c.relkind IN ('r', 'i') AND c.relnamespace = 'public'::regnamespace \\gset
CREATE TABLE case_results (case_name text, form text, rep integer, ms float8, rows_found bigint);
CREATE TABLE case_rows (case_name text, form text, digest text);
GRANT INSERT ON case_results, case_rows TO bench_reader;
$BENCH_MS
SQL
}

CASE_FORMS=(off on hand-written)
CASE_NAMES=()
CASE_KIND=()  # plan: the goal is on = off (the hand form is the query itself); index: on <= 1.2x hand
CASE_ROLE=()
CASE_NATURAL=()
CASE_HAND=()

add_case() {
    CASE_NAMES+=("$1")
    CASE_KIND+=("$2")
    CASE_ROLE+=("$3")
    CASE_NATURAL+=("$4")
    CASE_HAND+=("${5:-$4}")
}

# The cases, with the times of this table: the last hour, an hour in the middle, the minute in
# the middle of parted, and IDs' times for IN and = ANY.
define_cases() {
    local last_hour mid mid_end minute minute_end in_a in_b any
    IFS='|' read -r last_hour mid mid_end minute minute_end in_a in_b any < <(sql -F '|' <<'SQL'
WITH e AS (SELECT min(sno_time(id)) AS lo, max(sno_time(id)) AS hi FROM events),
     p AS (SELECT date_trunc('minute', hi) - interval '121 minutes' AS m FROM e),
     t AS (SELECT array_agg(sno_time(id) ORDER BY id) AS ts
           FROM (SELECT id FROM events ORDER BY id OFFSET (SELECT count(*) / 3 FROM events) LIMIT 1000) AS s)
SELECT quote_literal(hi - interval '1 hour'),
       quote_literal(date_trunc('hour', lo + (hi - lo) / 2)),
       quote_literal(date_trunc('hour', lo + (hi - lo) / 2) + interval '1 hour'),
       quote_literal(m), quote_literal(m + interval '1 minute'),
       quote_literal(ts[10]), quote_literal(ts[500]),
       quote_literal(ARRAY[ts[100], ts[300], ts[500], ts[700], ts[900]]::text)
FROM e, p, t;
SQL
    )
    local join='SELECT count(*) FROM %s c JOIN (SELECT id FROM b OFFSET 0) d ON c.ts = sno_time(d.id)'
    # shellcheck disable=SC2059 # the format is ours
    add_case "equality join, 200 x 5,000" plan "" "$(printf "$join" c200)"
    # shellcheck disable=SC2059
    add_case "equality join, 2,000 x 5,000" plan "" "$(printf "$join" c2000)"
    add_case "EXISTS on =, 2,000 x 5,000" plan "" \
        "SELECT count(*) FROM c2000 c WHERE EXISTS (SELECT FROM b WHERE sno_time(b.id) = c.ts)"
    add_case "NOT EXISTS on =, 2,000 x 5,000" plan "" \
        "SELECT count(*) FROM c2000 c WHERE NOT EXISTS (SELECT FROM b WHERE sno_time(b.id) = c.ts)"
    add_case "partitioned by sno_time(id), 241 partitions, one minute" plan "" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM parted WHERE sno_time(id) >= $minute AND sno_time(id) < $minute_end" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM parted WHERE sno_time(id) >= $minute AND sno_time(id) < $minute_end AND id >= sno_min_at_or_after($minute) AND id <= sno_max_before($minute_end)"
    add_case "view, created_at in the last hour" index "" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events_v WHERE created_at >= $last_hour" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE id >= sno_min_at_or_after($last_hour)"
    add_case "CTE, an hour in the middle" index "" \
        "WITH t AS (SELECT id::timestamptz AS at, payload FROM events) SELECT count(*) FILTER (WHERE payload >= 0) FROM t WHERE at >= $mid AND at < $mid_end" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE id >= sno_min_at_or_after($mid) AND id <= sno_max_before($mid_end)"
    add_case "sno_time(id) IN (a, b)" index "" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE sno_time(id) IN ($in_a, $in_b)" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE (id >= sno_min_at_or_after($in_a) AND id <= sno_max_at_or_before($in_a)) OR (id >= sno_min_at_or_after($in_b) AND id <= sno_max_at_or_before($in_b))"
    local hand_any="" t
    for t in $(sql -c "SELECT quote_literal(unnest($any::timestamptz[]))" | tr ' ' '~'); do
        t=${t//\~/ }
        hand_any+="${hand_any:+ OR }(id >= sno_min_at_or_after($t) AND id <= sno_max_at_or_before($t))"
    done
    add_case "sno_time(id) = ANY (5 times)" index "" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE sno_time(id) = ANY ($any::timestamptz[])" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM events WHERE $hand_any"
    add_case "RLS policy on sno_time(id), the last hour (non-owner)" index bench_reader \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM secured" \
        "SELECT count(*) FILTER (WHERE payload >= 0) FROM secured_hand"
    add_case "HAVING on the grouped time, the last hour" index "" \
        "SELECT count(*) FROM (SELECT sno_time(id) AS t, count(*) FROM events GROUP BY 1 HAVING sno_time(id) >= $last_hour) AS g" \
        "SELECT count(*) FROM (SELECT sno_time(id) AS t, count(*) FROM events WHERE id >= sno_min_at_or_after($last_hour) GROUP BY 1) AS g"
    add_case "ORDER BY sno_time(id) DESC LIMIT 10" index "" \
        "SELECT payload, sno_time(id) AS t FROM events ORDER BY sno_time(id) DESC LIMIT 10" \
        "SELECT payload, sno_time(id) AS t FROM events ORDER BY id DESC LIMIT 10"
}

# The query of case i in one form.
case_query() {
    local i=$1 form=$2
    if [[ $form == hand-written ]]; then echo "${CASE_HAND[$i]}"; else echo "${CASE_NATURAL[$i]}"; fi
}

# The statement that is timed: a query that counts as it is, another one's rows counted. (Not
# every query wrapped in a count: PostgreSQL replaces an aggregate subquery whose output is
# not used by one row, and would time nothing.)
timed_statement() {
    if [[ $1 == "SELECT count("* ]]; then echo "$1"; else echo "SELECT count(*) FROM ($1) AS q"; fi
}

# psql for case i in one form: the rewrite setting, then the case's role.
case_sql() {
    local i=$1 form=$2
    shift 2
    local rewrite=on
    [[ $form == off ]] && rewrite=off
    sql -c "SET sno.rewrite_time_predicates = $rewrite" \
        ${CASE_ROLE[$i]:+-c "SET ROLE ${CASE_ROLE[$i]}"} "$@"
}

measure_cases() {
    local i rep form query name
    define_cases
    : >"$DIR/plans.txt"
    for i in "${!CASE_NAMES[@]}"; do
        name=${CASE_NAMES[$i]}
        for form in "${CASE_FORMS[@]}"; do
            query=$(case_query "$i" "$form")
            echo "-- $name, $form: $query" >>"$DIR/plans.txt"
            case_sql "$i" "$form" -c "EXPLAIN (COSTS OFF) $query" >>"$DIR/plans.txt"
            case_sql "$i" "$form" -c "INSERT INTO case_rows SELECT \$n\$$name\$n\$, '$form',
                md5(coalesce(string_agg(q::text, '|' ORDER BY q::text), '')) FROM ($query) AS q"
        done
    done
    for rep in $(seq "$REPS"); do
        for i in "${!CASE_NAMES[@]}"; do
            name=${CASE_NAMES[$i]}
            for form in "${CASE_FORMS[@]}"; do
                query=$(case_query "$i" "$form")
                log "$name, $form (rep $rep)"
                case_sql "$i" "$form" -c "INSERT INTO case_results SELECT \$n\$$name\$n\$, '$form', $rep,
                    ms, rows_found FROM bench_ms(\$s\$$(timed_statement "$query")\$s\$)"
            done
        done
    done
}

report_cases() {
    local names kinds
    names=$(printf '%s\n' "${CASE_NAMES[@]}" | sed "s/'/''/g; s/.*/'&'/" | paste -sd,)
    kinds=$(printf '%s\n' "${CASE_KIND[@]}" | sed "s/.*/'&'/" | paste -sd,)
    echo
    echo "# sno time rewrite: the cases of issue 31"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- PostgreSQL: $(sql -c "SHOW server_version") (sno $(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'sno'"))"
    echo "- $CASE_ROWS rows; ms per query including planning, median of $REPS; one process"
    echo "- host: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; other work may have shared it, so read the ratios"
    echo
    sql -F '|' <<SQL | awk -F'|' '
        BEGIN {
            printf "| case | result | off | on | hand-written | on / off | on / hand-written | rows agree |\n"
            printf "|---|--:|--:|--:|--:|--:|--:|:-:|\n"
        }
        { printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
WITH med AS (
    SELECT case_name, form, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms,
           max(rows_found) AS rows_found, count(DISTINCT rows_found) AS results
    FROM case_results GROUP BY case_name, form
), wide AS (
    SELECT case_name, max(rows_found) AS rows_found, sum(results) AS results,
           max(ms) FILTER (WHERE form = 'off') AS off,
           max(ms) FILTER (WHERE form = 'on') AS on_,
           max(ms) FILTER (WHERE form = 'hand-written') AS hand
    FROM med GROUP BY case_name
), agree AS (
    SELECT case_name, count(DISTINCT digest) = 1 AS same FROM case_rows GROUP BY case_name
)
SELECT case_name, rows_found, round(off::numeric, 3), round(on_::numeric, 3), round(hand::numeric, 3),
       round((on_ / off)::numeric, 2) || 'x', round((on_ / hand)::numeric, 2) || 'x',
       CASE WHEN same AND results = 3 THEN 'yes' ELSE 'NO' END
FROM wide JOIN agree USING (case_name)
ORDER BY array_position(ARRAY[$names], case_name);
SQL
    echo
    sql -F '|' <<SQL | awk -F'|' '
        { printf "Goal, on no slower than off (1.1x for noise) in every case: %s (worst %sx, %s)\n", $1, $2, $3 }'
WITH med AS (
    SELECT case_name, form, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
    FROM case_results GROUP BY case_name, form
), r AS (
    SELECT n.case_name, n.ms / f.ms AS ratio FROM med n JOIN med f USING (case_name)
    WHERE n.form = 'on' AND f.form = 'off'
)
SELECT CASE WHEN max(ratio) <= 1.1 THEN 'MET' ELSE 'NOT MET' END, round(max(ratio)::numeric, 2),
       (SELECT case_name FROM r ORDER BY ratio DESC LIMIT 1)
FROM r;
SQL
    sql -F '|' <<SQL | awk -F'|' '
        { printf "Goal, on within 1.2x of hand-written in every natural form: %s (worst %sx, %s)\n", $1, $2, $3 }'
WITH med AS (
    SELECT case_name, form, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
    FROM case_results GROUP BY case_name, form
), kinds AS (
    SELECT unnest(ARRAY[$names]) AS case_name, unnest(ARRAY[$kinds]) AS kind
), r AS (
    SELECT n.case_name, n.ms / h.ms AS ratio FROM med n JOIN med h USING (case_name)
    JOIN kinds USING (case_name)
    WHERE n.form = 'on' AND h.form = 'hand-written' AND kind = 'index'
)
SELECT CASE WHEN max(ratio) <= 1.2 THEN 'MET' ELSE 'NOT MET' END, round(max(ratio)::numeric, 2),
       (SELECT case_name FROM r ORDER BY ratio DESC LIMIT 1)
FROM r;
SQL
    echo
    echo "Rows agree across the three forms in every case: $(sql -c "SELECT CASE WHEN bool_and(n = 1) THEN 'yes' ELSE 'NO' END
        FROM (SELECT count(DISTINCT digest) AS n FROM case_rows GROUP BY case_name) AS c")"
    echo
}

main "$@"
