#!/usr/bin/env bash
# prove's interpreter for the TAP tests (tests/tap.sh): runs one test with perl, and ends it once
# it has run longer than SNO_TAP_TEST_LIMIT seconds. A test that hangs then fails alone, showing
# where it was, instead of holding the whole run (and CI) until CI's own limit kills it silently.
#
# Usage: run_with_limit.sh t/NNN_name.pl      (SNO_TAP_TEST_LIMIT and TESTLOGDIR from tap.sh)
#
# At the limit it prints, on standard error: the end of the test's log, the end of each of its
# nodes' server logs, and the servers' processes (their titles say what each waits for). Then a
# SIGTERM, which PostgreSQL::Test::Cluster turns into a die, so that its END block stops the
# test's nodes; a SIGKILL 60 s later if that does not end it.
set -uo pipefail
test=$1
name=$(basename "$test" .pl)
limit=$SNO_TAP_TEST_LIMIT

show_where_it_hangs() {
    echo "# $test: still running after its limit of $limit s (SNO_TAP_TEST_LIMIT): ended as hung"
    local log
    for log in "$TESTLOGDIR/regress_log_$name" "$TESTLOGDIR/${name}"_*.log; do
        [[ -f $log ]] || continue
        echo "# the end of $log:"
        tail -n 25 "$log" | sed 's/^/#   /'
    done
    echo "# the processes of $(id -un) (the servers', whose titles say what each waits for):"
    ps -u "$(id -u)" -o pid,etime,args | head -n 100 | sed 's/^/#   /'
}

perl "$@" &
pid=$!
# The watchdog writes only to standard error: prove reads the test's standard output until
# every process holding it has ended.
(
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    # A sleep that the trap can end at once (bash runs a trap only after a foreground child).
    pause() { sleep "$1" & sleeper=$!; wait "$sleeper"; }
    pause "$limit"
    kill -0 "$pid" 2>/dev/null || exit 0
    show_where_it_hangs >&2
    kill -TERM "$pid"
    pause 60
    kill -KILL "$pid" 2>/dev/null
) >/dev/null &
watchdog=$!
wait "$pid"
status=$?
kill "$watchdog" 2>/dev/null
wait "$watchdog" 2>/dev/null
exit "$status"
