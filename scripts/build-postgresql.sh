#!/usr/bin/env bash
# Builds PostgreSQL 18 from Debian unstable's own source package with PostgreSQL's assertions
# (--enable-cassert), for running the tests where PostgreSQL checks what an extension does with
# memory, locks and interrupts (scripts/test-cassert.sh runs it), unless an install built with
# the options below is already there:
#
#     scripts/build-postgresql.sh 18 --cassert [--prefix DIR] [--wait-for-packages FILE]
#
# (default prefix: /var/cache/sno/postgresql-18-cassert; its pg_config is DIR/bin/pg_config).
# About 4.5 minutes on two idle cores (450 s of CPU). Without --cassert it makes a plain build,
# and then needs --prefix: the plain installations the project builds and tests against are the
# PostgreSQL project's relocatable builds (scripts/get-postgresql.sh), which unpack in seconds.
# Run as root, after scripts/setup.sh --tests (the Debian packages it builds with, PACKAGES
# below), or beside it with --wait-for-packages FILE: then it waits until those packages are
# installed, or until FILE exists, before it fetches the source. scripts/test.sh starts it so,
# with setup, and creates FILE when setup has ended: the build runs while setup still fetches
# the majors.
#
# The source comes through a private apt directory holding only `deb-src` entries for the
# suite that has the major, on the mirror this machine already uses; the system's apt
# configuration, package lists and cache are left alone. apt checks the files against the
# suite's signed index, as for any package.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022 # the `postgres` user runs what is installed

major=${1:-}
shift || true
cassert=false
prefix=
setup_done=
while (($#)); do
    case $1 in
    --cassert) cassert=true ;;
    --prefix)
        prefix=${2:?--prefix needs a directory}
        shift
        ;;
    --wait-for-packages)
        setup_done=${2:?--wait-for-packages needs a file}
        shift
        ;;
    *)
        echo "usage: $0 MAJOR [--cassert] [--prefix DIR] [--wait-for-packages FILE] (got '$1')" >&2
        exit 2
        ;;
    esac
    shift
done
if [[ -z $prefix ]] && $cassert; then
    prefix=/var/cache/sno/postgresql-$major-cassert
elif [[ -z $prefix ]]; then
    echo "usage: $0 MAJOR --cassert [--prefix DIR] | $0 MAJOR --prefix DIR (plain builds" \
        "for the tests come from scripts/get-postgresql.sh)" >&2
    exit 2
fi
pg_config=$prefix/bin/pg_config
# The configure options that differ between the plain build and the assertion build. No
# --enable-debug: the tests read no debug information of PostgreSQL's. A failed Assert() logs
# its condition, file and line (TRAP), then a backtrace that backtrace_symbols() names from the
# server's exported symbols, which are the same without it; scripts/test-cassert.sh names sno's
# frames from sno's own test build. Debug symbols cost a quarter of the backend's compile (410 s
# of CPU with them, 310 s without, measured under the same load) and made the install 96 MB
# instead of 35 MB, copied into each checkout.
variant_options=()
$cassert && variant_options=(--enable-cassert)

# The Debian suite whose source package of each major is built: Debian 13 (trixie) ships 17;
# 18 is only in unstable (sid) so far.
declare -A SUITE=([17]=trixie [18]=sid)
if [[ -z ${SUITE[$major]:-} ]]; then
    echo "PostgreSQL $major is not built from source: Debian 12 packages it" >&2
    exit 2
fi
# The contrib modules the tests and benchmarks use: amcheck checks indexes (after pg_upgrade
# too), pageinspect reads index pages, pg_prewarm loads tables into shared buffers,
# pg_walinspect reads sno's WAL records, file_fdw stands for a foreign table (time_rewrite).
CONTRIB_MODULES=(amcheck pageinspect pg_prewarm pg_walinspect file_fdw)
# The options of Debian's build (postgresql-common's server/postgresql.mk) that matter to sno
# and its tests: TLS, ICU collations, lz4 and zstd compression, XML (the fuzzing's xpath), the
# zone data of the system, and the TAP test modules (PostgreSQL::Test::Cluster, installed under
# lib/pgxs). Left out: LLVM JIT, Kerberos, LDAP, PAM, SELinux, systemd, the procedural
# languages, translations, and debug symbols, none of which the tests use, to keep the build
# short.
CONFIGURE_OPTIONS=(--prefix="$prefix" --enable-tap-tests "${variant_options[@]}"
    --with-openssl --with-icu --with-lz4 --with-zstd --with-libxml
    --with-system-tzdata=/usr/share/zoneinfo --with-pgport=5432)
# The Debian packages the build needs (scripts/setup.sh --tests installs them): compiler and
# make, dpkg-source, bison and flex (the grammars: the source has no generated parsers), the
# libraries of the options above, and Perl's IPC::Run, which configure's --enable-tap-tests
# checks for.
PACKAGES=(build-essential bison flex pkg-config libreadline-dev zlib1g-dev libssl-dev
    libicu-dev liblz4-dev libzstd-dev libxml2-dev libipc-run-perl)

