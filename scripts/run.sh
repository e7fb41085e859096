#!/usr/bin/env bash
# Builds and installs sno, starts a throwaway PostgreSQL 15 cluster with sno preloaded (as the
# `postgres` user), runs a short demo and says how to connect and stop. Safe to run again: it
# reinstalls and restarts the same cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

BIN=/usr/lib/postgresql/15/bin
CLUSTER=/tmp/sno-demo
DATA=$CLUSTER/data
as_postgres() { runuser -u postgres -- env --chdir=/ "$@"; }

# Stop a demo server from an earlier run before the library it has mapped is replaced.
if [[ -f $DATA/PG_VERSION ]] && as_postgres "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    echo "==> stopping the demo server of an earlier run"
    as_postgres "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
fi

echo "==> building and installing sno (release)"
cargo pgrx install --release --pg-config "$BIN/pg_config" >/dev/null

mkdir -p "$CLUSTER" && chown postgres:postgres "$CLUSTER"
if [[ ! -f $DATA/PG_VERSION ]]; then
    echo "==> creating a cluster in $DATA"
    as_postgres "$BIN/initdb" -D "$DATA" --locale=C.UTF-8 --auth=trust >/dev/null
fi

# A free local port: the one used last time if it is still free, else the first free from 5488.
port=$(cat "$CLUSTER/port" 2>/dev/null || echo 5488)
while ss -Hltn "sport = :$port" | grep -q .; do port=$((port + 1)); done
echo "$port" >"$CLUSTER/port"

echo "==> starting PostgreSQL on port $port with shared_preload_libraries = 'sno'"
as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$CLUSTER/server.log" -w start \
    -o "-p $port -k $CLUSTER -c listen_addresses='' -c shared_preload_libraries=sno" >/dev/null

PSQL=(runuser -u postgres -- env --chdir=/ "$BIN/psql" -h "$CLUSTER" -p "$port" -X -q)
"${PSQL[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'sno_demo'" -tA | grep -q 1 \
    || "${PSQL[@]}" -c "CREATE DATABASE sno_demo"

echo "==> demo"
# The table first: dropping the extension with CASCADE would only drop its sno column.
"${PSQL[@]}" -d sno_demo -e -v ON_ERROR_STOP=1 <<'SQL'
DROP TABLE IF EXISTS orders;
DROP EXTENSION IF EXISTS sno CASCADE;
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
    runuser -u postgres -- psql -h $CLUSTER -p $port sno_demo
Stop it with:
    runuser -u postgres -- $BIN/pg_ctl -D $DATA stop
EOF
