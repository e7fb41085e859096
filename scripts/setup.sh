#!/usr/bin/env bash
# Installs what building and testing sno needs on Debian 12, skipping what is already there:
#
#     scripts/setup.sh [MAJOR...]    # PostgreSQL majors, 15 17 18 when none are given
#
# clang for bindgen, sudo (tests run the server as `postgres`), faketime (tests step the
# server's clock), binutils (packaging), Python's and Go's drivers (client tests), Perl's
# IPC::Run (TAP tests), cargo-pgrx 0.18.1, each PostgreSQL major with its headers, and pgrx
# pointed at every major installed. Debian 12 packages 15; scripts/build-postgresql.sh builds
# the others from Debian's source packages into the cache directory that scripts/pg_config.sh
# names (about five minutes a major; later runs find them there). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_MAJORS=(15 17 18)
PGRX_VERSION=0.18.1
PACKAGES=(libclang-dev clang sudo faketime binutils libipc-run-perl
    python3-psycopg python3-asyncpg golang-go golang-github-jackc-pgx-v4-dev golang-github-lib-pq-dev
    default-jdk-headless libpostgresql-jdbc-java)
DEBIAN_MAJOR_PACKAGES=(postgresql-15 postgresql-server-dev-15)
# What scripts/build-postgresql.sh needs: the compiler and dpkg-source, the parser generators
# (release tarballs no longer carry their output), and the libraries of the configure options.
SOURCE_BUILD_PACKAGES=(build-essential bison flex pkg-config libreadline-dev zlib1g-dev
    libssl-dev libicu-dev liblz4-dev libzstd-dev libxml2-dev)

majors=("$@")
((${#majors[@]})) || majors=("${ALL_MAJORS[@]}")
source_built=()
for major in "${majors[@]}"; do
    scripts/pg_config.sh "$major" >/dev/null # exits 2 on a major it does not know
    if [[ $major == 15 ]]; then
        PACKAGES+=("${DEBIAN_MAJOR_PACKAGES[@]}")
    else
        source_built+=("$major")
    fi
done
if ((${#source_built[@]})); then
    PACKAGES+=("${SOURCE_BUILD_PACKAGES[@]}")
fi

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "==> installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        "${missing[@]}" >/dev/null
fi

# Citus 13.2.2 for the Citus scenario of the whole-server tests (tests/tap/t/030_citus.pl), into
# PostgreSQL 15's directories (about 2 minutes; skipped when it is there). Citus is AGPL-licensed:
# it is only built and used by the tests, never linked into or shipped with sno. The build script
# lies beside the checkout (../shared/tools); where it is missing or fails, setting up goes on,
# the scenario skips itself and scripts/test.sh's summary says that Citus was not tested.
CITUS_BUILD=../shared/tools/citus-build.sh
if [[ " ${majors[*]} " == *" 15 "* ]]; then
    if [[ ! -f $CITUS_BUILD ]]; then
        echo "setup.sh: no $CITUS_BUILD beside the checkout: Citus not built" >&2
    elif ! bash "$CITUS_BUILD" "$(scripts/pg_config.sh 15)"; then
        echo "setup.sh: $CITUS_BUILD failed (see above): Citus not built" >&2
    fi
fi

# A major that fails to build leaves the others to build and pgrx to be pointed at them; the
# run fails at the end (exit 3 when the only failure is a source package the mirror does not
# serve: scripts/test.sh then tests the other majors and says which it could not).
failed_majors=()
unavailable_majors=()
for major in "${source_built[@]}"; do
    status=0
    scripts/build-postgresql.sh "$major" || status=$?
    case $status in
    0) ;;
    3) unavailable_majors+=("$major") ;;
    *) failed_majors+=("$major") ;;
    esac
done

if [[ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]]; then
    echo "==> installing cargo-pgrx $PGRX_VERSION (takes about 8 minutes)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked --quiet
fi

# `cargo pgrx init` rewrites the whole configuration, so it gets every major installed, also
# those that were not asked for this time.
init_arguments=()
configured=true
for major in "${ALL_MAJORS[@]}"; do
    pg_config=$(scripts/pg_config.sh "$major")
    "$pg_config" --version &>/dev/null || continue
    init_arguments+=("--pg$major" "$pg_config")
    grep -qs "^pg$major = \"$pg_config\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml" || configured=false
done
if ! $configured; then
    echo "==> pointing pgrx at ${init_arguments[*]}"
    cargo pgrx init "${init_arguments[@]}" >/dev/null
fi

if ((${#failed_majors[@]})); then
    echo "setup.sh: PostgreSQL ${failed_majors[*]} ${unavailable_majors[*]} not installed (see above)" >&2
    exit 1
fi
if ((${#unavailable_majors[@]})); then
    echo "setup.sh: PostgreSQL ${unavailable_majors[*]} not installed: no source package here" >&2
    exit 3
fi
