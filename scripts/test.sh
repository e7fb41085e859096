#!/usr/bin/env bash
# Runs every test, on every PostgreSQL major the project tests (or the ones named):
#   - cargo fmt --check and cargo clippy -D warnings;
#   - the core alone (no PostgreSQL, no pgrx): unit, property, concurrency and doc tests;
#   - per major: a test build installed into that PostgreSQL, then the SQL tests (pg_regress,
#     test/) and the whole-server tests (TAP on PostgreSQL::Test::Cluster, tests/tap/),
#     among them pg_upgrade from 15 to that major, and Citus on 15 (skipped, and said so at the
#     end, where Citus is not installed or does not support the major);
#   - the Debian package for 15: built, installed with apt-get, tested, removed.
# Sets up whatever is missing first (scripts/setup.sh).
#
# Usage: scripts/test.sh [MAJOR...]     (default: 15 17 18)
#
# Every major named must be there. Without names, a major whose source package this machine's
# Debian mirror does not serve (scripts/setup.sh exits 3) is left out, and the run ends by
# saying so; any other failure to set up fails the run.
#
# The tests need test builds (they have the sno.test_clock_offset_ms setting, which moves the
# generator's clock); no released library may define it. So the release build replaces the
# test build in the system's PostgreSQL 15 when the tests end, passed or failed, and the last
# check makes sure of it. (17 and 18 are built from source into a cache for the tests only:
# they keep the test build.)
set -euo pipefail
cd "$(dirname "$0")/.."
MAJORS=("$@")
EVERY_MAJOR=false
((${#MAJORS[@]})) || { MAJORS=(15 17 18) && EVERY_MAJOR=true; }
UPGRADE_FROM=15

# 15 also for pg_upgrade's old cluster: every major given gets an upgrade test from it.
setup_status=0
scripts/setup.sh $(printf '%s\n' "$UPGRADE_FROM" "${MAJORS[@]}" | sort -un) || setup_status=$?
if ((setup_status != 0)) && ! { $EVERY_MAJOR && ((setup_status == 3)); }; then
    exit "$setup_status"
fi
NOT_TESTED=()
available=()
for major in "${MAJORS[@]}"; do
    if "$(scripts/pg_config.sh "$major")" --version &>/dev/null; then
        available+=("$major")
    else
        NOT_TESTED+=("$major")
    fi
done
MAJORS=("${available[@]}")

echo "==> cargo fmt --check and cargo clippy -D warnings"
cargo fmt --check
cargo fmt --check --manifest-path tests/clients/rust/Cargo.toml
cargo fmt --check --manifest-path benches/Cargo.toml
cargo clippy --quiet --features test-clock --all-targets -- -D warnings
cargo clippy --quiet --no-default-features --features serde,postgres-types,sqlx --all-targets \
    -- -D warnings
cargo clippy --quiet --manifest-path benches/Cargo.toml --all-targets -- -D warnings

failed=()
run() {
    local name=$1
    shift
    echo "==> $name"
    "$@" || failed+=("$name")
}

run "the core: unit, property, concurrency and doc tests" \
    cargo test --quiet --no-default-features --features serde

install_test_build() {
    echo "==> installing a test build into PostgreSQL $1"
    scripts/install.sh "$1" --test
}

SYSTEM_PG_CONFIG=$(scripts/pg_config.sh 15)
SYSTEM_LIBRARY="$("$SYSTEM_PG_CONFIG" --pkglibdir)/sno.so"
DEB=
install_release_build() {
    echo "==> installing the release build into PostgreSQL 15 in place of the test build"
    if [[ -n $DEB && -f $DEB ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "$(realpath "$DEB")" \
            >/dev/null
    else
        scripts/install.sh 15
    fi
}
trap 'status=$?; trap - EXIT; install_release_build || status=1; exit $status' EXIT

install_test_build "$UPGRADE_FROM"
for major in "${MAJORS[@]}"; do
    [[ $major == "$UPGRADE_FROM" ]] || install_test_build "$major"
    export PG_CONFIG
    PG_CONFIG=$(scripts/pg_config.sh "$major")
    run "PostgreSQL $major: SQL tests (pg_regress)" test/run.sh
    run "PostgreSQL $major: whole-server tests (TAP)" \
        env SNO_UPGRADE_FROM="$(dirname "$("$SYSTEM_PG_CONFIG" --bindir)")" tests/tap/run.sh
done
unset PG_CONFIG

if [[ " ${MAJORS[*]} " == *" 15 "* ]]; then
    echo "==> the Debian package for 15: build, install with apt-get, test, remove"
    DEB=$(scripts/package.sh 15 | tail -n 1)
    run "the Debian package" tests/tap/package.sh "$DEB"
fi

install_release_build
trap - EXIT
if ((${#failed[@]})); then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "==> what the tests leave installed"
if grep -qa test_clock_offset_ms "$SYSTEM_LIBRARY"; then
    echo "FAIL: the installed $SYSTEM_LIBRARY is a test build"
    exit 1
fi
echo "PASS: the installed $SYSTEM_LIBRARY is the release build (no test clock)"
echo "all tests passed on PostgreSQL ${MAJORS[*]}"
if ((${#NOT_TESTED[@]})); then
    echo "NOT TESTED: PostgreSQL ${NOT_TESTED[*]}: this machine's Debian mirror does not serve its" \
        "source package (see scripts/setup.sh's output above)"
fi
# The Citus scenario (tests/tap/t/030_citus.pl) skips itself on these grounds; say so here too,
# where it cannot be missed. scripts/setup.sh builds Citus for 15.
for major in "${MAJORS[@]}"; do
    if ((major > 17)); then
        echo "NOT TESTED: Citus on PostgreSQL $major: Citus 13.2.2 supports PostgreSQL 15 to 17"
    elif [[ ! -f "$("$(scripts/pg_config.sh "$major")" --pkglibdir)/citus.so" ]]; then
        echo "NOT TESTED: Citus on PostgreSQL $major: Citus is not installed for it" \
            "(scripts/setup.sh builds it for 15 with ../shared/tools/citus-build.sh; see its output)"
    fi
done
