#!/usr/bin/env bash
# Benchmarks the `sno` column type against `bigint` and `uuid` inside PostgreSQL (PG_CONFIG's;
# default this checkout's 15):
#   1. ORDER BY of the column (in-memory quicksort, checked in EXPLAIN ANALYZE); and the same
#      sort with a second column carried along (see measure_sort for why),
#   2. btree CREATE INDEX,
#   3. table and index size,
#   4. COPY (SELECT col FROM t) TO '/dev/null' (text output functions).
# Everything happens in ONE run on ONE throwaway cluster, so the ratios compare like with like
# even when absolute times are noisy (other work on the machine).
#
# Needs: a release build of sno installed into that PostgreSQL (scripts/install.sh MAJOR), run
# as root (server binaries are run as the `postgres` user, PostgreSQL refuses to run as root).
#
# Usage: benches/sql/type_bench.sh            # 10,000,000 rows per table
#        ROWS=100000 benches/sql/type_bench.sh # quick smoke test
# Environment: ROWS (default 10000000), REPS (default 3), BENCH_DIR (default /tmp/sno-bench-type).
set -euo pipefail

ROWS=${ROWS:-10000000}
REPS=${REPS:-3}
DIR=${BENCH_DIR:-/tmp/sno-bench-type}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
TYPES=(bigint uuid sno)

[[ $ROWS =~ ^[1-9][0-9]*$ ]] || { echo "ROWS must be a positive integer, got '$ROWS'" >&2; exit 2; }
[[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "REPS must be a positive integer, got '$REPS'" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run as root (the server is started as the postgres user)" >&2; exit 2; }

log() { echo "==> $*" >&2; }

# Values of each type. sno: realistic IDs (30 days of times, random sequence) in random physical
# order, so the sort has real work to do, like the other two.
value_expr() {
    case $1 in
    bigint) echo "(random() * 9e18)::bigint" ;;
    uuid) echo "gen_random_uuid()" ;;
    sno) echo "sno_from_parts('2024-01-01'::timestamptz + (random() * 86400 * 30) * interval '1 second', 1, 1, (random() * 65535)::int)" ;;
    esac
}

# ---- cluster ----------------------------------------------------------------------------------

start_bench_cluster() {
    start_cluster "$DIR" 5499
    # Sized for a 2-core, 24 GiB machine. Parallelism off: every timing is one process, so the
    # types are compared on equal terms. work_mem large so ORDER BY of 10M rows sorts in memory.
    # Durability off and a huge max_wal_size: no fsync or checkpoint inside a measurement.
    cat >>"$CLUSTER_DIR/data/postgresql.conf" <<EOF

# --- sno type benchmark ---
shared_buffers = 2GB
work_mem = 2GB
maintenance_work_mem = 2GB
max_parallel_workers_per_gather = 0
max_parallel_maintenance_workers = 0
fsync = off
synchronous_commit = off
full_page_writes = off
wal_level = minimal
max_wal_senders = 0
max_wal_size = 20GB
checkpoint_timeout = 1h
jit = off
autovacuum = off
client_min_messages = warning
EOF
    restart_cluster
    psql_in postgres -c "CREATE DATABASE bench"
}

# Runs SQL (argument or stdin) in the bench database; unaligned, tuples only, stops on error.
sql() {
    psql_in bench "$@"
}

# ---- setup ------------------------------------------------------------------------------------

# Helpers inside the database: timing with clock_timestamp() in the server, so psql round trips
# and process start-up are not measured; results kept in a table so medians and ratios are
# computed in one place.
create_helpers() {
    sql <<'SQL'
CREATE EXTENSION sno;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;

CREATE TABLE results (metric text, typ text, rep int, ms float8);
CREATE TABLE sort_methods (metric text, typ text, rep int, line text);

-- Milliseconds taken by one statement.
CREATE FUNCTION bench_ms(stmt text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
    t0 := clock_timestamp();
    EXECUTE stmt;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- Execution time of a query under EXPLAIN ANALYZE (TIMING OFF: no per-row clock reads), and its
-- "Sort Method" line, which says whether the sort stayed in memory.
CREATE FUNCTION explain_sort(query text, OUT ms float8, OUT sort_line text)
LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) ' || query LOOP
        IF line ~ 'Sort Method' THEN sort_line := btrim(line); END IF;
        IF line ~ '^Execution Time' THEN
            ms := substring(line FROM '([0-9.]+) ms')::float8;
        END IF;
    END LOOP;
END $$;
SQL
}

