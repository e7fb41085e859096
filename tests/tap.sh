#!/usr/bin/env bash
# Runs the whole-server TAP tests (tests/t/*.pl) with prove, on PostgreSQL's own test
# framework (PostgreSQL::Test::Cluster: throwaway nodes on free ports, logs in tmp_check/log).
#
# Usage: tests/tap.sh [t/NNN_name.pl ...]     (no argument: every test in tests/t)
#
# Environment:
#   PG_CONFIG      the PostgreSQL to test against (default: this checkout's 15,
#                  scripts/pg_config.sh). Its bin directory goes first in PATH; its pg_regress
#                  and TAP modules (pkglibdir/pgxs/src/test/perl, where
#                  `scripts/get-postgresql.sh --tap-modules` puts them) are the ones used.
#   SNO_TAP_MODULES  where PostgreSQL::Test::Cluster is instead (for a PostgreSQL without it).
#   PROVE_FLAGS    extra prove flags, e.g. "-j2" or "-v" (default: none). The tests are
#                  parallel-safe: scripts/test.sh runs them with -j2 (two at a time), which
#                  passed on every major, with assertions too, on 2 cores with builds beside.
#   PG_OS_USER     the user that runs the servers when this script runs as root (default
#                  postgres; PostgreSQL refuses to run as root).
#   SNO_TAP_KEEP   set to keep the work directory (nodes' data and logs) even when all passed.
#   SNO_TAP_TEST_LIMIT  seconds one test may run before it is ended and fails as hung, with the
#                  end of its log printed (tests/lib/run_with_limit.sh). Default: five times
#                  PG_TEST_TIMEOUT_DEFAULT (180 s unless set), 900 s; the longest test takes
#                  about a minute on two cores.
#   Everything else is passed through to the tests: SNO_* settings (SNO_UPGRADE_FROM for
#   t/pg_upgrade.pl, SNO_PACKAGE_INSTALLED and SNO_PACKAGE_REMOVED set by package.sh, ...),
#   PG_TEST_TIMEOUT_DEFAULT, PG_TEST_NOCLEAN.
#
# A new test: tests/t/NNN_name.pl, one scenario on nodes of its own (it must run alone and
# in any order), using the helpers of tests/lib/SnoTest.pm (documented at its top).
#
# The tests and their helpers (tests/lib) are copied into a fresh directory that PG_OS_USER
# owns, since the checkout may lie where that user cannot enter (root's home). When the client
# or the ORM test is selected, its programs are built here first (as the caller, with the
# toolchains and caches the caller has), or taken from SNO_CLIENTS_BUILT and SNO_ORMS_BUILT
# (directories tests/build_clients.sh and tests/build_orms.sh built), and only the built
# programs are handed over.
#
# Exits non-zero if any test failed; the logs' directory is printed then and kept.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
PG_CONFIG=${PG_CONFIG:-$("$repo/scripts/pg_config.sh" 15)}
PG_OS_USER=${PG_OS_USER:-postgres}

