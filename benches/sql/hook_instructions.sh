#!/usr/bin/env bash
# What sno's planner hook costs queries that do not mention sno, in CPU instructions: exact
# and unmoved by other work on the machine, where hook_cost.sh's transactions per second on a
# shared 2-core machine cannot tell 1% from noise (issue 31, item 4).
#
# Each workload runs in PostgreSQL's single-user mode (`postgres --single`, one backend, no
# client) under valgrind's callgrind, 2N times and N times: the difference over N is the
# instructions one query takes, with the start-up and the first run's catalog reads left out. Configurations, one server build:
#   no sno         shared_preload_libraries = '' (the server without sno),
#   loaded         shared_preload_libraries = 'sno', a database without the extension,
#   extension      the same, a database with CREATE EXTENSION sno,
#   rewrite off    the same database, sno.rewrite_time_predicates = off (the hook returns at once),
# and workloads that do not mention sno:
#   select         pgbench's select-only statement (SELECT abalance ... WHERE aid = ...),
#   insert         one INSERT ... VALUES of 1,000 rows into a table with an int key,
#   join           30 tables of 10 rows joined on int keys (join_collapse_limit and
#                  from_collapse_limit 30: the planner searches the join orders, GEQO, whose
#                  seed is fixed),
#   time_predicate a query that the hook rewrites (sno_time(id) >= now() - interval '1 hour' on
#                  a table with a sno key), for what the rewrite itself costs when it works.
# Goal: loaded and extension within 1% of no sno on the first three.
#
# Needs: valgrind, a release build of sno installed into PG_CONFIG's PostgreSQL (default: this
# checkout's 15; scripts/install.sh MAJOR); run as root (the server runs as `postgres`).
#
# Usage: benches/sql/hook_instructions.sh          N=200 (default) runs of each workload
# Environment: N, WORKLOADS (default: select insert join time_predicate), BENCH_DIR (default
# /tmp/sno-bench-instructions).
set -euo pipefail

N=${N:-200}
read -r -a WORKLOADS <<<"${WORKLOADS:-select insert join time_predicate}"
DIR=${BENCH_DIR:-/tmp/sno-bench-instructions}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
source benches/sql/callgrind.sh
require_callgrind "$N"

log() { echo "==> $*" >&2; }
TABLES=30

# Two databases with the same tables, one with the extension; the server is then stopped,
# since single-user mode needs the data directory to itself.
prepare() {
    start_cluster "$DIR" 5560 keep
    local db
    for db in plain withext; do
        psql_in postgres -c "CREATE DATABASE $db"
        pg_client pgbench -q -i -s 1 "$db" >/dev/null 2>&1
        psql_in "$db" <<SQL
CREATE TABLE inserted (k integer PRIMARY KEY, v integer);
SELECT format('CREATE TABLE j%s (k integer PRIMARY KEY, v integer)', i) FROM generate_series(1, $TABLES) i \\gexec
SELECT format('INSERT INTO j%s SELECT g, g FROM generate_series(1, 10) g', i) FROM generate_series(1, $TABLES) i \\gexec
SQL
    done
    psql_in withext -c "CREATE EXTENSION sno" \
        -c "CREATE TABLE events (id sno PRIMARY KEY, v integer)" \
        -c "INSERT INTO events SELECT sno_from_parts(now() - g * interval '1 min', 1, 1, 0), g FROM generate_series(1, 1000) g"
    psql_in postgres -c "VACUUM ANALYZE" >/dev/null
    for db in plain withext; do psql_in "$db" -c "VACUUM ANALYZE"; done
    pg_as_postgres pg_ctl -D "$DIR/data" -m fast -w stop >/dev/null
}

# One line per statement, as single-user mode reads them.
statement() {
    case $1 in
    select) echo "SELECT abalance FROM pgbench_accounts WHERE aid = 4242;" ;;
    insert)
        echo "BEGIN; INSERT INTO inserted VALUES $(seq 1 1000 | awk '{ printf "%s(%d, 1)", (NR > 1 ? ", " : ""), $1 }'); ROLLBACK;" ;;
    join)
        local from="j1" where="" i
        for ((i = 2; i <= TABLES; i++)); do
            from+=", j$i"
            where+="${where:+ AND }j$i.k = j$((i - 1)).v"
        done
        echo "SELECT count(*) FROM $from WHERE $where;" ;;
    time_predicate) echo "SELECT count(*) FROM events WHERE sno_time(id) >= now() - interval '1 hour';" ;;
    esac
}

# Instructions of a single-user session that runs the workload `count` times.
instructions() {
    local preload=$1 db=$2 workload=$3 count=$4 setting=$5 input="$DIR/input.sql"
    {
        echo "SET join_collapse_limit = $TABLES;"
        echo "SET from_collapse_limit = $TABLES;"
        echo "SET max_parallel_workers_per_gather = 0;"
        echo "SET jit = off;"
        [[ -z $setting ]] || echo "SET $setting;"
        for ((i = 0; i < count; i++)); do statement "$workload"; done
    } >"$input"
    # Only what runs inside the statements counts: the start-up is not the same from run to
    # run (sno times its clock against the CPU's counter for 2 ms of wall time, say).
    single_user_callgrind exec_simple_query "$DIR/data" "$preload" "$db" "$input" /dev/null |
        collected
}

# Instructions of one query: (2n runs - n runs) / n, so that what the first run of a
# session does once (reading the catalog into its caches) is left out with the start-up. The
# join of 30 tables takes seconds under valgrind: it runs N / 50 times (at least twice).
per_query() {
    local preload=$1 db=$2 workload=$3 setting=${4:-} n=$N twice once
    [[ $workload != join ]] || n=$((N / 50 > 2 ? N / 50 : 2))
    twice=$(instructions "$preload" "$db" "$workload" $((2 * n)) "$setting")
    once=$(instructions "$preload" "$db" "$workload" "$n" "$setting")
    echo $(((twice - once) / n))
}

report() {
    local workload base loaded ext off
    echo
    echo "# sno planner hook: instructions per query (callgrind, single-user mode)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $("$PG_BIN/postgres" --version); N = $N"
    echo
    echo "| workload | no sno | loaded | extension | extension, rewrite off | loaded / no sno | extension / no sno |"
    echo "|---|--:|--:|--:|--:|--:|--:|"
    for workload in "${WORKLOADS[@]}"; do
        log "$workload"
        if [[ $workload == time_predicate ]]; then
            base=- loaded=-
        else
            base=$(per_query "" plain "$workload")
            loaded=$(per_query sno plain "$workload")
        fi
        ext=$(per_query sno withext "$workload")
        off=$(per_query sno withext "$workload" "sno.rewrite_time_predicates = off")
        if [[ $base == - ]]; then
            echo "| $workload | - | - | $ext | $off | - | - |"
        else
            echo "| $workload | $base | $loaded | $ext | $off | $(awk -v a="$loaded" -v b="$base" 'BEGIN { printf "%.4f", a / b }') | $(awk -v a="$ext" -v b="$base" 'BEGIN { printf "%.4f", a / b }') |"
        fi
    done
}

run_report