load_tables() {
    local t
    for t in "${TYPES[@]}"; do
        log "loading $ROWS rows of $t"
        sql -c "CREATE TABLE t_$t (v $t NOT NULL)" \
            -c "INSERT INTO t_$t SELECT $(value_expr "$t") FROM generate_series(1, $ROWS)"
    done
    # Frozen, all-visible pages and fresh statistics: no hint-bit writes during measurements.
    log "vacuuming"
    sql -c "VACUUM (FREEZE, ANALYZE) t_bigint, t_uuid, t_sno" -c "CHECKPOINT"
    # Bulk loads and VACUUM go through small buffer rings; read the tables into shared buffers
    # so every measurement starts from the same warm state.
    for t in "${TYPES[@]}"; do sql -c "SELECT pg_prewarm('t_$t')" >/dev/null; done
}

# ---- measurements -----------------------------------------------------------------------------
# Repetitions go round-robin over the types (rep 1: bigint, uuid, sno; rep 2: ...), so a burst
# of background load spreads over all types instead of hitting one.

# One timed sort, recording its execution time and its "Sort Method" line under `metric`.
record_sort() {
    local metric=$1 t=$2 rep=$3 query=$4
    sql <<SQL
WITH e AS MATERIALIZED (SELECT * FROM explain_sort('$query')),
     r AS (INSERT INTO results SELECT '$metric', '$t', $rep, ms FROM e)
INSERT INTO sort_methods SELECT '$metric', '$t', $rep, sort_line FROM e;
SQL
}

# Two sorts per type (no LIMIT in either: that would be a top-N heapsort, not a full sort):
#  - sort:       SELECT v ... ORDER BY v, the measurement the targets are about. PostgreSQL 15
#                sorts a single pass-by-value column (bigint) as bare Datums, without forming
#                tuples ("begin datum sort" under trace_sort); uuid and sno, passed by
#                reference, always go through a tuple sort.
#  - sort_tuple: SELECT v, ctid ... ORDER BY v, a tuple sort for all three types, which
#                separates the cost of the type's comparisons from that fast path.
measure_sort() {
    local rep t
    for t in "${TYPES[@]}"; do # warm-up, not recorded: the first sort pays for memory allocation
        sql -c "SELECT explain_sort('SELECT v FROM t_$t ORDER BY v')" >/dev/null
    done
    for rep in $(seq "$REPS"); do
        for t in "${TYPES[@]}"; do
            log "sort $t (rep $rep)"
            record_sort sort "$t" "$rep" "SELECT v FROM t_$t ORDER BY v"
            record_sort sort_tuple "$t" "$rep" "SELECT v, ctid FROM t_$t ORDER BY v"
        done
    done
}

measure_index() {
    local rep t
    for rep in $(seq "$REPS"); do
        for t in "${TYPES[@]}"; do
            log "CREATE INDEX $t (rep $rep)"
            sql -c "DROP INDEX IF EXISTS i_$t" -c "CHECKPOINT" \
                -c "INSERT INTO results SELECT 'index', '$t', $rep, bench_ms('CREATE INDEX i_$t ON t_$t (v)')"
        done
    done
}

measure_copy() {
    local rep t
    for rep in $(seq "$REPS"); do
        for t in "${TYPES[@]}"; do
            log "COPY $t (rep $rep)"
            sql -c "INSERT INTO results SELECT 'copy', '$t', $rep, bench_ms(\$q\$COPY (SELECT v FROM t_$t) TO '/dev/null'\$q\$)"
        done
    done
}

# Sizes after VACUUM, in MB, stored as "results" rows with rep 0.
measure_sizes() {
    sql -c "VACUUM t_bigint, t_uuid, t_sno"
    local t
    for t in "${TYPES[@]}"; do
        sql -c "INSERT INTO results VALUES
            ('table_mb', '$t', 0, pg_relation_size('t_$t') / 1048576.0),
            ('index_mb', '$t', 0, pg_relation_size('i_$t') / 1048576.0)"
    done
}

# ---- report -----------------------------------------------------------------------------------

