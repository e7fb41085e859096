#!/usr/bin/env bash
# Runs every test: the core's unit, property and concurrency tests, and the #[pg_test] tests
# inside a throwaway PostgreSQL 15 server with sno preloaded (as the `postgres` user, since
# PostgreSQL refuses to run as root). Sets up whatever is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

# The test server's data directory; it is also its socket directory, so keep the path short.
PGDATA_DIR=/tmp/sno-test-pgdata

echo "==> cargo pgrx test (core tests and tests inside PostgreSQL)"
cargo pgrx test pg15 --runas postgres --pgdata "$PGDATA_DIR"
