#!/usr/bin/env bash
# Builds the programs of the client test (t/*_clients.pl) from tests/clients into OUT_DIR, so
# that the user running the servers needs neither the toolchains nor access to the checkout:
#   OUT_DIR/python_drivers.py   Python's psycopg 3 and asyncpg (run with Debian's python3)
#   OUT_DIR/sno_drivers         Go's pgx v4 and lib/pq, built offline from Debian's packages
#   OUT_DIR/java/SnoJdbc.class  Java's pgJDBC (run with /usr/share/java/postgresql.jar)
#   OUT_DIR/sno-client-tests    the Rust crate's postgres-types and sqlx impls
# Needs: python3-psycopg, python3-asyncpg, golang-go, golang-github-jackc-pgx-v4-dev,
# golang-github-lib-pq-dev, a JDK and libpostgresql-jdbc-java (scripts/setup.sh installs them),
# and cargo. Usage: tests/build_clients.sh OUT_DIR
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
clients=$(cd "$here/clients" && pwd)
repo=$(cd "$here/.." && pwd)
out=$1
mkdir -p "$out"

cp "$clients/python_drivers.py" "$out/"

# Go without modules: the drivers' sources come from Debian's packages in /usr/share/gocode.
# The build cache lives in target/ so that a second run builds nothing.
gopath=$(mktemp -d)
trap 'rm -rf "$gopath"' EXIT
(cd "$clients/go/sno_drivers" &&
    GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOCACHE="$repo/target/clients-go-cache" \
        go build -o "$out/sno_drivers" .)

javac -d "$out/java" -cp /usr/share/java/postgresql.jar "$clients/java/SnoJdbc.java"

# The crate's postgres-types and sqlx features, without the extension, as an application
# depends on it; copied from where cargo says it put it (the user's CARGO_TARGET_DIR, if set).
program=$("$repo/scripts/cargo.sh" build --quiet --manifest-path "$clients/rust/Cargo.toml" \
    --message-format json-render-diagnostics |
    grep -o '"executable":"[^"]*/sno-client-tests"' | cut -d'"' -f4)
cp "$program" "$out/"
