#!/usr/bin/env bash
# Checks the model's premise on any machine: a one-column B-tree built by several concurrent
# sessions is the one a single session builds by inserting the same keys in the same order.
#
# SESSIONS sessions (default 2) insert the first ROWS keys of FILE (default 20,000), one row per
# transaction, key j from session j mod SESSIONS, taking turns through a one-row table so the
# index receives the keys in the file's order; then one session COPYs the same keys in that
# order into a second table. Compares the two primary-key indexes page by page (pageinspect:
# the keys of every item of every page, heap pointers aside) and their sizes.
# Usage: PG_CONFIG=/path/to/pg_config benches/sql/arrival_order_check.sh FILE [SESSIONS] [ROWS]
set -euo pipefail
file=$(realpath "${1:?usage: arrival_order_check.sh FILE [SESSIONS] [ROWS]}")
sessions=${2:-2}
rows=${3:-20000}
type=${file##*.}
cd "$(dirname "$0")/../.."
source scripts/cluster.sh

start_cluster /tmp/sno-arrival-check 5790 >/dev/null
head -n "$rows" "$file" >"$CLUSTER_DIR/keys"
psql_in postgres <<SQL
CREATE EXTENSION sno;
CREATE EXTENSION pageinspect;
CREATE TABLE keys (j int, id $type);
CREATE TABLE concurrent (id $type PRIMARY KEY);
CREATE TABLE replayed (id $type PRIMARY KEY);
CREATE TABLE turn (next int);
INSERT INTO turn VALUES (0);
SQL
nl -v0 -w1 -s$'\t' "$CLUSTER_DIR/keys" | psql_in postgres -c "COPY keys FROM STDIN"

# Session S inserts its keys, each when the turn has come to it.
psql_in postgres <<'SQL'
CREATE PROCEDURE insert_in_turn(session int, sessions int) LANGUAGE plpgsql AS $$
DECLARE
    key record;
BEGIN
    FOR key IN SELECT j, id FROM keys WHERE j % sessions = session ORDER BY j LOOP
        WHILE (SELECT next FROM turn) <> key.j LOOP
            PERFORM pg_sleep(0);
        END LOOP;
        INSERT INTO concurrent VALUES (key.id);
        UPDATE turn SET next = key.j + 1;
        COMMIT;
    END LOOP;
END $$;
SQL
pids=()
for ((s = 0; s < sessions; s++)); do
    psql_in postgres -c "CALL insert_in_turn($s, $sessions)" &
    pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid"; done
psql_in postgres -c "COPY replayed FROM STDIN" <"$CLUSTER_DIR/keys"

# Every item of every page but the metapage, by block and offset: keys only, as heap
# pointers differ between the two tables.
pages_digest() {
    psql_in postgres -c "SELECT md5(string_agg(blkno || ':' || itemoffset || ':' || data, ','
                                               ORDER BY blkno, itemoffset))
                         FROM generate_series(1, pg_relation_size('$1') / 8192 - 1) AS blkno,
                              LATERAL bt_page_items('$1', blkno::int)"
}
psql_in postgres -F ' ' -c "SELECT 'concurrent', count(*), pg_relation_size('concurrent_pkey') FROM concurrent
                            UNION ALL
                            SELECT 'replayed', count(*), pg_relation_size('replayed_pkey') FROM replayed"
concurrent=$(pages_digest concurrent_pkey)
replayed=$(pages_digest replayed_pkey)
echo "pages of concurrent_pkey: $concurrent"
echo "pages of replayed_pkey:   $replayed"
if [ "$concurrent" = "$replayed" ]; then
    echo "PASS: $sessions sessions and one session built the same index from the same order"
else
    echo "FAIL: the indexes differ"
    exit 1
fi
