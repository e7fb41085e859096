#!/usr/bin/env bash
# Runs every test: the core's unit, property and concurrency tests, and the #[pg_test] tests
# inside a throwaway PostgreSQL 15 server with sno preloaded (as the `postgres` user, since
# PostgreSQL refuses to run as root), then the whole-server scenarios. Sets up whatever is
# missing first.
#
# The tests need a test build (it has the sno.test_clock_offset_ms setting, which moves the
# shared generator's clock for every session); no released library may define it. So the
# release build replaces the test build in the system PostgreSQL when the tests end, passed or
# failed, and the last check makes sure of it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

echo "==> cargo fmt --check and cargo clippy -D warnings"
cargo fmt --check
cargo fmt --check --manifest-path tests/clients/rust/Cargo.toml
cargo clippy --quiet --features test-clock --all-targets -- -D warnings
cargo clippy --quiet --no-default-features --features postgres-types,sqlx -- -D warnings

# The test server's data directory; it is also its socket directory, so keep the path short.
PGDATA_DIR=/tmp/sno-test-pgdata

# The test harness installs with `sudo cp`, which overwrites the library in place: a server
# running with sno loaded (the demo from scripts/run.sh, say) would crash on its next page fault
# into the old code. Removing the file first gives the new build a new inode, as a server
# restart would expect, and leaves running servers on the old one.
PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
INSTALLED_LIBRARY="$("$PG_CONFIG" --pkglibdir)/sno.so"
rm -f "$INSTALLED_LIBRARY"

# The package built below when there is one (installing it takes seconds), else a build.
DEB=
install_release_build() {
    echo "==> installing the release build in place of the test build"
    if [[ -n $DEB && -f $DEB ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "$(realpath "$DEB")" \
            >/dev/null
    else
        cargo pgrx install --release --pg-config "$PG_CONFIG" >/dev/null
    fi
}
trap 'status=$?; trap - EXIT; install_release_build || status=1; exit $status' EXIT

echo "==> cargo pgrx test (core tests and tests inside PostgreSQL)"
cargo pgrx test pg15 --features test-clock --runas postgres --pgdata "$PGDATA_DIR"

failed_scenarios=()
# Whole-server scenarios against the build `cargo pgrx test` just installed: dump and restore,
# upgrades, and the shared generator across sessions, reloads, restarts, crashes and a standby.
for scenario in tests/server/dump_restore.sh tests/server/upgrade.sh tests/server/generator.sh \
    tests/server/odd_clocks.sh tests/server/clients.sh; do
    echo "==> $scenario"
    bash "$scenario" || failed_scenarios+=("$scenario")
done

echo "==> the Debian package: build, install with apt-get, test, remove"
DEB=$(scripts/package.sh 15 | tail -n 1)
bash tests/server/package.sh "$DEB" || failed_scenarios+=(tests/server/package.sh)

install_release_build
trap - EXIT
if ((${#failed_scenarios[@]})); then
    echo "failed: ${failed_scenarios[*]}"
    exit 1
fi
echo "==> what the tests leave installed"
if grep -qa test_clock_offset_ms "$INSTALLED_LIBRARY"; then
    echo "FAIL: the installed $INSTALLED_LIBRARY is a test build"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "PASS: the installed $INSTALLED_LIBRARY is the release build (no test clock)"
echo "1 passed, 0 failed"
