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
# Needs: a release build of sno installed into PG_CONFIG's PostgreSQL (default: this checkout's 15;
# scripts/install.sh MAJOR), run as root (the server runs as the `postgres` user).
#
# Usage: benches/sql/time_bench.sh                   # 10,000,000 rows over a year up to now
#        ROWS=2000000 SPACING='3 s' benches/sql/time_bench.sh   # the issue's table (#25)
# Environment: ROWS (default 10000000), SPACING (default: a year / ROWS), REPS (default 9),
# BENCH_DIR (default /tmp/sno-bench-time).
set -euo pipefail

ROWS=${ROWS:-10000000}
REPS=${REPS:-9}
SPACING=${SPACING:-}
DIR=${BENCH_DIR:-/tmp/sno-bench-time}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh

[[ $ROWS =~ ^[1-9][0-9]*$ ]] || { echo "ROWS must be a positive integer, got '$ROWS'" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "REPS must be a positive integer, got '$REPS'" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run as root (the server is started as the postgres user)" >&2; exit 2; }

log() { echo "==> $*" >&2; }

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
-- Milliseconds per run of a statement: runs it until 200 ms have passed (at least once).
CREATE FUNCTION bench_ms(stmt text, OUT ms float8, OUT rows_found bigint) LANGUAGE plpgsql AS \$\$
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
END \$\$;
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
    load
    measure
    report
    cp "$DIR/plans.txt" "$DIR.plans.txt"
    echo "(plans copied to $DIR.plans.txt)"
    log "done in $((SECONDS - t0)) s"
}

main "$@"
