#!/usr/bin/env bash
# Per-call latency of sno_generate(1) beside nextval() on a sequence, as one client feels it:
# pgbench, one client, one `SELECT` per transaction, every transaction's latency logged, then
# p50, p99, p99.9 and the maximum of each, in microseconds, and the ratio to nextval().
#
# Why: the state file's reservation is renewed about every 5 s (docs/persistence.md); where a
# caller does that write itself (a WAL flush, two fsyncs, a rename) it is a latency outlier that
# throughput figures hide. Unlike generate_bench.sh this cluster keeps fsync on and
# synchronous_commit on, as a production server has them: the disk is what is measured.
#
# Runs against the PostgreSQL of PG_CONFIG (default: this checkout's 15), with a release build of
# sno installed in it (scripts/install.sh MAJOR); run as root.
# Usage: benches/sql/latency_bench.sh                 (SECONDS_EACH=60 per function)
#        SECONDS_EACH=5 benches/sql/latency_bench.sh  (smoke test)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster.sh

SECONDS_EACH=${SECONDS_EACH:-60}

log() { echo "==> $*" >&2; }

# p50, p99, p99.9 and max of the latencies (µs, the third field of pgbench's log) in file $1,
# the calls that took 1 ms or more, and all calls.
percentiles() {
    cut -d' ' -f3 "$1" | sort -n | awk '
        { v[NR] = $1; if ($1 >= 1000) slow++ }
        END {
            split("0.5 0.99 0.999", q, " ")
            for (i = 1; i <= 3; i++) {
                k = int(q[i] * NR); if (k < 1) k = 1
                printf "%s ", v[k]
            }
            printf "%s %d %d\n", v[NR], slow, NR
        }'
}

start_cluster /tmp/sno-bench-latency 5590 >/dev/null
psql_in postgres <<'SQL'
ALTER SYSTEM SET jit = off;
SQL
restart_cluster
psql_in postgres <<'SQL'
CREATE EXTENSION sno;
CREATE SEQUENCE s;
SQL
work=$CLUSTER_DIR/latency
mkdir -p "$work"
chown "$PG_OS_USER": "$work"

declare -A result
for name in sno_generate nextval; do
    case $name in
    sno_generate) query='SELECT sno_generate(1);' ;;
    nextval) query="SELECT nextval('s');" ;;
    esac
    echo "$query" >"$work/$name.sql"
    log "$name: pgbench -c 1 for $SECONDS_EACH s"
    pg_client pgbench -n -c 1 -T "$SECONDS_EACH" -f "$work/$name.sql" -l \
        --log-prefix="$work/$name-log" postgres >/dev/null
    result[$name]=$(percentiles "$(ls "$work/$name-log".*)")
done

echo "PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), one client, $SECONDS_EACH s each, fsync on"
printf '%-13s %9s %9s %9s %9s %9s %9s\n' call 'p50 µs' 'p99 µs' 'p99.9 µs' 'max µs' '>= 1 ms' calls
for name in sno_generate nextval; do
    read -r p50 p99 p999 max slow calls <<<"${result[$name]}"
    printf '%-13s %9s %9s %9s %9s %9s %9s\n' "$name" "$p50" "$p99" "$p999" "$max" "$slow" "$calls"
done
read -r s50 s99 s999 smax _ <<<"${result[sno_generate]}"
read -r n50 n99 n999 nmax _ <<<"${result[nextval]}"
awk -v a="$s50 $s99 $s999 $smax" -v b="$n50 $n99 $n999 $nmax" 'BEGIN {
    split(a, s, " "); split(b, n, " ")
    printf "%-13s %9.2f %9.2f %9.2f %9.2f\n", "sno/nextval", s[1] / n[1], s[2] / n[2], s[3] / n[3], s[4] / n[4]
}'
