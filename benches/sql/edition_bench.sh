#!/usr/bin/env bash
# The SQL edition (sql/edition/, docs/managed.md) beside native sno, all in one run on one
# throwaway cluster that has both, and prints tables of figures and ratios to native sno (issue
# 46). The edition is what a managed service without sno's library gets, so the question is what
# it costs against the native extension and against what such a service offers otherwise:
#   1. per ID in bulk: SELECT count(f) FROM generate_series(1, N) for sno_generate(1),
#      sno_sql.generate(1), gen_random_uuid(), nextval('s'), a plain-SQL UUIDv7 and a plain-SQL
#      ULID (below), in ROUNDS interleaved rounds; and the pieces of sno_sql.generate (its
#      sequence, the ID built from two integers, the clock unit) to show where its time goes.
#   2. one ID per statement: pgbench, SELECT f, 1 and 2 clients, PGBENCH_SECONDS each, REPS
#      interleaved repetitions: transactions per second.
#   3. INSERT of ROWS rows with the generated key as PRIMARY KEY: native sno, the edition, bigint
#      identity, uuid v4, the SQL UUIDv7; REPS interleaved repetitions; table and index sizes.
#   4. text output over ROWS IDs: count(sno_sql.to_text(id)) against native count(id::text)
#      (and uuid's id::text), ROUNDS interleaved rounds.
# On PostgreSQL 18 and later the built-in uuidv7() joins parts 1 to 3.
#
# The plain-SQL UUIDv7 and ULID are what a service without extensions is usually given instead
# (benches/sql/edition_peers.sql). Where the edition's time goes, in instructions that no other
# work on the machine moves: benches/sql/edition_instructions.sh.
#
# Runs against the PostgreSQL of PG_CONFIG (default: this checkout's 15; scripts/pg_config.sh
# MAJOR prints another major's), with a release build of sno installed in it (scripts/install.sh
# MAJOR) and pgcrypto (the ULID's random bytes); run as root. About 6 minutes on 2 cores.
# Usage: benches/sql/edition_bench.sh      (N=200,000, ROWS=1,000,000, ROUNDS=5, REPS=3,
#                                          PGBENCH_SECONDS=4)
#        N=20000 ROWS=20000 ROUNDS=1 REPS=1 PGBENCH_SECONDS=1 benches/sql/edition_bench.sh
#                                          (smoke test)
#        PARTS="1 4" benches/sql/edition_bench.sh   (only the parts named)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
source benches/sql/timing.sh
source benches/sql/edition_setup.sh

N=${N:-200000}
ROWS=${ROWS:-1000000}
ROUNDS=${ROUNDS:-5}
REPS=${REPS:-3}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-4}
PARTS=${PARTS:-1 2 3 4}

log() { echo "==> $*" >&2; }