report() {
    local version
    version=$(sql -c "SHOW server_version")
    echo
    echo "# sno type benchmark"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- PostgreSQL: $version ($(sql -c "SELECT extversion FROM pg_extension WHERE extname = 'sno'" | sed 's/^/sno /'))"
    echo "- rows: $ROWS per table; times are the median of $REPS runs; single process (no parallel workers)"
    echo "- ratios measured in the same run"
    echo "- host: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; other processes may have run at the same time, so read the ratios"
    echo
    sql -F '|' <<'SQL' | awk -F'|' '
        BEGIN {
            printf "| %-36s | %10s | %10s | %10s | %10s | %10s |\n", "measure", "bigint", "uuid", "sno", "sno/bigint", "sno/uuid"
            printf "|%s|%s:|%s:|%s:|%s:|%s:|\n", "--------------------------------------", "-----------", "-----------", "-----------", "-----------", "-----------"
        }
        { printf "| %-36s | %10s | %10s | %10s | %10s | %10s |\n", $1, $2, $3, $4, $5, $6 }'
WITH med AS (
    SELECT metric, typ, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS v
    FROM results GROUP BY metric, typ
), wide AS (
    SELECT metric,
           max(v) FILTER (WHERE typ = 'bigint') AS b,
           max(v) FILTER (WHERE typ = 'uuid') AS u,
           max(v) FILTER (WHERE typ = 'sno') AS s
    FROM med GROUP BY metric
)
SELECT CASE metric
           WHEN 'sort' THEN 'ORDER BY (in-memory sort), ms'
           WHEN 'sort_tuple' THEN 'ORDER BY, tuple sort for all (*), ms'
           WHEN 'index' THEN 'CREATE INDEX (btree), ms'
           WHEN 'copy' THEN 'COPY (SELECT col) TO /dev/null, ms'
           WHEN 'table_mb' THEN 'table size, MB'
           WHEN 'index_mb' THEN 'index size, MB'
       END,
       round(b::numeric, 1), round(u::numeric, 1), round(s::numeric, 1),
       round((s / b)::numeric, 2) || 'x', round((s / u)::numeric, 2) || 'x'
FROM wide
ORDER BY array_position(ARRAY['sort', 'sort_tuple', 'index', 'copy', 'table_mb', 'index_mb'], metric);
SQL
    echo
    echo "(*) SELECT v, ctid ... ORDER BY v: bigint's plain single-column sort is a PostgreSQL 15"
    echo "    Datum sort (pass-by-value types only); with a second column all three types go"
    echo "    through the same tuple sort, so this row compares the types' comparison costs."
    echo
    echo "Targets (sort, plain ORDER BY row):"
    sql -F '|' <<'SQL' | awk -F'|' '{ printf "- sno within 1.3x of bigint: %s (%sx)\n- sno no slower than uuid:   %s (%sx)\n", $1, $2, $3, $4 }'
WITH m AS (
    SELECT typ, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS v
    FROM results WHERE metric = 'sort' GROUP BY typ
), r AS (
    SELECT (SELECT v FROM m WHERE typ = 'sno') / (SELECT v FROM m WHERE typ = 'bigint') AS sb,
           (SELECT v FROM m WHERE typ = 'sno') / (SELECT v FROM m WHERE typ = 'uuid') AS su
)
SELECT CASE WHEN sb <= 1.3 THEN 'MET' ELSE 'NOT MET' END, round(sb::numeric, 2),
       CASE WHEN su <= 1.0 THEN 'MET' ELSE 'NOT MET' END, round(su::numeric, 2)
FROM r;
SQL
    echo
    echo "Sort method (EXPLAIN ANALYZE, last run of each type):"
    sql -F '|' -c "SELECT DISTINCT ON (metric, typ) metric, typ, coalesce(line, '(no Sort node)')
                   FROM sort_methods ORDER BY metric, typ, rep DESC" |
        awk -F'|' '{ printf "- %-10s %-6s %s\n", $1, $2, $3 }'
    local spilled
    spilled=$(sql -c "SELECT count(*) FROM sort_methods WHERE line IS NULL OR line !~ 'quicksort +Memory'")
    if [[ $spilled != 0 ]]; then
        echo "WARNING: $spilled sort run(s) were not an in-memory quicksort; the sort times are not comparable."
    else
        echo "- all $((2 * REPS * ${#TYPES[@]})) timed sorts were in-memory quicksorts"
    fi
}

main() {
    local t0=$SECONDS
    log "starting a throwaway cluster in $DIR"
    start_bench_cluster
    log "PostgreSQL on port $CLUSTER_PORT, socket in $DIR"
    create_helpers
    load_tables
    measure_sort
    measure_index
    measure_copy
    measure_sizes
    report
    log "done in $((SECONDS - t0)) s"
}

main "$@"
