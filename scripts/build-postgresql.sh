#!/usr/bin/env bash
# Builds PostgreSQL 18 from Debian unstable's own source package with PostgreSQL's assertions
# and debug symbols (--enable-cassert --enable-debug), for running the tests where PostgreSQL
# checks what an extension does with memory, locks and interrupts (scripts/test-cassert.sh runs
# it), unless a complete install is already there:
#
#     scripts/build-postgresql.sh 18 --cassert [--prefix DIR]
#
# (default prefix: /var/cache/sno/postgresql-18-cassert; its pg_config is DIR/bin/pg_config).
# About eight minutes on two cores. Without --cassert it makes a plain build, and then needs
# --prefix: the plain installations the project builds and tests against are the PostgreSQL
# project's relocatable builds (scripts/get-postgresql.sh), which unpack in seconds. Run as
# root, after scripts/setup.sh --tests (the build dependencies).
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
while (($#)); do
    case $1 in
    --cassert) cassert=true ;;
    --prefix)
        prefix=${2:?--prefix needs a directory}
        shift
        ;;
    *)
        echo "usage: $0 MAJOR [--cassert] [--prefix DIR] (got '$1')" >&2
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
# The configure options that differ between the plain build and the assertion build.
variant_options=()
$cassert && variant_options=(--enable-cassert --enable-debug)

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

# Complete: the right major's pg_config runs, built with the variant's options, and the
# contrib modules, installed last, are there. A run cut short leaves no contrib modules, so
# the next run builds it again.
installed() {
    "$pg_config" --version 2>/dev/null | grep -q "^PostgreSQL $major\." || return 1
    local option configured
    configured=$("$pg_config" --configure)
    for option in "${variant_options[@]}"; do
        [[ $configured == *"'$option'"* ]] || return 1
    done
    local module
    for module in "${CONTRIB_MODULES[@]}"; do
        [[ -f "$("$pg_config" --sharedir)/extension/$module.control" ]] || return 1
    done
}
if installed; then
    echo "==> PostgreSQL $major is installed in $prefix"
    exit 0
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
# The options of Debian's build (postgresql-common's server/postgresql.mk) that matter to sno
# and its tests: TLS, ICU collations, lz4 and zstd compression, XML, the zone data of the
# system, and the TAP test modules (PostgreSQL::Test::Cluster, installed under lib/pgxs).
# Left out: LLVM JIT, Kerberos, LDAP, PAM, SELinux, systemd, the procedural languages,
# translations, and debug symbols, none of which the tests use, to keep the build short. The
# extra version has no quote: initdb writes it into an SQL string literal.
step ./configure --prefix="$prefix" \
    --with-extra-version=" (Debian $version source, built for sno)" \
    --enable-tap-tests "${variant_options[@]}" \
    --with-openssl --with-icu --with-lz4 --with-zstd --with-libxml \
    --with-system-tzdata=/usr/share/zoneinfo --with-pgport=5432
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
