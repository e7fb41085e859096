#!/usr/bin/env bash
# sno through the drivers applications use, against a throwaway cluster: Python's psycopg 3
# and asyncpg (tests/clients/python_drivers.py) and Go's pgx v4 and lib/pq
# (tests/clients/go/sno_drivers), Java's pgJDBC (tests/clients/java), all from Debian's
# packages, Go built offline; and the Rust crate's own ToSql/FromSql and sqlx impls
# (tests/clients/rust).
#
# Needs: root, sno installed into PostgreSQL 15, python3-psycopg, python3-asyncpg, golang-go,
# golang-github-jackc-pgx-v4-dev, golang-github-lib-pq-dev, a JDK and libpostgresql-jdbc-java
# (scripts/setup.sh installs them).
# Usage: tests/server/clients.sh   (prints PASS/FAIL per check, then "N passed, M failed")
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

cleanup() {
    local rc=$?
    stop_cluster
    report_if_aborted "$rc"
}

start_cluster /tmp/sno-clients-test 5610 >/dev/null
trap cleanup EXIT
psql_in postgres -c "CREATE EXTENSION sno" -c "ALTER SYSTEM SET sno.partition = 31" \
    -c "ALTER SYSTEM SET listen_addresses = 'localhost'" >/dev/null
restart_cluster # pgJDBC connects over TCP only

export PGHOST=$PGHOST_TEST PGPORT=$PGPORT_TEST PGUSER=postgres

# The system's Python, where Debian installs the drivers (not a pyenv or virtualenv one).
check "Python: psycopg 3 and asyncpg" /usr/bin/python3 "$here/../clients/python_drivers.py"

# Go without modules: the drivers' sources come from Debian's packages in /usr/share/gocode.
go_build() {
    (cd "$here/../clients/go/sno_drivers" &&
        GO111MODULE=off GOPATH=/tmp/sno-clients-test/gopath:/usr/share/gocode \
            GOCACHE=/tmp/sno-go-cache go build -o /tmp/sno-clients-test/sno_drivers .)
}
check "Go: the test program builds offline" go_build
check "Go: pgx v4 and lib/pq" /tmp/sno-clients-test/sno_drivers

# Java: pgJDBC from Debian's package.
JDBC_JAR=/usr/share/java/postgresql.jar
java_build() {
    javac -d /tmp/sno-clients-test/java -cp "$JDBC_JAR" "$here/../clients/java/SnoJdbc.java"
}
check "Java: the test program compiles" java_build
check "Java: pgJDBC" java -cp "/tmp/sno-clients-test/java:$JDBC_JAR" SnoJdbc

# Rust: the crate's postgres-types and sqlx features, without the extension, as an
# application depends on it.
rust_build() {
    cargo build --quiet --manifest-path "$here/../clients/rust/Cargo.toml"
}
check "Rust: the client test program builds (features postgres-types, sqlx)" rust_build
check "Rust: the postgres crate and sqlx" "$here/../clients/rust/target/debug/sno-client-tests"
finish
