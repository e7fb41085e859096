#!/usr/bin/env bash
# Benchmarks sno_generate inside PostgreSQL 15 against the built-ins, all in one run on one
# throwaway cluster, and prints one table of figures and ratios:
#   1. SELECT count(f) FROM generate_series(1, N) for sno_generate(1), clock_timestamp(),
#      nextval('s') and gen_random_uuid(): ns per row (target: sno <= 1.15x clock_timestamp()),
#      and point(random(), 1) against random(): what returning a by-reference value costs.
#   2. Two sessions generating at once: each one's ns per ID against one session alone
#      (target: <= 1.3x, no contention collapse).
#   3. INSERT of ROWS rows with a sno_generate(1) primary key against a bigint identity and a
#      uuid DEFAULT gen_random_uuid() primary key (target: <= 1.1x bigint, faster than uuid).
#   4. pgbench, 8 clients, SELECT sno_generate(1) against SELECT nextval('s'): transactions/s.
# On PostgreSQL 18 and later, the built-in uuidv7() joins parts 1, 3 and 4.
#
# Runs against the PostgreSQL of PG_CONFIG (default: this checkout's 15; scripts/pg_config.sh
# MAJOR prints another major's), with a release build of sno installed in it (scripts/install.sh
# MAJOR); run as root.
# Usage: benches/sql/generate_bench.sh        (N=5,000,000, ROWS=10,000,000, ROUNDS=5 rounds of
#                                             part 1, REPS=3 repetitions of parts 2 and 3)
#        N=200000 ROWS=200000 ROUNDS=1 REPS=1 benches/sql/generate_bench.sh   (smoke test)
#        PARTS="1" ROUNDS=9 benches/sql/generate_bench.sh   (only the parts named)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
source benches/sql/timing.sh

N=${N:-5000000}
ROWS=${ROWS:-10000000}
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-5}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-10}
PARTS=${PARTS:-1 2 3 4}

log() { echo "==> $*" >&2; }

start_bench_cluster() {
    start_cluster /tmp/sno-bench-generate 5580 >/dev/null
    # Durability and checkpoints out of the measurement; JIT and parallelism off so every
    # function is measured in one process on equal terms.
    psql_in postgres <<'SQL'
ALTER SYSTEM SET shared_buffers = '2GB';
ALTER SYSTEM SET fsync = off;
ALTER SYSTEM SET synchronous_commit = off;
ALTER SYSTEM SET max_wal_size = '20GB';
ALTER SYSTEM SET jit = off;
ALTER SYSTEM SET max_parallel_workers_per_gather = 0;
SQL
    restart_cluster
    UUIDV7=$(psql_in postgres -c "SELECT current_setting('server_version_num')::int >= 180000")
    psql_in postgres <<'SQL'
CREATE EXTENSION sno;
CREATE SEQUENCE s;
SQL
    create_elapsed_ms postgres
}

