#!/usr/bin/env bash
# A release tarball (scripts/package.sh tarball), installed the way its README says into a
# PostgreSQL of its major that has never seen sno, then the SQL tests (tests/regress.sh) against it:
#
#     tests/package_tarball.sh target/dist/sno-VERSION-pgNN-linux-ARCH.tar.gz
#
# The PostgreSQL is a copy of this checkout's installation of that major with every sno file
# taken out, in a directory of its own that is removed afterwards. Also checks that the
# installed library is a release build (no test clock), and that its install step refuses
# another major. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=$(realpath "${1:?usage: tests/package_tarball.sh TARBALL}")
major=$(basename "$tarball" | sed -E 's/^sno-[^-]+-pg([0-9]+)-.*/\1/')

work=$(mktemp -d "${TMPDIR:-/tmp}/sno-tarball.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
prefix=$(dirname "$(dirname "$(scripts/pg_config.sh "$major")")")
if [[ -d $prefix/root ]]; then
    # 19's installation is a Debian root of 1.4 GB (scripts/get-postgresql-19.sh), whose
    # programs load the root's loader and libraries by absolute path and find PostgreSQL's
    # share and lib directories from their own path: a copy of those two directories (and the
    # programs among them), in the same layout, is a PostgreSQL of its own.
    for dir in usr/lib/postgresql/"$major" usr/share/postgresql/"$major"; do
        mkdir -p "$work/postgresql/root/$(dirname "$dir")"
        cp -a "$prefix/root/$dir" "$work/postgresql/root/$dir"
    done
    ln -s "root/usr/lib/postgresql/$major/bin" "$work/postgresql/bin"
else
    cp -a "$prefix" "$work/postgresql"
fi
pg_config=$work/postgresql/bin/pg_config
rm -f "$("$pg_config" --pkglibdir)/sno.so" "$("$pg_config" --sharedir)"/extension/sno[.-]*

tar -xzf "$tarball" -C "$work"
echo "==> $(basename "$tarball"): ./install.sh $pg_config"
"$work"/sno-*/install.sh "$pg_config"
if grep -qa test_clock_offset_ms "$("$pg_config" --pkglibdir)/sno.so"; then
    echo "FAIL: the tarball's library is a test build" >&2
    exit 1
fi
# Its install step refuses another major's pg_config: one that says so is enough, and needs no
# installation of another major (scripts/test.sh 19 sets up only 15 and 19).
other=$((major == 18 ? 17 : 18))
printf '#!/bin/sh\necho "PostgreSQL %s.0"\n' "$other" >"$work/other_pg_config"
chmod 755 "$work/other_pg_config"
if "$work"/sno-*/install.sh "$work/other_pg_config" 2>"$work/refused"; then
    echo "FAIL: the tarball for $major installed into PostgreSQL $other" >&2
    exit 1
fi
grep -q "this is sno for PostgreSQL $major" "$work/refused" || { cat "$work/refused"; exit 1; }
# Its own results directory: scripts/test.sh tests the tarballs side by side.
PG_CONFIG=$pg_config SNO_REGRESS_RESULTS=tests/results/tarball-pg$major tests/regress.sh
# Its uninstall step takes every file install.sh copied, and nothing else.
find "$work/postgresql" -type f | sort >"$work/files-installed"
echo "==> $(basename "$tarball"): ./uninstall.sh $pg_config"
"$work"/sno-*/uninstall.sh "$pg_config"
find "$work/postgresql" -type f | sort >"$work/files-uninstalled"
removed=$(comm -23 "$work/files-installed" "$work/files-uninstalled")
removed_names=$(printf '%s\n' "$removed" | xargs -n 1 basename | sort)
expected=$( (echo sno.so; ls "$work"/sno-*/extension/) | sort)
if [[ $removed_names != "$expected" ]]; then
    echo "FAIL: uninstall.sh removed:"; echo "$removed"; echo "expected: $expected" >&2
    exit 1
fi
