#!/usr/bin/env bash
# The Debian package, installed and removed the way a user would, with the TAP tests around it.
# The root-only steps (apt-get) are here; every check is a TAP test run by tests/tap.sh:
#   1. remove an earlier install of the package and whatever a build installed, then
#      091_package_removed.pl: nothing of sno is left (so that only the package can pass 2.)
#   2. apt-get install the package, then 090_package_installed.pl (files, dependency, release
#      build, SQL checks), 010_dump_restore.pl and 011_extension_upgrade.pl against it
#   3. apt-get remove it, then 091_package_removed.pl again: nothing is left behind
#
# Whatever sno files the system's PostgreSQL had before (a build installed by hand, say) are put
# back afterwards, byte for byte; the run fails if they are not.
#
# Needs: root, the package built by `scripts/package.sh deb`, Debian's postgresql-15, and
# PostgreSQL's TAP modules in SNO_TAP_MODULES (scripts/test.sh points it at this checkout's).
# Usage: tests/package_deb.sh PATH.deb   (PG_CONFIG as for tap.sh; exits non-zero on a failure)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
deb=$(realpath "${1:?usage: tests/package_deb.sh PATH.deb}")
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
package=$(dpkg-deb -f "$deb" Package)
# The extension's version: the upstream part of the package's (0.2.0 of 0.2.0-1).
extension_version=$(dpkg-deb -f "$deb" Version)
extension_version=${extension_version%-*}
libdir=$("$PG_CONFIG" --pkglibdir)
ext_dir=$("$PG_CONFIG" --sharedir)/extension

# The sno files there now, saved to be put back at the end.
saved=$(mktemp -d)
sno_files() { find "$libdir" "$ext_dir" -maxdepth 1 \( -name sno.so -o -name 'sno.control' -o -name 'sno--*.sql' \); }
sno_files | tar -cf "$saved/files.tar" -P -T -
sno_files | sort | xargs -r sha256sum >"$saved/before"
restore_files() {
    rm -f "$libdir/sno.so" "$ext_dir/sno.control" "$ext_dir"/sno--*.sql
    tar -xf "$saved/files.tar" -P
    sno_files | sort | xargs -r sha256sum >"$saved/after"
    if ! diff "$saved/before" "$saved/after"; then
        echo "FAIL: the sno files of $PG_CONFIG differ from before the package test" >&2
        return 1
    fi
    rm -rf "$saved"
}
trap 'status=$?; remove_package; restore_files || status=1; exit $status' EXIT

remove_package() {
    if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed"; then
        DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "$package" >/dev/null
    fi
}

echo "==> package: $deb"
remove_package
rm -f "$libdir/sno.so" "$ext_dir/sno.control" "$ext_dir"/sno--*.sql
SNO_PACKAGE_REMOVED=$package "$here/tap.sh" t/091_package_removed.pl

echo "==> apt-get install $package"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null
status=0
SNO_PACKAGE_INSTALLED=$package SNO_EXTENSION_VERSION=$extension_version \
    "$here/tap.sh" t/090_package_installed.pl t/010_dump_restore.pl t/011_extension_upgrade.pl ||
    status=$?

echo "==> apt-get remove $package"
remove_package
SNO_PACKAGE_REMOVED=$package "$here/tap.sh" t/091_package_removed.pl || status=$?
exit "$status"