# Complete: the right major's pg_config runs, configured with exactly CONFIGURE_OPTIONS, and the
# contrib modules, installed last, are there. pg_config prints configure's arguments, each in
# single quotes: the options (--...) are compared, all but the extra version, which names the
# Debian version; the variables that configure also records from the environment (CFLAGS and
# the like) are the caller's. A run cut short leaves no contrib modules, and an install
# configured otherwise (one with --enable-debug, as this script built until 2026-11-28, or with
# another prefix) is built again.
installed() {
    "$pg_config" --version 2>/dev/null | grep -q "^PostgreSQL $major\." || return 1
    local configured
    configured=$("$pg_config" --configure | grep -o "'[^']*'" | tr -d "'" | grep '^--' |
        grep -v '^--with-extra-version=') || return 1
    [[ $configured == "$(printf '%s\n' "${CONFIGURE_OPTIONS[@]}")" ]] || return 1
    local module
    for module in "${CONTRIB_MODULES[@]}"; do
        [[ -f "$("$pg_config" --sharedir)/extension/$module.control" ]] || return 1
    done
}
if installed; then
    echo "==> PostgreSQL $major is installed in $prefix"
    exit 0
fi
if [[ -x $pg_config ]]; then
    echo "==> $prefix holds an install configured otherwise ($("$pg_config" --configure)):" \
        "building it again"
fi

missing_packages() {
    local package
    for package in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
            echo "$package"
    done
}
if [[ -n $setup_done && -n $(missing_packages) ]]; then
    echo "==> waiting until scripts/setup.sh has installed $(missing_packages | xargs)"
    waited=$SECONDS
    until [[ -z $(missing_packages) || -f $setup_done ]]; do sleep 2; done
    echo "    (waited $((SECONDS - waited)) s)"
fi
if [[ -n $(missing_packages) ]]; then
    echo "PostgreSQL $major: the build needs $(missing_packages | xargs)" \
        "(scripts/setup.sh --tests installs them)" >&2
    exit 1
fi

mirror=$(scripts/debian-mirror.sh)

work=$(mktemp -d "${TMPDIR:-/tmp}/sno-postgresql-$major.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt downloads as the `_apt` user, which must reach the download directory.
chmod 755 "$work"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/source"
chown _apt "$work/source" 2>/dev/null || true
cat >"$work/apt/sources.sources" <<EOF
Types: deb-src
URIs: $mirror
Suites: ${SUITE[$major]}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_options=(
    -o Dir::Etc::sourcelist="$work/apt/sources.sources" -o Dir::Etc::sourceparts=-
    -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache"
)
start=$SECONDS
echo "==> fetching PostgreSQL $major's source package from Debian ${SUITE[$major]}"
apt-get "${apt_options[@]}" update -qq
# apt-get source unpacks with dpkg-source, which applies Debian's patches (the socket in
# /var/run/postgresql, as in Debian's own 15, among them).
if ! (cd "$work/source" && apt-get "${apt_options[@]}" source -qq "postgresql-$major" >/dev/null); then
    echo "PostgreSQL $major: could not fetch the source package postgresql-$major of Debian" \
        "${SUITE[$major]} from $mirror" >&2
    exit 3 # unavailable here, as distinct from a failed build
fi
source_dir=$(echo "$work/source/postgresql-$major-"*/)
version=$(cd "$source_dir" && dpkg-parsechangelog -S Version)
# Debian's 50-per-version-dirs.patch sends the server's modules (pkglibdir) to
# /usr/lib/postgresql/MAJOR/lib, outside the prefix, whenever the prefix names neither "pgsql"
# nor "postgres": put them back under the prefix (lib/postgresql), as upstream does.
# shellcheck disable=SC2016 # make's $(pkglibdir), not the shell's
sed -i 's|^override pkglibdir := /usr/lib/postgresql/.*|override pkglibdir := $(pkglibdir)/postgresql|' \
    "$source_dir/src/Makefile.global.in"
# Nothing here uses ecpg (embedded SQL in C: its preprocessor and libraries), which `make` of
# src/ builds beside libpq: left out of the build and the install (11 s of CPU).
sed -i 's/^SUBDIRS = libpq ecpg$/SUBDIRS = libpq/' "$source_dir/src/interfaces/Makefile"

log=$work/build.log
# Runs a build step quietly, at low priority (others share the machine); on failure shows
# the end of the log.
step() {
    if ! (cd "$source_dir" && nice "$@") >>"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "PostgreSQL $major: failed: $*" >&2
        exit 1
    fi
}

echo "==> building PostgreSQL $major ($version) into $prefix"
# The extra version has no quote: initdb writes it into an SQL string literal.
step ./configure "${CONFIGURE_OPTIONS[@]}" \
    --with-extra-version=" (Debian $version source, built for sno)"
step make -j"$(nproc)"
for module in "${CONTRIB_MODULES[@]}"; do
    step make -j"$(nproc)" -C "contrib/$module"
done
# A run cut short may have left part of an install behind.
rm -rf "$prefix"
step make install
for module in "${CONTRIB_MODULES[@]}"; do
    step make -C "contrib/$module" install
done
installed || {
    echo "PostgreSQL $major: the install in $prefix is incomplete" >&2
    exit 1
}
if [[ $("$pg_config" --pkglibdir) != "$prefix"/* ]]; then
    echo "PostgreSQL $major: its modules went to $("$pg_config" --pkglibdir), outside $prefix" >&2
    exit 1
fi
echo "==> PostgreSQL $major built and installed in $((SECONDS - start)) s"
