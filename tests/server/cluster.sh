# Shared helpers for the server-level tests in this directory. Source it; don't run it.
#
# Provides:
#   start_cluster DIR PORT_BASE   initdb a throwaway PostgreSQL 15 cluster in DIR and start it
#                                 on the first free port >= PORT_BASE (sets PGPORT_TEST, PGHOST_TEST)
#   psql_in DB ARGS...            psql as the postgres user against that cluster, stop on first error
#   pg_as_postgres CMD ARGS...    run a PostgreSQL 15 binary (pg_dump, createdb, ...) as postgres
#   check NAME CMD ARGS...        run CMD, print PASS/FAIL NAME, count the result
#   finish                        print "N passed, M failed" and exit non-zero if anything failed
#
# The cluster is stopped and DIR removed on exit (including on failure) through an EXIT trap.

PG_BIN=/usr/lib/postgresql/15/bin
PASSED=0
FAILED=0
CLUSTER_DIR=
PGPORT_TEST=
PGHOST_TEST=

# Everything here runs as root, and PostgreSQL refuses to run as root: go through the
# postgres OS user for every server-side binary.
pg_as_postgres() {
    local bin=$1
    shift
    runuser -u postgres -- "$PG_BIN/$bin" "$@"
}

# The first port >= $1 with no TCP listener and no socket in /tmp. Our cluster listens on a
# unix socket in its own directory only, so a clash couldn't actually break it, but other
# clusters on this machine (the benchmark ones) take ports too, and keeping our port unique
# means a stray `psql -p PORT` can never reach the wrong server.
free_port() {
    local port=$1
    while [ -n "$(ss -Hltn "sport = :$port")" ] || [ -e "/tmp/.s.PGSQL.$port" ]; do
        port=$((port + 1))
    done
    echo "$port"
}

stop_cluster() {
    if [ -n "$CLUSTER_DIR" ] && [ -f "$CLUSTER_DIR/data/postmaster.pid" ]; then
        pg_as_postgres pg_ctl -D "$CLUSTER_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    if [ -n "$CLUSTER_DIR" ]; then
        rm -rf "$CLUSTER_DIR"
    fi
}

# initdb + start. DIR is wiped first so a run killed half-way doesn't break the next one;
# a server still running from such a run is stopped before wiping.
start_cluster() {
    local dir=$1 port_base=$2
    CLUSTER_DIR=$dir
    trap stop_cluster EXIT
    stop_cluster
    CLUSTER_DIR=$dir

    mkdir -p "$dir"
    chown postgres: "$dir"
    # Also owned by postgres: pg_dump writes its output here.
    pg_as_postgres initdb -D "$dir/data" -A trust -U postgres >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; return 1; }

    PGPORT_TEST=$(free_port "$port_base")
    PGHOST_TEST=$dir
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $PGPORT_TEST
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'sno'
fsync = off
CONF
    pg_as_postgres pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null \
        || { cat "$dir/server.log" >&2; return 1; }
    echo "cluster up: $dir, port $PGPORT_TEST"
}

# Quiet, unaligned, stop at the first error, no ~/.psqlrc: output is meant to be compared.
psql_in() {
    local db=$1
    shift
    pg_as_postgres psql -X -q -A -t -v ON_ERROR_STOP=1 \
        -h "$PGHOST_TEST" -p "$PGPORT_TEST" -U postgres -d "$db" "$@"
}

# Client tools (pg_dump, pg_restore, createdb) pointed at our cluster.
pg_client() {
    local bin=$1
    shift
    pg_as_postgres "$bin" -h "$PGHOST_TEST" -p "$PGPORT_TEST" -U postgres "$@"
}

check() {
    local name=$1
    shift
    if "$@"; then
        echo "PASS: $name"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL: $name"
        FAILED=$((FAILED + 1))
    fi
}

# Succeeds when the two strings are equal; otherwise says what differed.
same() {
    if [ "$1" = "$2" ]; then
        return 0
    fi
    echo "  expected: $2" >&2
    echo "  got:      $1" >&2
    return 1
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
