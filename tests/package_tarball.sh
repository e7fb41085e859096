#!/usr/bin/env bash
# A release tarball (scripts/package.sh tarball), installed the way its README says into a
# PostgreSQL of its major that has never seen sno, then the SQL tests (tests/regress.sh) against it:
#
#     tests/package_tarball.sh target/dist/sno-VERSION-pgNN-linux-ARCH.tar.gz
#
# The PostgreSQL is a copy of this checkout's installation of that major with every sno file
# taken out, in a directory of its own that is removed afterwards. Also checks that the
# installed library is a release build (no test clock). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=$(realpath "${1:?usage: tests/package_tarball.sh TARBALL}")
major=$(basename "$tarball" | sed -E 's/^sno-[^-]+-pg([0-9]+)-.*/\1/')

work=$(mktemp -d "${TMPDIR:-/tmp}/sno-tarball.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cp -a "$(dirname "$(dirname "$(scripts/pg_config.sh "$major")")")" "$work/postgresql"
pg_config=$work/postgresql/bin/pg_config
rm -f "$("$pg_config" --pkglibdir)/sno.so" "$("$pg_config" --sharedir)"/extension/sno[.-]*

tar -xzf "$tarball" -C "$work"
echo "==> $(basename "$tarball"): ./install.sh $pg_config"
"$work"/sno-*/install.sh "$pg_config"
if grep -qa test_clock_offset_ms "$("$pg_config" --pkglibdir)/sno.so"; then
    echo "FAIL: the tarball's library is a test build" >&2
    exit 1
fi
# Its install step refuses another major's pg_config.
other=$((major == 18 ? 17 : 18))
if "$work"/sno-*/install.sh "$(scripts/pg_config.sh "$other")" 2>"$work/refused"; then
    echo "FAIL: the tarball for $major installed into PostgreSQL $other" >&2
    exit 1
fi
grep -q "this is sno for PostgreSQL $major" "$work/refused" || { cat "$work/refused"; exit 1; }
PG_CONFIG=$pg_config tests/regress.sh
