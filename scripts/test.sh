#!/usr/bin/env bash
# Runs every test: the core's unit, property and concurrency tests, and the #[pg_test] tests
# inside a throwaway PostgreSQL 15 server with sno preloaded (as the `postgres` user, since
# PostgreSQL refuses to run as root). Sets up whatever is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

# The test server's data directory; it is also its socket directory, so keep the path short.
PGDATA_DIR=/tmp/sno-test-pgdata

# The test harness installs with `sudo cp`, which overwrites the library in place: a server
# running with sno loaded (the demo from scripts/run.sh, say) would crash on its next page fault
# into the old code. Removing the file first gives the new build a new inode, as a server
# restart would expect, and leaves running servers on the old one.
rm -f "$(/usr/lib/postgresql/15/bin/pg_config --pkglibdir)/sno.so"

echo "==> cargo pgrx test (core tests and tests inside PostgreSQL)"
cargo pgrx test pg15 --features test-clock --runas postgres --pgdata "$PGDATA_DIR"

# Whole-server scenarios against the build `cargo pgrx test` just installed: dump and restore,
# upgrades, and the shared generator across sessions, reloads, restarts, crashes and a standby.
for scenario in tests/server/dump_restore.sh tests/server/upgrade.sh tests/server/generator.sh; do
    if [[ -x $scenario ]]; then
        echo "==> $scenario"
        "$scenario"
    fi
done
