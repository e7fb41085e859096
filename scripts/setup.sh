#!/usr/bin/env bash
# Installs what building and testing sno needs on Debian 12, skipping what is already there:
# PostgreSQL 15 server and headers, clang for bindgen, sudo (tests run the server as `postgres`),
# faketime (tests step the server's clock), binutils (packaging), Python's and Go's drivers
# (client tests),
# cargo-pgrx 0.18.1, and pgrx pointed at the system PostgreSQL. Run as root.
set -euo pipefail

PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PGRX_VERSION=0.18.1
PACKAGES=(postgresql-15 postgresql-server-dev-15 libclang-dev clang sudo faketime binutils
    python3-psycopg python3-asyncpg golang-go golang-github-jackc-pgx-v4-dev golang-github-lib-pq-dev
    default-jdk-headless libpostgresql-jdbc-java)

missing=()
for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "==> installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]]; then
    echo "==> installing cargo-pgrx $PGRX_VERSION (takes about 8 minutes)"
    cargo install cargo-pgrx --version "$PGRX_VERSION" --locked --quiet
fi

if ! grep -qs "^pg15 = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    echo "==> pointing pgrx at $PG_CONFIG"
    cargo pgrx init --pg15 "$PG_CONFIG" >/dev/null
fi