start_bench_cluster() {
    start_cluster /tmp/sno-bench-edition 5600 >/dev/null
    # As generate_bench.sh: durability and checkpoints out of the measurement; JIT and
    # parallelism off so every function is measured in one process on equal terms. A fixed
    # partition for native sno, as a production server would have.
    psql_in postgres <<'SQL'
ALTER SYSTEM SET shared_buffers = '1GB';
ALTER SYSTEM SET fsync = off;
ALTER SYSTEM SET synchronous_commit = off;
ALTER SYSTEM SET max_wal_size = '20GB';
ALTER SYSTEM SET jit = off;
ALTER SYSTEM SET max_parallel_workers_per_gather = 0;
ALTER SYSTEM SET sno.partition = 1;
SQL
    restart_cluster
    UUIDV7=$(psql_in postgres -c "SELECT current_setting('server_version_num')::int >= 180000")
    setup_edition_and_peers "$CLUSTER_DIR"
    create_elapsed_ms postgres
    # Each generator once before measuring: the edition's first ID in a session checks the
    # configuration and the WAL timeline, and each function's plan is cached after it.
    psql_in postgres -c "SELECT sno_generate(1), sno_sql.generate(1), uuidv7_sql(), ulid_sql()" >/dev/null
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
per_row_us() { awk -v ms="$1" -v n="$2" 'BEGIN { printf "%.3f", ms * 1e3 / n }'; }
seconds() { awk -v ms="$1" 'BEGIN { printf "%.2f", ms / 1000 }'; }
elapsed() { psql_in postgres -c "SELECT elapsed_ms(\$q\$$1\$q\$)"; }

GENERATORS=("sno_generate(1)" "sno_sql.generate(1)" "gen_random_uuid()" "nextval('s')"
    "uuidv7_sql()" "ulid_sql()")
# 1 ---------------------------------------------------------------------------------------------
# Each function is timed in ROUNDS rounds that take turns, so that a slow spell of the VM falls
# on all of them alike; the median round counts. The last four rows take sno_sql.generate
# apart: its sequence (nextval), that and the ID made of two integers (sno_sql.from_bits; its
# second half is the row number g, not a constant, which the planner would fold into text
# once), the clock's 4 ms unit, and the query alone.
function_costs() {
    log "per ID in bulk, $N rows each, $ROUNDS rounds"
    local names=("${GENERATORS[@]}")
    [[ $UUIDV7 != t ]] || names+=("uuidv7()")
    local pieces=("sno_sql.from_bits(nextval('s'), g)" "sno_sql.clock_unit()" "1")
    local -A times
    local round name
    for ((round = 0; round < ROUNDS; round++)); do
        for name in "${names[@]}" "${pieces[@]}"; do
            times[$name]+=" $(elapsed "SELECT count($name) FROM generate_series(1, $N) g")"
        done
    done
    local -A US
    for name in "${names[@]}" "${pieces[@]}"; do
        # shellcheck disable=SC2086 # the list of times splits into arguments on purpose
        US[$name]=$(per_row_us "$(median_of ${times[$name]})" "$N")
    done
    echo "| SELECT count(f) FROM generate_series(1, $N) | µs/ID | x native sno |"
    echo "|---|--:|--:|"
    for name in "${names[@]}"; do
        echo "| \`$name\` | ${US[$name]} | $(ratio "${US[$name]}" "${US[sno_generate(1)]}") |"
    done
    echo "| *pieces of \`sno_sql.generate(1)\`:* | | |"
    for name in "nextval('s')" "${pieces[@]}"; do
        echo "| \`$name\` | ${US[$name]} | $(ratio "${US[$name]}" "${US[sno_generate(1)]}") |"
    done
    echo
}

# 2 ---------------------------------------------------------------------------------------------
# One ID per statement is how an application's INSERT ... RETURNING or a DEFAULT sees it: the
# round trip and the statement dominate, and the function's share is what is left. Interleaved
# as part 1; the median of REPS runs counts.
pgbench_costs() {
    log "pgbench, 1 and 2 clients, ${PGBENCH_SECONDS}s each, $REPS times"
    local names=("${GENERATORS[@]}")
    [[ $UUIDV7 != t ]] || names+=("uuidv7()")
    local dir=$CLUSTER_DIR/pgbench
    mkdir -p "$dir"
    local -A scripts tps
    local i name clients
    for i in "${!names[@]}"; do
        scripts[${names[$i]}]=$dir/$i.sql
        echo "SELECT ${names[$i]};" >"$dir/$i.sql"
    done
    chown -R "$PG_OS_USER": "$dir"
    for ((i = 0; i < REPS; i++)); do
        for name in "${names[@]}"; do
            for clients in 1 2; do
                tps[$name,$clients]+=" $(pg_client pgbench -n -c "$clients" -j "$clients" \
                    -T "$PGBENCH_SECONDS" -f "${scripts[$name]}" postgres 2>/dev/null |
                    awk '/^tps/ { printf "%.0f", $3 }')"
            done
        done
    done
    echo "| pgbench, SELECT f, ${PGBENCH_SECONDS} s, median of $REPS | tps, 1 client | of native | tps, 2 clients | of native |"
    echo "|---|--:|--:|--:|--:|"
    local one two one_sno two_sno
    # shellcheck disable=SC2086 # the lists of figures split into arguments on purpose
    one_sno=$(median_of ${tps[sno_generate(1),1]})
    # shellcheck disable=SC2086
    two_sno=$(median_of ${tps[sno_generate(1),2]})
    for name in "${names[@]}"; do
        # shellcheck disable=SC2086
        one=$(median_of ${tps[$name,1]})
        # shellcheck disable=SC2086
        two=$(median_of ${tps[$name,2]})
        echo "| \`$name\` | $one | $(ratio "$one" "$one_sno") | $two | $(ratio "$two" "$two_sno") |"
    done
    echo
}

