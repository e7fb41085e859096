#!/usr/bin/env bash
# Replays the model's arrival orders into PostgreSQL and reports the primary-key index they
# build, against the same keys inserted in order (one writer).
#
# A one-column B-tree's shape depends only on the order its keys arrive in (the model's
# premise, benches/writers/btree.rs), so each file is COPYed, in one session, into a table whose
# only column is the primary key; the same keys are then inserted sorted into a second table.
# Prints, per file: rows, index bytes per row of both (pg_relation_size / rows), the ratio, and
# pgstatindex's average leaf density.
#
# With FILLFACTOR=N the replayed index is created WITH (fillfactor = N), with PARTS=N the table
# is PARTITION BY HASH (id) into N partitions (sizes summed over them); the one-writer index is
# always plain, at the default fill factor.
#
# Usage: cargo run --release --manifest-path benches/Cargo.toml --bin writers_model -- --out DIR
#        PG_CONFIG=/path/to/pg_config benches/sql/replay_arrival.sh DIR
# Files are named LOAD-SOURCE.TYPE (TYPE: sno or bigint); sno must be installed in PG_CONFIG's
# PostgreSQL (scripts/install.sh, or see HELPERS.md for a private copy).
set -euo pipefail
dir=$(realpath "${1:?usage: replay_arrival.sh DIR}")
cd "$(dirname "$0")/../.."
source scripts/cluster.sh

FILLFACTOR=${FILLFACTOR:-90}
PARTS=${PARTS:-1}

start_cluster /tmp/sno-replay-arrival 5690 >/dev/null
psql_in postgres -c "CREATE EXTENSION sno" -c "CREATE EXTENSION pgstattuple" >/dev/null

# Bytes per row of TABLE's primary key (all partitions) and the average leaf density of its
# partitions, weighted by their size.
index_figures() {
    psql_in postgres -F ' ' -c "WITH parts AS (
                                    SELECT relid FROM pg_partition_tree('$1_pkey') WHERE isleaf
                                    UNION ALL
                                    SELECT '$1_pkey'::regclass
                                    WHERE NOT EXISTS (SELECT FROM pg_partition_tree('$1_pkey')))
                                SELECT round(sum(pg_relation_size(relid))::numeric
                                             / (SELECT count(*) FROM $1), 1),
                                       round((sum(avg_leaf_density * leaf_pages)
                                             / sum(leaf_pages))::numeric, 2)
                                FROM parts, LATERAL pgstatindex(relid)"
}

# A table with a primary key only, laid out as FILLFACTOR and PARTS say.
arrival_table() {
    local type=$1
    if [ "$PARTS" = 1 ]; then
        echo "CREATE UNLOGGED TABLE arrival (id $type PRIMARY KEY WITH (fillfactor = $FILLFACTOR));"
        return
    fi
    echo "CREATE UNLOGGED TABLE arrival (id $type PRIMARY KEY WITH (fillfactor = $FILLFACTOR))
          PARTITION BY HASH (id);"
    for ((r = 0; r < PARTS; r++)); do
        echo "CREATE UNLOGGED TABLE arrival_$r PARTITION OF arrival
              FOR VALUES WITH (MODULUS $PARTS, REMAINDER $r);"
    done
}

echo "index fillfactor $FILLFACTOR, $PARTS partition(s); one writer: plain, default fillfactor"
echo "| arrival order | rows | bytes/row | one writer | vs one writer | leaf density | one writer's |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for file in "$dir"/*.sno "$dir"/*.bigint; do
    [ -e "$file" ] || continue
    type=${file##*.}
    psql_in postgres <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS arrival, one_writer;
$(arrival_table "$type")
CREATE UNLOGGED TABLE one_writer (id $type PRIMARY KEY);
SQL
    psql_in postgres -c "COPY arrival FROM STDIN" <"$file"
    psql_in postgres -c "INSERT INTO one_writer SELECT id FROM arrival ORDER BY id"
    read -r bytes density <<<"$(index_figures arrival)"
    read -r one_bytes one_density <<<"$(index_figures one_writer)"
    rows=$(psql_in postgres -c "SELECT count(*) FROM arrival")
    ratio=$(awk "BEGIN { printf \"%.2f\", $bytes / $one_bytes }")
    echo "| $(basename "$file") | $rows | $bytes | $one_bytes | ${ratio}x | $density | $one_density |"
done
