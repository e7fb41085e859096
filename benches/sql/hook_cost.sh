#!/usr/bin/env bash
# Measures what sno's planner hooks cost queries that do not mention sno (issue 31, item 4):
# transactions per second of the same pgbench workloads, on one PostgreSQL, in three
# configurations:
#   no sno            the server does not load sno (shared_preload_libraries = ''),
#   loaded            shared_preload_libraries = 'sno', a database without the extension,
#   extension         the same server, a database with CREATE EXTENSION sno,
# and three workloads, none of which mentions sno:
#   select            pgbench -S -M simple (the built-in select-only script, scale 1),
#   insert 1,000 rows one INSERT ... VALUES of 1,000 rows into a table with an int key
#                     (emptied before each run),
#   join of 30 tables 30 tables of 100 rows joined on int keys, join_collapse_limit and
#                     from_collapse_limit 30, so the planner searches the joins (GEQO at 30).
# Goal: loaded and extension within 1% of no sno on each. Rounds are interleaved: each round
# restarts the server without sno and with it (which first alternates) and runs every workload
# in every configuration for DURATION seconds; medians of ROUNDS. ONE throwaway cluster.
#
# Needs: a release build of sno installed into PG_CONFIG's PostgreSQL (default: this checkout's 15;
# scripts/install.sh MAJOR), run as root (the server runs as the `postgres` user).
#
# Usage: benches/sql/hook_cost.sh
#        ROUNDS=3 DURATION=5 benches/sql/hook_cost.sh     # a quicker, noisier run
# Environment: ROUNDS (default 5), DURATION (seconds a run, default 10), CLIENTS (default 2),
# BENCH_DIR (default /tmp/sno-bench-hook).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-2}
DIR=${BENCH_DIR:-/tmp/sno-bench-hook}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh

for v in ROUNDS DURATION CLIENTS; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$v must be a positive integer, got '${!v}'" >&2; exit 2; }
done
[[ $(id -u) == 0 ]] || { echo "run as root (the server is started as the postgres user)" >&2; exit 2; }

log() { echo "==> $*" >&2; }

CONFIGS=("no sno" loaded extension)
WORKLOADS=(select "insert 1,000 rows" "join of 30 tables")
TABLES=30

# The database each configuration runs in.
database_of() {
    case $1 in
    "no sno" | loaded) echo plain ;;
    extension) echo withext ;;
    esac
}

start_bench_cluster() {
    start_cluster "$DIR" 5540
    cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF

# --- sno hook cost benchmark: everything in memory, one process per query, no JIT, no
# durability or autovacuum work while measuring ---
shared_buffers = 1GB
max_parallel_workers_per_gather = 0
jit = off
fsync = off
synchronous_commit = off
autovacuum = off
max_wal_size = 20GB
TimeZone = 'UTC'
client_min_messages = warning
CONF
    restart_cluster
}

# The two databases, the same tables in each (pgbench's at scale 1, the insert's, the join's),
# the extension in one; the results table in postgres; the pgbench scripts.
load() {
    local db i
    for db in plain withext; do
        log "loading $db"
        psql_in postgres -c "CREATE DATABASE $db"
        pg_client pgbench -i -q -s 1 "$db" >/dev/null 2>&1
        {
            echo "CREATE TABLE ins (k integer NOT NULL, v integer NOT NULL);"
            echo "CREATE INDEX ON ins (k);"
            for i in $(seq "$TABLES"); do
                echo "CREATE TABLE j$i (k integer PRIMARY KEY, v integer NOT NULL);"
                echo "INSERT INTO j$i SELECT k, 101 - k FROM generate_series(1, 100) AS k;"
            done
            echo "ALTER DATABASE $db SET join_collapse_limit = $TABLES;"
            echo "ALTER DATABASE $db SET from_collapse_limit = $TABLES;"
            echo "VACUUM (FREEZE, ANALYZE);"
        } | psql_in "$db"
    done
    psql_in withext -c "CREATE EXTENSION sno"
    psql_in postgres -c "CREATE TABLE results (workload text, config text, round integer, tps float8)"

    {
        printf 'INSERT INTO ins (k, v) VALUES '
        seq 1000 | awk '{ printf "%s(%d, %d)", (NR > 1 ? ", " : ""), $1, $1 % 97 }'
        echo ";"
    } >"$DIR/insert.sql"
    {
        echo '\set k random(1, 100)'
        printf 'SELECT count(*) FROM j1'
        for i in $(seq 2 "$TABLES"); do
            printf ' JOIN j%d ON j%d.k = j%d.v' "$i" "$i" $((i - 1))
        done
        echo " WHERE j1.k = :k;"
    } >"$DIR/join30.sql"
    chmod 644 "$DIR/insert.sql" "$DIR/join30.sql"
}

