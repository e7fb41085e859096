#!/usr/bin/env bash
# Runs the SQL regression tests: each tests/sql/NAME.sql goes through psql, and its output must
# equal tests/expected/NAME.out (pg_regress, as PostgreSQL and pgvector test themselves).
#
# Usage: tests/regress.sh [TEST...]          every scheduled test, or only the named ones
#        PG_CONFIG=/path/to/pg_config tests/regress.sh    another PostgreSQL (default: this
#                                                    checkout's 15, scripts/pg_config.sh)
#
# The runner starts a throwaway cluster of that PostgreSQL (scripts/cluster.sh) with sno
# preloaded (sno.partition 4242, sno.backfill_partition 4243), creates the database sno_regress with the extension in
# it, runs pg_regress against it, and stops the cluster and removes its files on exit, passed
# or failed. If anything differs, it prints regression.diffs and leaves the actual output in
# tests/results/NAME.out (git ignores it; SNO_REGRESS_RESULTS names another directory, for runs
# side by side): review it, then copy it over tests/expected/NAME.out to accept it. Exit
# status: pg_regress's.
#
# Needs: root (only the server runs as the postgres OS user; pg_regress and psql run as root
# and connect as the postgres role, so the checkout may be somewhere postgres cannot enter), a
# build of sno installed into that PostgreSQL (scripts/install.sh MAJOR [--test]),
# and its contrib module amcheck (the operators test checks a btree with it).
#
# tests/edition_schedule lists the SQL edition's tests, which run only by name (scripts/test.sh
# names them once a major).
#
# Schedules by major: tests/schedule lists the tests for every supported major, tests/schedule-N
# those that need PostgreSQL N or later (e.g. tests/schedule-16: soft_errors, which calls
# pg_input_is_valid, new in 16). The runner adds each tests/schedule-N with N <= the server's
# major and skips, with a note, a named test that only a later major's schedule lists. Where
# one test's output differs between majors, pg_regress also accepts tests/expected/NAME_1.out
# (then NAME_2.out, ...) in place of NAME.out.
#
# Tests may write files under the output directory, whose path psql gets with
# `\getenv abs_builddir PG_ABS_BUILDDIR`; the server can write there too (server-side COPY).
# Keep errors in the expected output as psql prints them by default (with DETAIL and HINT), and
# show each kind's SQLSTATE once with `\echo :LAST_ERROR_SQLSTATE`: VERBOSITY verbose would also
# print the source file and line of the error, which change with every edit.
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-$("$(dirname "$0")/../scripts/pg_config.sh" 15)}
DATABASE=sno_regress
TEST_DIR=$(cd "$(dirname "$0")" && pwd)

PG_REGRESS="$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress"
# "PostgreSQL 15.8 (Debian 15.8-0+deb12u1)" -> 15; "PostgreSQL 18beta1" -> 18.
MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

# The schedules that apply to this major: the common one, then the per-major ones in order.
schedules=("$TEST_DIR/schedule")
for schedule in "$TEST_DIR"/schedule-*; do
    [ -e "$schedule" ] || continue
    if [ "${schedule##*-}" -le "$MAJOR" ]; then
        schedules+=("$schedule")
    fi
done

# The major whose schedule lists TEST, if it is later than this one.
later_major_of() {
    local schedule
    for schedule in "$TEST_DIR"/schedule-*; do
        if [ -e "$schedule" ] && [ "${schedule##*-}" -gt "$MAJOR" ] &&
            grep -qx "test: *$1" "$schedule"; then
            echo "${schedule##*-}"
            return
        fi
    done
}

# Named tests, less those that only the schedule of a later major lists.
tests=()
for test in "$@"; do
    later=$(later_major_of "$test")
    if [ -n "$later" ]; then
        echo "skipping $test: it needs PostgreSQL $later or later, this is $MAJOR"
    else
        tests+=("$test")
    fi
done
if [ $# -gt 0 ] && [ ${#tests[@]} -eq 0 ]; then
    exit 0
fi

# shellcheck source=../scripts/cluster.sh
source "$TEST_DIR/../scripts/cluster.sh"

# The cluster, its socket and pg_regress's output live in one directory that the server's user
# owns: server-side COPY in the tests writes into the output directory. Stopped and removed on
# exit.
WORK=$(mktemp -d /tmp/sno-regress.XXXXXX)
start_cluster "$WORK" 55470
# The partitions the tests expect; no fsync (the cluster is thrown away) and no JIT (compiling
# the plans of the larger test queries would take longer than running them).
cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF
sno.partition = 4242
sno.backfill_partition = 4243
fsync = off
jit = off
CONF
restart_cluster
psql_in postgres -c "CREATE DATABASE $DATABASE TEMPLATE template0"
psql_in "$DATABASE" -c "CREATE EXTENSION sno"

mkdir "$WORK/out"
chown "$PG_OS_USER": "$WORK/out"
# The SQL edition's plain SQL form, which the edition's tests install with \i.
"$TEST_DIR/../scripts/edition-scripts.sh" "$WORK/out/edition"
regress_args=(--use-existing --bindir="$PG_BIN" --host="$CLUSTER_DIR" --port="$CLUSTER_PORT"
    --user=postgres --dbname="$DATABASE" --inputdir="$TEST_DIR" --outputdir="$WORK/out")
if [ ${#tests[@]} -gt 0 ]; then
    regress_args+=("${tests[@]}")
else
    regress_args+=("${schedules[@]/#/--schedule=}")
fi
RESULTS=${SNO_REGRESS_RESULTS:-$TEST_DIR/results}
rm -rf "$RESULTS"
status=0
"$PG_REGRESS" "${regress_args[@]}" || status=$?
if [ "$status" -ne 0 ]; then
    if [ -f "$WORK/out/regression.diffs" ]; then
        cat "$WORK/out/regression.diffs"
    fi
    if [ -d "$WORK/out/results" ]; then
        mkdir -p "$(dirname "$RESULTS")"
        cp -r "$WORK/out/results" "$RESULTS"
        echo "actual output: $RESULTS/"
    fi
    # The server's log outlives the cluster: a crash or a failed assertion is told there.
    mkdir -p "$RESULTS"
    cp "$CLUSTER_DIR/server.log" "$RESULTS/server.log"
    echo "server log: $RESULTS/server.log"
fi
exit "$status"