# 3 ---------------------------------------------------------------------------------------------
# The key as a table gets it: a DEFAULT filling a PRIMARY KEY, so the index's insertion order
# (time-ordered or random) counts as much as the function. Tables are made anew for each
# repetition, after a checkpoint, so each INSERT starts from the same state.
insert_costs() {
    log "INSERT of $ROWS rows with a generated primary key, $REPS times"
    local -A column=(
        [sno]="sno DEFAULT sno_generate(1)"
        [sno_sql]="sno_sql.sno DEFAULT sno_sql.generate(1)"
        [bigint]="bigint GENERATED ALWAYS AS IDENTITY"
        [uuid_v4]="uuid DEFAULT gen_random_uuid()"
        [uuidv7_sql]="uuid DEFAULT uuidv7_sql()"
        [uuidv7]="uuid DEFAULT uuidv7()"
    )
    local types=(sno sno_sql bigint uuid_v4 uuidv7_sql)
    [[ $UUIDV7 != t ]] || types+=(uuidv7)
    local -A times
    local i type
    for ((i = 0; i < REPS; i++)); do
        for type in "${types[@]}"; do
            ((i == 0)) || psql_in postgres -c "DROP TABLE t_$type"
            psql_in postgres -c "CREATE TABLE t_$type (id ${column[$type]} PRIMARY KEY, n int)" \
                -c CHECKPOINT
            times[$type]+=" $(elapsed "INSERT INTO t_$type (n) SELECT g FROM generate_series(1, $ROWS) g")"
        done
    done
    echo "| INSERT $ROWS rows, generated primary key (median of $REPS) | s | x native sno | table MB | index MB |"
    echo "|---|--:|--:|--:|--:|"
    local ms ms_sno sizes
    # shellcheck disable=SC2086 # the list of times splits into arguments on purpose
    ms_sno=$(median_of ${times[sno]})
    for type in "${types[@]}"; do
        # shellcheck disable=SC2086
        ms=$(median_of ${times[$type]})
        sizes=$(psql_in postgres -F ' | ' -c "SELECT round(pg_relation_size('t_$type') / 1048576.0, 1),
            round(pg_relation_size('t_${type}_pkey') / 1048576.0, 1)")
        echo "| \`${column[$type]}\` | $(seconds "$ms") | $(ratio "$ms" "$ms_sno") | $sizes |"
    done
    echo
}

# 4 ---------------------------------------------------------------------------------------------
# Reading IDs out as text, as every client that prints or sends them does. The IDs are made
# first into tables of their own (part 3's may not exist, with PARTS); then rounds as part 1.
# The last row is the scan and count alone, what every row costs before its text.
text_costs() {
    log "text output of $ROWS IDs, $ROUNDS rounds"
    psql_in postgres <<SQL
CREATE TABLE text_sno AS SELECT sno_generate(1) AS id FROM generate_series(1, $ROWS);
CREATE TABLE text_sno_sql AS SELECT sno_sql.generate(1) AS id FROM generate_series(1, $ROWS);
CREATE TABLE text_uuid AS SELECT gen_random_uuid() AS id FROM generate_series(1, $ROWS);
VACUUM ANALYZE text_sno, text_sno_sql, text_uuid;
SQL
    # Each: what is counted, then the table.
    local names=("id::text text_sno" "sno_sql.to_text(id) text_sno_sql" "id::text text_uuid"
        "id text_sno_sql")
    local -A times
    local round name
    for ((round = 0; round < ROUNDS; round++)); do
        for name in "${names[@]}"; do
            times[$name]+=" $(elapsed "SELECT count(${name% *}) FROM ${name#* }")"
        done
    done
    local -A US
    for name in "${names[@]}"; do
        # shellcheck disable=SC2086 # the list of times splits into arguments on purpose
        US[$name]=$(per_row_us "$(median_of ${times[$name]})" "$ROWS")
    done
    echo "| SELECT count(f) over $ROWS IDs (median of $ROUNDS) | µs/ID | x native sno |"
    echo "|---|--:|--:|"
    local native="id::text text_sno"
    echo "| native: \`count(id::text)\`, sno | ${US[$native]} | 1.00 |"
    echo "| edition: \`count(sno_sql.to_text(id))\` | ${US[sno_sql.to_text(id) text_sno_sql]} | $(ratio "${US[sno_sql.to_text(id) text_sno_sql]}" "${US[$native]}") |"
    echo "| \`count(id::text)\`, uuid | ${US[id::text text_uuid]} | $(ratio "${US[id::text text_uuid]}" "${US[$native]}") |"
    echo "| the scan alone: \`count(id)\`, edition | ${US[id text_sno_sql]} | $(ratio "${US[id text_sno_sql]}" "${US[$native]}") |"
    echo
}

main() {
    local t0=$SECONDS
    start_bench_cluster
    echo "sno's SQL edition beside native sno, $(date -u +%Y-%m-%d), $(psql_in postgres -c 'SHOW server_version')," \
        "$(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)); ratios measured in the same run"
    echo
    [[ " $PARTS " != *" 1 "* ]] || function_costs
    [[ " $PARTS " != *" 2 "* ]] || pgbench_costs
    [[ " $PARTS " != *" 3 "* ]] || insert_costs
    [[ " $PARTS " != *" 4 "* ]] || text_costs
    log "done in $((SECONDS - t0)) s"
}

main
