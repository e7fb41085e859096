#!/usr/bin/env bash
# Benchmarks sno_generate_at where a backfill's cost used to follow its span of time: the same
# number of IDs over ten years at one row a minute (sparse) and at one row a millisecond (dense,
# 88 minutes of data time), in one run on one throwaway cluster, and prints IDs per second for
# each and their ratio (target: sparse within 4x of dense, docs/benchmarks.md). The state file
# records a mark past each cursor (src/pg/server/backfills.rs); a dense backfill needs a handful
# of writes, a sparse one as many as the marks' reach allows, each a WAL flush and fsyncs, at most
# 20 a second.
#
# Runs against the PostgreSQL of PG_CONFIG (default: this checkout's 15), with a release build of
# sno installed in it (scripts/install.sh MAJOR); run as root. The cluster keeps PostgreSQL's
# defaults (fsync on): the state file's writes are part of what is measured.
# Usage: benches/sql/backfill_bench.sh              (N=5,259,600 IDs, ten years a minute apart;
#                                                    REPS=3, the median counts)
#        N=100000 REPS=1 benches/sql/backfill_bench.sh   (smoke test)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
source benches/sql/timing.sh

N=${N:-5259600}
REPS=${REPS:-3}

log() { echo "==> $*" >&2; }

start_cluster /tmp/sno-bench-backfill 5590 >/dev/null
psql_in postgres <<'SQL'
ALTER SYSTEM SET sno.partition = 1;
ALTER SYSTEM SET sno.backfill_partition = 2;
ALTER SYSTEM SET jit = off;
ALTER SYSTEM SET max_parallel_workers_per_gather = 0;
SQL
restart_cluster
psql_in postgres -c 'CREATE EXTENSION sno'
create_elapsed_ms postgres
per_second() { awk -v ms="$1" -v n="$N" 'BEGIN { printf "%.0f", n * 1000 / ms }'; }

# Each repetition uses metas of its own (a cursor moves forward only), dense and sparse taking
# turns so that a slow spell of the machine falls on both alike.
dense=() sparse=()
for ((rep = 0; rep < REPS; rep++)); do
    log "repetition $((rep + 1)) of $REPS: $N IDs dense, then sparse"
    dense+=("$(psql_in postgres -c "SELECT elapsed_ms(\$q\$SELECT count(sno_generate_at($((10 + rep)),
        timestamptz '2020-01-01' + n * interval '1 ms')) FROM generate_series(0, $N - 1) n\$q\$)")")
    sparse+=("$(psql_in postgres -c "SELECT elapsed_ms(\$q\$SELECT count(sno_generate_at($((20 + rep)),
        timestamptz '2010-01-01' + n * interval '1 minute')) FROM generate_series(0, $N - 1) n\$q\$)")")
done
dense_ms=$(median_of "${dense[@]}")
sparse_ms=$(median_of "${sparse[@]}")
version=$(psql_in postgres -c "SELECT current_setting('server_version')")
echo "| PostgreSQL $version, $N IDs, median of $REPS | ms | IDs/s |"
echo "|---|---|---|"
echo "| dense: one a millisecond ($(awk -v n="$N" 'BEGIN { printf "%.0f", n / 60000 }') minutes of data) | $dense_ms | $(per_second "$dense_ms") |"
echo "| sparse: one a minute ($(awk -v n="$N" 'BEGIN { printf "%.1f", n / 525960 }') years of data) | $sparse_ms | $(per_second "$sparse_ms") |"
echo
echo "target: sparse within 4x of dense: $(awk -v s="$sparse_ms" -v d="$dense_ms" 'BEGIN { printf "%.2f", s / d }')x"
