#!/usr/bin/env bash
# What one ID of sno's SQL edition (sno_sql.generate, sql/edition/) costs in CPU instructions,
# beside native sno, gen_random_uuid(), nextval() and the plain-SQL UUIDv7 and ULID
# (benches/sql/edition_peers.sql): exact and unmoved by other work on the machine, where
# edition_bench.sh's rates on a shared 2-core VM move by a third between runs (issue 46).
#
# Two shapes, each in PostgreSQL's single-user mode (`postgres --single`, one backend, no
# client) under valgrind's callgrind, everything counted (parse, plan, execute, commit):
#   - one ID per statement: `SELECT f;` N and 2N times, each statement its own transaction, as
#     pgbench sends them; the difference over N is one statement;
#   - in bulk: `SELECT count(f) FROM generate_series(1, n)` with n = R and 2R; the difference
#     over R is one row.
# Two PL/pgSQL probes show what the language itself costs: pl_one() only returns 1,
# pl_nextval() only returns nextval('s'). From the profile of the edition's statements: the
# instructions PostgreSQL spends setting up a PL/pgSQL function's expressions again in each new
# transaction (ExecInitExprWithParams), and those a statement spends inlining a SQL function
# (the node tree of its body read back from the catalog, stringToNode) for clock_unit().
#
# The edition's clock is moved an hour ahead first, so that every ID takes generate's fast
# path (a move of the clock, at most one per 4 ms unit, is in edition_bench.sh's rates). Each
# session's first ID (the checks of sno_sql.begin_session) comes before the statements counted.
#
# Needs: valgrind, a release build of sno installed into PG_CONFIG's PostgreSQL (default: this
# checkout's 15; scripts/install.sh MAJOR), pgcrypto; run as root (the server runs as
# `postgres`). About 3 minutes of one core.
#
# Usage: benches/sql/edition_instructions.sh              N=1000 statements, R=10000 rows
# Environment: N, R, BENCH_DIR (default /tmp/sno-bench-edition-instructions).
set -euo pipefail

N=${N:-1000}
R=${R:-10000}
DIR=${BENCH_DIR:-/tmp/sno-bench-edition-instructions}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
source benches/sql/callgrind.sh
source benches/sql/edition_setup.sh
require_callgrind "$N"
require_callgrind "$R"

log() { echo "==> $*" >&2; }

prepare() {
    start_cluster "$DIR" 5595 keep
    setup_edition_and_peers "$DIR"
    psql_in postgres <<'SQL' >/dev/null
CREATE FUNCTION pl_one() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$;
CREATE FUNCTION pl_nextval() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN nextval('s'); END $$;
SELECT sno_sql.start_after(sno_sql.from_parts(now() + interval '1 hour', 0, 0, 0));
SQL
    UUIDV7=$(psql_in postgres -c "SELECT current_setting('server_version_num')::int >= 180000")
    pg_as_postgres pg_ctl -D "$DIR/data" -m fast -w stop >/dev/null
}

total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'; }
# Inclusive instructions of the function named $2 (exactly, not its recursive entries).
inclusive() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
        awk -v name=":$2 " '!found && index($0, name) { gsub(",", "", $1); print $1; found = 1 }'
}

# The session's first ID, then COUNT copies of STATEMENT; prints the profile's file.
profile() { # STATEMENT COUNT
    local input=$DIR/input.sql out=$DIR/callgrind.out
    { echo "SELECT sno_sql.generate(1);"; awk -v s="$1" -v n="$2" 'BEGIN { while (n-- > 0) print s }'; } >"$input"
    rm -f "$out"
    # The toggle is the single-user session's own loop: everything after start-up.
    single_user_callgrind PostgresMain "$DIR/data" sno postgres "$input" "$out" >/dev/null
    echo "$out"
}
per_statement() { # F: instructions of `SELECT F;`
    local twice once
    twice=$(total "$(profile "SELECT $1;" $((2 * N)))")
    once=$(total "$(profile "SELECT $1;" "$N")")
    echo $(((twice - once) / N))
}
per_row() { # F: instructions of one row of `SELECT count(F) FROM generate_series(1, n)`
    local twice once
    twice=$(total "$(profile "SELECT count($1) FROM generate_series(1, $((2 * R)));" 1)")
    once=$(total "$(profile "SELECT count($1) FROM generate_series(1, $R);" 1)")
    echo $(((twice - once) / R))
}

report() {
    local functions=("1" "gen_random_uuid()" "sno_generate(1)" "nextval('s')" "uuidv7_sql()"
        "ulid_sql()" "pl_one()" "pl_nextval()" "sno_sql.generate(1)" "sno_sql.clock_unit()")
    [[ $UUIDV7 != t ]] || functions+=("uuidv7()")
    local -A STATEMENT ROW
    local f
    for f in "${functions[@]}"; do
        log "$f"
        STATEMENT[$f]=$(per_statement "$f")
        ROW[$f]=$(per_row "$f")
    done
    local out reinit inline
    out=$(profile "SELECT sno_sql.generate(1);" "$N")
    reinit=$(($(inclusive "$out" ExecInitExprWithParams) / N))
    out=$(profile "SELECT sno_sql.clock_unit();" "$N")
    inline=$(($(inclusive "$out" stringToNode) / N))
    echo
    echo "# sno's SQL edition: instructions per ID (callgrind, single-user mode)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $("$PG_BIN/postgres" --version); N = $N statements, R = $R rows"
    echo
    echo "| f | \`SELECT f;\` | x \`SELECT gen_random_uuid();\` | over \`SELECT 1;\` | a row of \`count(f)\` in bulk | over \`count(1)\` |"
    echo "|---|--:|--:|--:|--:|--:|"
    local base=${STATEMENT[1]} row_base=${ROW[1]} uuid=${STATEMENT[gen_random_uuid()]}
    for f in "${functions[@]}"; do
        printf '| `%s` | %d | %s | %d | %d | %d |\n' "$f" "${STATEMENT[$f]}" \
            "$(awk -v a="${STATEMENT[$f]}" -v b="$uuid" 'BEGIN { printf "%.2f", a / b }')" \
            $((STATEMENT[$f] - base)) "${ROW[$f]}" $((ROW[$f] - row_base))
    done
    echo
    echo "- of \`SELECT sno_sql.generate(1);\`: $reinit instructions setting up the function's" \
        "expressions again for the new transaction (ExecInitExprWithParams, inclusive)"
    echo "- of \`SELECT sno_sql.clock_unit();\`: $inline instructions reading back the body of" \
        "the SQL function that the planner inlines (stringToNode, inclusive), at every planning"
}

run_report