# Restarts the server with sno (yes) or without it (no) and checks which it is.
server_with_sno() {
    local want=$1 loaded
    # In postgresql.conf (scripts/cluster.sh's line): ALTER SYSTEM would write '' as one
    # library with an empty name.
    local libraries=sno
    [[ $want == yes ]] || libraries=
    sed -i "s/^shared_preload_libraries = .*/shared_preload_libraries = '$libraries'/" \
        "$CLUSTER_DIR/data/postgresql.conf"
    restart_cluster
    loaded=$(psql_in plain -c "SELECT current_setting('sno.rewrite_time_predicates', true) IS NOT NULL")
    if [[ ($want == yes && $loaded != t) || ($want == no && $loaded != f) ]]; then
        echo "hook_cost.sh: wanted sno loaded: $want, but sno.rewrite_time_predicates defined: $loaded" >&2
        exit 1
    fi
    # Warm the buffers and the OS cache after the restart.
    pg_client pgbench -S -M simple -c "$CLIENTS" -j "$CLIENTS" -T 2 plain >/dev/null 2>&1
    pg_client pgbench -S -M simple -c "$CLIENTS" -j "$CLIENTS" -T 2 withext >/dev/null 2>&1
}

# Transactions per second of one workload in one database.
run_workload() {
    local workload=$1 db=$2 args
    case $workload in
    select) args=(-S) ;;
    "insert 1,000 rows")
        psql_in "$db" -c "TRUNCATE ins"
        args=(-f "$DIR/insert.sql")
        ;;
    "join of 30 tables") args=(-f "$DIR/join30.sql") ;;
    esac
    pg_client pgbench -n -M simple -c "$CLIENTS" -j "$CLIENTS" -T "$DURATION" "${args[@]}" "$db" \
        2>&1 | awk '/^tps = / { print $3; exit }'
}

measure() {
    local round server servers workload config tps
    for round in $(seq "$ROUNDS"); do
        servers=(no yes)
        ((round % 2)) || servers=(yes no)
        for server in "${servers[@]}"; do
            server_with_sno "$server"
            for workload in "${WORKLOADS[@]}"; do
                for config in "${CONFIGS[@]}"; do
                    [[ ($server == no && $config == "no sno") || ($server == yes && $config != "no sno") ]] ||
                        continue
                    tps=$(run_workload "$workload" "$(database_of "$config")")
                    [[ -n $tps ]] || { echo "hook_cost.sh: no tps from $workload, $config" >&2; exit 1; }
                    log "round $round, $workload, $config: $tps tps"
                    psql_in postgres -c "INSERT INTO results VALUES ('$workload', '$config', $round, $tps)"
                done
            done
        done
    done
}

report() {
    echo
    echo "# sno hook cost: queries that do not mention sno"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- PostgreSQL: $(psql_in postgres -c "SHOW server_version") (sno $(psql_in withext -c "SELECT extversion FROM pg_extension WHERE extname = 'sno'"))"
    echo "- pgbench -M simple, $CLIENTS clients, $DURATION s a run; median transactions/s of $ROUNDS interleaved rounds"
    echo "- host: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; other work may have shared it, so read the ratios"
    echo
    psql_in postgres -F '|' <<'SQL' | awk -F'|' '
        BEGIN {
            printf "| workload | no sno, tps | loaded, no extension, tps | ratio | CREATE EXTENSION sno, tps | ratio | no sno: spread of rounds |\n"
            printf "|---|--:|--:|--:|--:|--:|--:|\n"
        }
        { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }'
WITH med AS (
    SELECT workload, config, percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps,
           (max(tps) - min(tps)) / percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS spread
    FROM results GROUP BY workload, config
), wide AS (
    SELECT workload,
           max(tps) FILTER (WHERE config = 'no sno') AS nosno,
           max(spread) FILTER (WHERE config = 'no sno') AS spread,
           max(tps) FILTER (WHERE config = 'loaded') AS loaded,
           max(tps) FILTER (WHERE config = 'extension') AS ext
    FROM med GROUP BY workload
)
SELECT workload, round(nosno::numeric, 1), round(loaded::numeric, 1),
       round((loaded / nosno)::numeric, 3), round(ext::numeric, 1), round((ext / nosno)::numeric, 3),
       round((100 * spread)::numeric, 1) || '%'
FROM wide
ORDER BY array_position(ARRAY['select', 'insert 1,000 rows', 'join of 30 tables'], workload);
SQL
    echo
    psql_in postgres -F '|' <<'SQL' | awk -F'|' '
        { printf "Goal, loaded and extension within 1%% of no sno on each workload: %s (worst %s, %s)\n", $1, $2, $3 }'
WITH med AS (
    SELECT workload, config, percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps
    FROM results GROUP BY workload, config
), r AS (
    SELECT s.workload || ', ' || s.config AS what, s.tps / n.tps AS ratio
    FROM med s JOIN med n USING (workload) WHERE n.config = 'no sno' AND s.config <> 'no sno'
)
SELECT CASE WHEN min(ratio) >= 0.99 THEN 'MET' ELSE 'NOT MET' END, round(min(ratio)::numeric, 3),
       (SELECT what FROM r ORDER BY ratio LIMIT 1)
FROM r;
SQL
    echo
}

main() {
    local t0=$SECONDS
    start_bench_cluster
    load
    measure
    report
    log "done in $((SECONDS - t0)) s"
}

main "$@"
