#!/usr/bin/env bash
# The Debian package, installed the way a user would, against a throwaway cluster.
#
# Why: a DBA installs sno with `apt-get install`, on a server without Rust. The package must put
# every file where PostgreSQL looks, own all of them, work (here: the SQL-level checks below and
# the dump/restore and upgrade scenarios), and leave nothing behind when removed.
#
# Needs: root, the package built by scripts/package.sh (or its path as the argument). Removes
# any sno files installed from a build first, and the package again at the end.
# Usage: tests/server/package.sh [PATH.deb]   (prints PASS/FAIL per check, then a summary)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

DIR=/tmp/sno-package-test
PACKAGE=postgresql-15-sno
deb=${1:-$(ls "$here"/../../target/debian/${PACKAGE}_*.deb 2>/dev/null | head -n 1)}
LIBDIR=$("$PG_BIN/pg_config" --pkglibdir)
EXTDIR=$("$PG_BIN/pg_config" --sharedir)/extension
DOCDIR=/usr/share/doc/$PACKAGE

q() {
    psql_in postgres -c "$1"
}

sno_files() {
    ls -d "$LIBDIR"/sno.so "$EXTDIR"/sno.control "$EXTDIR"/sno--*.sql "$DOCDIR" 2>/dev/null || true
}

cleanup() {
    local rc=$?
    stop_cluster
    report_if_aborted "$rc"
}

if [[ ! -f $deb ]]; then
    echo "FAIL: no package (run scripts/package.sh first)"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "package: $deb"

# An earlier run of scripts/test.sh leaves the package installed: take it away first (apt-get
# would not install the same version again). What a build installed is not the package's:
# remove it too, so that only the package can pass.
if dpkg-query -W -f='${Status}' "$PACKAGE" 2>/dev/null | grep -q "ok installed"; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "$PACKAGE" >/dev/null
fi
rm -f "$LIBDIR/sno.so" "$EXTDIR/sno.control" "$EXTDIR"/sno--*.sql
check "nothing of sno is installed before the package" same "$(sno_files)" ""

check "apt-get install ./$(basename "$deb")" \
    env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$(realpath "$deb")"
check "the package owns the library, control, SQL and docs, and nothing else" \
    same "$(dpkg -L "$PACKAGE" | while read -r f; do [ -d "$f" ] || echo "$f"; done | sort)" \
    "$(printf '%s\n' "$DOCDIR/README.md.gz" "$DOCDIR/changelog.gz" "$DOCDIR/copyright" \
        "$LIBDIR/sno.so" "$EXTDIR/sno--$(sed -n 's/^version = "\(.*\)"/\1/p' \
        "$here/../../Cargo.toml" | head -n 1).sql" "$EXTDIR/sno.control" | sort)"
check "it depends on the matching server package" \
    grep -q "^Depends: postgresql-15," <(dpkg-query -s "$PACKAGE")
check "the library is a release build (no test clock)" not_grep test_clock_offset_ms "$LIBDIR/sno.so"

start_cluster "$DIR" 5600 >/dev/null
trap cleanup EXIT
psql_in postgres -c "ALTER SYSTEM SET sno.partition = 77" -c "ALTER SYSTEM SET sno.backfill_partition = 78" >/dev/null
reload_cluster
check "CREATE EXTENSION sno" q "CREATE EXTENSION sno"
check "text in and out, upper case in" \
    same "$(q "SELECT 'BRPK4Q72XWF2M63L'::sno::text")" brpk4q72xwf2m63l
check "the bytea hex form in" same "$(q "SELECT '\\x4e6f2160a0ff9a0a1033'::sno::text")" brpk4q72xwf2m63l
check "decoding" same "$(q "SELECT format('%s %s %s %s', sno_time(i) AT TIME ZONE 'UTC', sno_meta(i), sno_partition(i),
                                sno_sequence(i)) FROM (SELECT 'brpk4q72xwf2m63l'::sno AS i) AS s")" \
    "2031-05-08 23:03:34.976 255 39434 4147"
check "a table with a generated key, 100,000 rows" \
    q "CREATE TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(3), v int);
       INSERT INTO t (v) SELECT g FROM generate_series(1, 100000) AS g"
check "... partition 77, meta 3, in insert order" \
    same "$(q "SELECT bool_and(sno_partition(id) = 77 AND sno_meta(id) = 3),
                      count(*) FILTER (WHERE id < prev) FROM (SELECT id, lag(id) OVER (ORDER BY v)
                      AS prev FROM t) AS s")" "t|0"
check "a backfill ID in partition 78" \
    same "$(q "SELECT sno_partition(sno_generate_at(1, '2021-01-01'))")" 78
check "a time range is an index range scan" \
    grep -qE "Index (Only )?Scan using t_pkey|Bitmap Index Scan on t_pkey" \
        <(q "SET enable_seqscan = off; EXPLAIN SELECT id FROM t
                                   WHERE id >= sno_min(now() - interval '1 hour') AND id < sno_max(now())")
check "stats" same "$(q "SELECT generated >= 100000 FROM sno_generator_stats()")" t
stop_cluster
trap - EXIT

for scenario in dump_restore.sh upgrade.sh; do
    check "$scenario against the package" bash "$here/$scenario"
done

check "apt-get remove $PACKAGE" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "$PACKAGE"
check "nothing of sno is left" same "$(sno_files)" ""
check "dpkg no longer knows it" not dpkg-query -W -f='${Status}' "$PACKAGE"
finish
