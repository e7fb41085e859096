#!/usr/bin/env bash
# Installs what building sno, its demo and its tests need on Debian 12, skipping what is there:
#
#     scripts/setup.sh [MAJOR...]            # the demo: build tools and PostgreSQL MAJOR (15)
#     scripts/setup.sh --tests [MAJOR...]    # the tests: all of that for MAJORs (15 to 19),
#                                            # and what the tests use besides
#     scripts/setup.sh --tests --without-citus [MAJOR...]   # the same, Citus left to the caller
#
# Building needs clang's library (pgrx's bindgen reads PostgreSQL's headers with it) and a
# PostgreSQL of each major: scripts/get-postgresql.sh unpacks the project's relocatable builds
# (and for 19, Debian's packages of its release candidate in a Debian unstable root, about 3
# minutes and 1.4 GB: scripts/get-postgresql-19.sh) into this checkout's own installations
# (scripts/pg_config.sh), never the system's. The tests add PostgreSQL's TAP modules, Perl's
# IPC::Run, faketime (steps a server's clock), the client drivers and what the ORM tests install
# from PyPI and npm with (python3-venv, npm; libpq for Diesel), sqlsmith (the fuzzing test),
# what building PostgreSQL 18 with assertions from source needs (scripts/test-cassert.sh),
# Debian's own PostgreSQL 15 (the Debian package's test installs into it), and Citus for each
# major one supports (13.2.2 on 15, 14.0.1 on 16 to 18; none runs on 19 yet; AGPL: built only
# for the tests, from ../shared, never shipped). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=false
citus=true
if [[ ${1:-} == --tests ]]; then
    tests=true
    shift
fi
# scripts/test.sh builds Citus in the background itself, while the first tests run.
if [[ ${1:-} == --without-citus ]]; then
    citus=false
    shift
fi
majors=("$@")
if ((${#majors[@]} == 0)); then
    if $tests; then majors=(15 16 17 18 19); else majors=(15); fi
fi
for major in "${majors[@]}"; do
    scripts/pg_config.sh "$major" >/dev/null # exits 2 on a major it does not know
done

PACKAGES=(libclang-dev clang)
TEST_PACKAGES=(faketime binutils libipc-run-perl
    postgresql-15
    python3-psycopg python3-asyncpg golang-go golang-github-jackc-pgx-v4-dev
    golang-github-lib-pq-dev default-jdk-headless libpostgresql-jdbc-java
    python3-venv libpq-dev sqlsmith
    build-essential bison flex pkg-config libreadline-dev zlib1g-dev libssl-dev libicu-dev
    liblz4-dev libzstd-dev libxml2-dev libkrb5-dev)
! $tests || PACKAGES+=("${TEST_PACKAGES[@]}")

# npm for the ORM tests: Debian's, unless a Node.js with its own npm is there (this image's
# NodeSource nodejs, which conflicts with Debian's npm package).
! $tests || command -v npm >/dev/null || PACKAGES+=(npm)

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if ((${#missing[@]})); then
    echo "==> installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        "${missing[@]}" >/dev/null
fi

if ! $tests; then
    scripts/get-postgresql.sh "${majors[@]}"
    exit 0
fi
scripts/get-postgresql.sh --tap-modules "${majors[@]}"

# Citus for the Citus scenario (tests/t/030_citus.pl), about 2 minutes a major, skipped
# where it is installed. The scenario fails where a major Citus supports lacks it, so a failed
# build fails here.
! $citus || scripts/build-citus.sh "${majors[@]}"
