#!/usr/bin/env bash
# sno through the drivers applications use, against a throwaway cluster: Python's psycopg 3
# and asyncpg (tests/clients/python_drivers.py), with Debian's packages of them.
#
# Needs: root, sno installed into PostgreSQL 15, python3-psycopg and python3-asyncpg (setup.sh).
# Usage: tests/server/clients.sh   (prints PASS/FAIL per check, then "N passed, M failed")
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

cleanup() {
    local rc=$?
    stop_cluster
    report_if_aborted "$rc"
}

start_cluster /tmp/sno-clients-test 5610 >/dev/null
trap cleanup EXIT
psql_in postgres -c "CREATE EXTENSION sno" >/dev/null

# The system's Python, where Debian installs the drivers (not a pyenv or virtualenv one).
if PGHOST=$PGHOST_TEST PGPORT=$PGPORT_TEST PGUSER=postgres \
    /usr/bin/python3 "$here/../clients/python_drivers.py"; then
    check "Python drivers" true
else
    check "Python drivers" false
fi
finish
