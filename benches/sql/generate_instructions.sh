#!/usr/bin/env bash
# What one sno_generate(1) costs against clock_timestamp(), in CPU instructions: exact and
# unmoved by other work on the machine, where generate_bench.sh's nanoseconds on a shared 2-core
# VM move by 20% from round to round (issue 34, item 8).
#
# Each query, SELECT count(f) FROM generate_series(1, n), runs in PostgreSQL's single-user mode
# (`postgres --single`, one backend, no client) under valgrind's callgrind, with 2N and N rows:
# the difference over N is the instructions one row takes, start-up and catalog reads left out.
# The functions:
#   1                      the query's own cost per row (no function called)
#   clock_timestamp()      the target: one clock reading, returned by value
#   sno_generate(1)        one ID, returned by reference (10 bytes)
#   random(), point(random(), 1)
#                          a built-in returned by value and the same wrapped in a by-reference
#                          result: the difference is what returning by reference costs any
#                          function (the allocation, and the per-row memory reset it causes)
# and, from the profile of sno_generate(1): the instructions inside sno (the call, the guard
# against Rust panics, the ID) and, of those, the allocation of the result.
#
# Needs: valgrind, a release build of sno installed into PG_CONFIG's PostgreSQL (default: this
# checkout's 15; scripts/install.sh MAJOR, or Debian's 15 with the .deb); run as root (the
# server runs as `postgres`).
#
# Usage: benches/sql/generate_instructions.sh          N=100000 (default) rows
# Environment: N, BENCH_DIR (default /tmp/sno-bench-generate-instructions).
set -euo pipefail

N=${N:-100000}
DIR=${BENCH_DIR:-/tmp/sno-bench-generate-instructions}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
source benches/sql/callgrind.sh
require_callgrind "$N"

log() { echo "==> $*" >&2; }
FUNCTIONS=("1" "clock_timestamp()" "sno_generate(1)" "random()" "point(random(), 1)")

# A database with the extension; the server is then stopped, since single-user mode needs the
# data directory to itself.
prepare() {
    start_cluster "$DIR" 5590 keep
    psql_in postgres -c "CREATE EXTENSION sno" >/dev/null
    pg_as_postgres pg_ctl -D "$DIR/data" -m fast -w stop >/dev/null
}

# Runs `SELECT count(FUNCTION) FROM generate_series(1, ROWS)` in a single-user session under
# callgrind, counting only what runs inside the executor (standard_ExecutorRun: exported by
# every build, where Debian's inlines exec_simple_query), and prints callgrind's output file.
profile() { # FUNCTION ROWS
    local input=$DIR/input.sql out=$DIR/callgrind.out
    echo "SELECT count($1) FROM generate_series(1, $2);" >"$input"
    rm -f "$out"
    single_user_callgrind standard_ExecutorRun "$DIR/data" sno postgres "$input" "$out" >/dev/null
    echo "$out"
}

total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'; }
# Inclusive instructions of the functions whose name matches $2.
inclusive() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
        awk -v name="$2" '!found && $0 ~ name { gsub(",", "", $1); print $1; found = 1 }'
}

per_row() { # FUNCTION: instructions of one row, (2N rows - N rows) / N
    local twice once
    twice=$(total "$(profile "$1" $((2 * N)))")
    once=$(total "$(profile "$1" "$N")")
    echo $(((twice - once) / N))
}

report() {
    local -A INSTR
    local f
    for f in "${FUNCTIONS[@]}"; do
        log "$f"
        INSTR[$f]=$(per_row "$f")
    done
    local profile_out inside alloc
    profile_out=$(profile "sno_generate(1)" "$N")
    inside=$(inclusive "$profile_out" ':sno_generate_wrapper ')
    alloc=$(inclusive "$profile_out" ':MemoryContextAllocExtended ')
    echo
    echo "# sno_generate(1) against clock_timestamp(): instructions per row (callgrind, single-user mode)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $("$PG_BIN/postgres" --version); N = $N"
    echo
    echo "| SELECT count(f) FROM generate_series(1, n) | instructions per row | of which f |"
    echo "|---|--:|--:|"
    local base=${INSTR[1]} sno=${INSTR[sno_generate(1)]} clock=${INSTR[clock_timestamp()]}
    local by_value=${INSTR[random()]} by_reference=${INSTR[point(random(), 1)]}
    for f in "${FUNCTIONS[@]}"; do
        echo "| $f | ${INSTR[$f]} | $((INSTR[$f] - base)) |"
    done
    echo
    echo "- sno_generate(1) - clock_timestamp(): $((sno - clock)) instructions per row;" \
        "a by-reference result, point(random(), 1) - random(): $((by_reference - by_value))"
    echo "- inside sno (sno_generate_wrapper, inclusive): $((inside / N)) per ID, of which allocating" \
        "the result (MemoryContextAllocExtended): $((alloc / N))"
}

run_report