# Median of REPS timings of a query, in ms.
median_ms() {
    local query=$1 samples=()
    for ((i = 0; i < REPS; i++)); do
        samples+=("$(psql_in postgres -c "SELECT elapsed_ms(\$q\$$query\$q\$)")")
    done
    median_of "${samples[@]}"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
diff_ns() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
per_row_ns() { awk -v ms="$1" -v n="$2" 'BEGIN { printf "%.1f", ms * 1e6 / n }'; }

# 1 ---------------------------------------------------------------------------------------------
# Each function is timed in ROUNDS rounds that take turns, so that a slow spell of the VM falls
# on all of them alike; the median round counts.
function_costs() {
    log "function call cost, $N rows each, $ROUNDS rounds"
    declare -gA NS
    local -A times
    local name round
    local names=("sno_generate(1)" "clock_timestamp()" "nextval('s')" "gen_random_uuid()"
        "random()" "point(random(), 1)")
    local compared=("sno_generate(1)" "clock_timestamp()" "nextval('s')" "gen_random_uuid()")
    if [[ $UUIDV7 == t ]]; then
        names+=("uuidv7()")
        compared+=("uuidv7()")
    fi
    local round_ratios=() ms
    for ((round = 0; round < ROUNDS; round++)); do
        local -A this_round=()
        for name in "${names[@]}"; do
            ms=$(psql_in postgres -c \
                "SELECT elapsed_ms(\$q\$SELECT count($name) FROM generate_series(1, $N)\$q\$)")
            times[$name]+=" $ms"
            this_round[$name]=$ms
        done
        round_ratios+=("$(ratio "${this_round[sno_generate(1)]}" "${this_round[clock_timestamp()]}")")
    done
    for name in "${names[@]}"; do
        # shellcheck disable=SC2086 # the list of times splits into arguments on purpose
        NS[$name]=$(per_row_ns "$(median_of ${times[$name]})" "$N")
    done
    echo "| query shape: SELECT count(f) FROM generate_series(1, $N) | ns/row | sno ratio |"
    echo "|---|---|---|"
    for name in "${compared[@]}"; do
        echo "| $name | ${NS[$name]} | $(ratio "${NS[sno_generate(1)]}" "${NS[$name]}") |"
    done
    echo
    echo "target: sno_generate(1) <= 1.15x clock_timestamp(): $(ratio "${NS[sno_generate(1)]}" "${NS[clock_timestamp()]}")x" \
        "(medians; round by round: ${round_ratios[*]})"
    # clock_timestamp() returns by value; an ID is 10 bytes, so it is allocated in the per-row
    # memory context, which then has to be reset for every row. point(random(), 1) against
    # random() shows what that costs a built-in (plus one more function call).
    echo "sno_generate(1) - clock_timestamp(): $(diff_ns "${NS[sno_generate(1)]}" "${NS[clock_timestamp()]}") ns/row;" \
        "a by-reference result, point(random(), 1) - random(): $(diff_ns "${NS[point(random(), 1)]}" "${NS[random()]}") ns/row"
    echo
}

# 2 ---------------------------------------------------------------------------------------------
two_sessions() {
    log "two sessions at once, $N IDs each, $REPS times"
    local query="SELECT count(sno_generate(1)) FROM generate_series(1, $N)"
    local alone pairs=() out=$CLUSTER_DIR/two_sessions
    alone=$(median_ms "$query")
    for ((i = 0; i < REPS; i++)); do
        psql_in postgres -c "SELECT elapsed_ms(\$q\$$query\$q\$)" >"$out.1" &
        psql_in postgres -c "SELECT elapsed_ms(\$q\$$query\$q\$)" >"$out.2" &
        wait
        pairs+=("$(sort -g "$out.1" "$out.2" | tail -1)") # the slower session of the pair
    done
    local slowest
    slowest=$(median_of "${pairs[@]}")
    echo "| sno_generate(1) | ns/ID per session | ratio |"
    echo "|---|---|---|"
    echo "| one session alone | $(per_row_ns "$alone" "$N") | 1.00 |"
    echo "| each of two sessions at once (slower one, median of $REPS) | $(per_row_ns "$slowest" "$N") | $(ratio "$slowest" "$alone") |"
    echo
    echo "target: <= 1.3x; stalls on a spent pool during this run: $(psql_in postgres -c 'SELECT overflow_stalls FROM sno_generator_stats()')"
    echo
}

# 3 ---------------------------------------------------------------------------------------------
insert_costs() {
    log "INSERT of $ROWS rows with a generated primary key"
    psql_in postgres <<'SQL'
CREATE TABLE t_bigint (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, n int);
CREATE TABLE t_uuid (id uuid DEFAULT gen_random_uuid() PRIMARY KEY, n int);
CREATE TABLE t_sno (id sno DEFAULT sno_generate(1) PRIMARY KEY, n int);
SQL
    local types=(bigint uuid sno)
    if [[ $UUIDV7 == t ]]; then
        psql_in postgres -c "CREATE TABLE t_uuidv7 (id uuid DEFAULT uuidv7() PRIMARY KEY, n int)"
        types+=(uuidv7)
    fi
    declare -A MS
    local type
    for type in "${types[@]}"; do
        psql_in postgres -c "CHECKPOINT" >/dev/null
        MS[$type]=$(psql_in postgres -c "SELECT elapsed_ms('INSERT INTO t_$type (n) SELECT g FROM generate_series(1, $ROWS) g')")
    done
    echo "| INSERT $ROWS rows, generated primary key | s | sno ratio |"
    echo "|---|---|---|"
    for type in "${types[@]}"; do
        echo "| $type | $(awk -v ms="${MS[$type]}" 'BEGIN { printf "%.1f", ms / 1000 }') | $(ratio "${MS[sno]}" "${MS[$type]}") |"
    done
    echo
    echo "target: <= 1.1x bigint and < 1x uuid"
    echo
}

# 4 ---------------------------------------------------------------------------------------------
pgbench_costs() {
    log "pgbench, 8 clients, ${PGBENCH_SECONDS}s each"
    local script tps_sno tps_seq
    script=$CLUSTER_DIR/bench.sql
    run_pgbench() {
        echo "SELECT $1;" >"$script"
        chown postgres "$script"
        pg_client pgbench -n -c 8 -j 2 -T "$PGBENCH_SECONDS" -f "$script" postgres 2>/dev/null \
            | awk '/^tps/ { print $3 }'
    }
    tps_sno=$(run_pgbench "sno_generate(1)")
    tps_seq=$(run_pgbench "nextval('s')")
    echo "| pgbench -c 8, SELECT f | transactions/s | sno ratio |"
    echo "|---|---|---|"
    echo "| sno_generate(1) | $tps_sno | 1.00 |"
    echo "| nextval('s') | $tps_seq | $(ratio "$tps_sno" "$tps_seq") |"
    if [[ $UUIDV7 == t ]]; then
        local tps_uuidv7
        tps_uuidv7=$(run_pgbench "uuidv7()")
        echo "| uuidv7() | $tps_uuidv7 | $(ratio "$tps_sno" "$tps_uuidv7") |"
    fi
    echo
}

main() {
    start_bench_cluster
    echo "sno_generate benchmark, $(date -u +%Y-%m-%d), $(psql_in postgres -c 'SHOW server_version'), $(nproc) cores; ratios measured in the same run"
    echo
    [[ " $PARTS " != *" 1 "* ]] || function_costs
    [[ " $PARTS " != *" 2 "* ]] || two_sessions
    [[ " $PARTS " != *" 3 "* ]] || insert_costs
    [[ " $PARTS " != *" 4 "* ]] || pgbench_costs
}

main