bindir=$("$PG_CONFIG" --bindir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
perl_lib=${SNO_TAP_MODULES:-$pkglibdir/pgxs/src/test/perl}
pg_regress=$pkglibdir/pgxs/src/test/regress/pg_regress
if [[ ! -f $perl_lib/PostgreSQL/Test/Cluster.pm ]]; then
    echo "no PostgreSQL::Test::Cluster in $perl_lib (scripts/get-postgresql.sh --tap-modules)" >&2
    exit 1
fi
if ! perl -MIPC::Run -e 1 2>/dev/null; then
    echo "Perl's IPC::Run is missing (Debian: libipc-run-perl)" >&2
    exit 1
fi

# The tests to run, as paths relative to tests/ (t/NNN_name.pl); a path from the
# repository root or a bare file name works too.
tests=()
if (($#)); then
    for arg in "$@"; do
        name=t/$(basename "$arg")
        [[ -f $here/$name ]] || { echo "no test $here/$name" >&2; exit 1; }
        tests+=("$name")
    done
else
    for file in "$here"/t/*.pl; do
        tests+=("t/$(basename "$file")")
    done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sno-tap.XXXXXX")
cp -r "$here/t" "$here/lib" "$work/"
# The SQL edition's three forms, for the tests that install it (SNO_EDITION_DIR), with an
# upgrade of each to the version VERSION-next (048).
"$repo/scripts/edition-scripts.sh" "$work/edition" --next >/dev/null

# The client and ORM tests run programs built from tests/clients: built now, as the caller, or
# copied from where they were built already (SNO_CLIENTS_BUILT, SNO_ORMS_BUILT: scripts/test.sh
# builds them once, in the background).
# provide_programs TEST_SUFFIX WHAT BUILT BUILD_SCRIPT OUT_DIR (built when a test named ...SUFFIX runs)
provide_programs() {
    local test_word=$1 what=$2 built=$3 build=$4 out=$5
    [[ " ${tests[*]} " == *"$test_word"* ]] || return 0
    if [[ -n $built ]]; then
        echo "==> the $what test programs: copied from $built"
        mkdir -p "$out"
        cp -a "$built/." "$out/"
    else
        echo "==> building the $what test programs"
        "$here/$build" "$out"
    fi
}
provide_programs _clients.pl client "${SNO_CLIENTS_BUILT:-}" build_clients.sh "$work/clients"
provide_programs _orms.pl ORM "${SNO_ORMS_BUILT:-}" build_orms.sh "$work/clients/orms"
mkdir -p "$work/clients"

if [[ $(id -u) -eq 0 ]]; then
    chown -R "$PG_OS_USER": "$work"
    # The SQL edition's test of its extension form (048) puts its two files into this
    # installation's extension directory for a moment, and takes them out again before its
    # pg_tle part (pg_tle refuses a name that has a control file there).
    extension_dir="$("$PG_CONFIG" --sharedir)/extension"
    chgrp "$PG_OS_USER" "$extension_dir" && chmod g+w "$extension_dir"
    as_server_user=(runuser -u "$PG_OS_USER" --)
else
    as_server_user=()
fi

# One initdb for the whole run: Cluster.pm copies INITDB_TEMPLATE instead of running initdb for
# each node (about a second of a core each, some 70 nodes a major). Made as Cluster.pm would
# make it (the environment PostgreSQL::Test::Utils sets, then `initdb --no-sync --auth trust`);
# nodes of another installation, and nodes with initdb options of their own, still run initdb
# (tests/lib/ClusterCompat.pm).
template=$work/initdb_template
"${as_server_user[@]}" env -u LANGUAGE -u LC_ALL LC_MESSAGES=C \
    "$bindir/initdb" --no-sync --auth trust --pgdata "$template" >"$work/initdb_template.log" 2>&1 ||
    { cat "$work/initdb_template.log" >&2; exit 1; }

# Five of the framework's own timeouts: a test that fails waits out a few of them, and one
# that waits longer is hung.
limit=${SNO_TAP_TEST_LIMIT:-$((5 * ${PG_TEST_TIMEOUT_DEFAULT:-180}))}

status=0
# Nodes' data directories, logs and port locks go in the work directory's tmp_check: TESTDIR
# says so to Cluster.pm up to 16, TESTDATADIR and TESTLOGDIR from 17 on.
# shellcheck disable=SC2086 # PROVE_FLAGS is a list of flags
"${as_server_user[@]}" env --chdir="$work" \
    PATH="$bindir:$PATH" \
    PERL5LIB="$perl_lib:$work/lib${PERL5LIB:+:$PERL5LIB}" \
    PG_REGRESS="$pg_regress" \
    PG_CONFIG="$PG_CONFIG" \
    INITDB_TEMPLATE="$template" \
    TESTDIR="$work" \
    TESTDATADIR="$work/tmp_check" \
    TESTLOGDIR="$work/tmp_check/log" \
    PG_TEST_PORT_DIR="$work/tmp_check/portlock" \
    SNO_CLIENTS_DIR="$work/clients" \
    SNO_EDITION_DIR="$work/edition" \
    SNO_TAP_TEST_LIMIT="$limit" \
    prove --timer --exec "bash $work/lib/run_with_limit.sh" ${PROVE_FLAGS:-} "${tests[@]}" ||
    status=$?

if ((status)); then
    echo
    echo "FAILED: logs (each test's regress_log_* and its nodes' server logs) in $work/tmp_check/log"
    exit "$status"
fi
if [[ -n ${SNO_TAP_KEEP:-} ]]; then
    echo "kept: $work"
else
    rm -rf "$work"
fi
