# A throwaway PostgreSQL cluster with sno preloaded, for the demo, the benchmarks and the SQL
# tests: the one place that knows how to run a server here. Source it; don't run it. (The
# whole-server tests use PostgreSQL's own PostgreSQL::Test::Cluster instead: tests/tap.sh.)
#
# Which PostgreSQL: PG_CONFIG, its pg_config (default: this checkout's 15; scripts/pg_config.sh
# MAJOR prints the one for another major). The server runs as PG_OS_USER (default postgres),
# since PostgreSQL refuses root. PG_BIN, a bin directory, overrides PG_CONFIG, for an unpacked
# bundle on a machine without pg_config (with LD_LIBRARY_PATH set for its libraries).
#
#   start_cluster DIR PORT_BASE [keep]
#                     initdb a cluster in DIR/data (wiping DIR) and start it on the first free
#                     port >= PORT_BASE, with its socket in DIR (sets CLUSTER_DIR, CLUSTER_PORT).
#                     It is stopped and DIR removed when the script exits, unless `keep`.
#   psql_in DB ARGS...           psql against it: quiet, unaligned, stops at the first error
#   pg_client BIN ARGS...        another client (pgbench, pg_dump, ...) pointed at it
#   pg_as_postgres BIN ARGS...   a PostgreSQL program as PG_OS_USER
#   restart_cluster              stop (fast) and start again with the same settings
#   stop_cluster                 stop it and remove DIR

PG_CONFIG=${PG_CONFIG:-$("$(dirname "${BASH_SOURCE[0]}")/pg_config.sh" 15)}
PG_BIN=${PG_BIN:-$("$PG_CONFIG" --bindir)}
PG_OS_USER=${PG_OS_USER:-postgres}
CLUSTER_DIR=
CLUSTER_PORT=

# From /, since the checkout may be a directory that user cannot enter (root's home), and the
# programs would complain about it into output that tests compare.
pg_as_postgres() {
    local bin=$1
    shift
    runuser -u "$PG_OS_USER" -- env --chdir=/ ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} \
        "$PG_BIN/$bin" "$@"
}

# The first port >= $1 with no TCP listener and no socket in /tmp: the cluster listens on a
# socket in its own directory only, but a unique port keeps a stray `psql -p PORT` from
# reaching another server.
free_port() {
    local port=$1
    while { command -v ss >/dev/null && [ -n "$(ss -Hltn "sport = :$port")" ]; } ||
        [ -e "/tmp/.s.PGSQL.$port" ]; do
        port=$((port + 1))
    done
    echo "$port"
}

stop_cluster() {
    if [ -n "$CLUSTER_DIR" ] && [ -f "$CLUSTER_DIR/data/postmaster.pid" ]; then
        pg_as_postgres pg_ctl -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    if [ -n "$CLUSTER_DIR" ]; then
        rm -rf "$CLUSTER_DIR"
    fi
}

# DIR is wiped first, so a run killed half-way doesn't break the next one; a server still
# running from such a run is stopped before.
start_cluster() {
    local dir=$1 port_base=$2 keep=${3:-}
    if [ -f "$dir/data/postmaster.pid" ]; then
        pg_as_postgres pg_ctl -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    CLUSTER_DIR=$dir
    if [ "$keep" != keep ]; then
        trap stop_cluster EXIT
    fi
    mkdir -p "$dir"
    chown "$PG_OS_USER": "$dir"
    pg_as_postgres initdb -D "$dir/data" -A trust -U postgres --locale=C.UTF-8 --no-sync \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
    CLUSTER_PORT=$(free_port "$port_base")
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $CLUSTER_PORT
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'sno'
CONF
    pg_as_postgres pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null \
        || { cat "$dir/server.log" >&2; return 1; }
}

restart_cluster() {
    pg_as_postgres pg_ctl -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -m fast -w restart \
        >/dev/null
}

psql_in() {
    local db=$1
    shift
    pg_as_postgres psql -X -q -A -t -v ON_ERROR_STOP=1 \
        -h "$CLUSTER_DIR" -p "$CLUSTER_PORT" -U postgres -d "$db" "$@"
}

pg_client() {
    local bin=$1
    shift
    pg_as_postgres "$bin" -h "$CLUSTER_DIR" -p "$CLUSTER_PORT" -U postgres "$@"
}
