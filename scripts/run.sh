#!/usr/bin/env bash
# Builds and installs sno, starts a throwaway cluster with sno preloaded (as the `postgres`
# user), runs a short demo and says how to connect and stop. Safe to run again: it reinstalls
# and starts the cluster afresh. Sets up only what the demo needs: clang's library for the
# build and this checkout's own installation of PostgreSQL MAJOR (scripts/pg_config.sh); the
# machine's PostgreSQL, if any, is left alone.
#
# Usage: scripts/run.sh [MAJOR]     PostgreSQL 15 (the default), 16, 17 or 18
set -euo pipefail
cd "$(dirname "$0")/.."
MAJOR=${1:-15}
scripts/setup.sh "$MAJOR"
PG_CONFIG=$(scripts/pg_config.sh "$MAJOR")
source scripts/cluster.sh

echo "==> building and installing sno (release) into PostgreSQL $MAJOR"
# A demo server of an earlier run keeps the old library until start_cluster below stops it.
scripts/install.sh "$MAJOR"

DEMO=/tmp/sno-demo
echo "==> starting a cluster in $DEMO with shared_preload_libraries = 'sno'"
start_cluster "$DEMO" 5488 keep
psql_in postgres -c "CREATE DATABASE sno_demo"

echo "==> demo"
pg_client psql -X -q -d sno_demo -e -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION sno;
SELECT 'brpk4q72xwf2m63l'::sno AS id, pg_column_size('brpk4q72xwf2m63l'::sno) AS bytes;
SELECT * FROM sno_decode('7gcn3i5m7akae24f');
SELECT sno_from_parts('2024-02-29 12:34:56.789+00', 128, 32768, 32768) AS id;
SELECT sno_min('2024-05-01'), sno_max('2024-05-01');
CREATE TABLE orders (id sno PRIMARY KEY DEFAULT sno_generate(1), total numeric);
INSERT INTO orders (total) SELECT g * 1.5 FROM generate_series(1, 5) g;
SELECT id, d.* FROM orders, sno_decode(id) d ORDER BY id;
SELECT partition, sequence_min, sequence_max, tick_tock, generated FROM sno_generator_stats();
SQL

cat <<EOF

sno is running. Connect with:
    runuser -u postgres -- $PG_BIN/psql -h $DEMO -p $CLUSTER_PORT sno_demo
Stop it with:
    runuser -u postgres -- $PG_BIN/pg_ctl -D $DEMO/data stop
EOF
