# Shared helpers for the server-level tests in this directory. Source it; don't run it.
#
# Provides:
#   start_cluster DIR PORT_BASE   initdb a throwaway PostgreSQL 15 cluster in DIR and start it
#                                 on the first free port >= PORT_BASE (sets PGPORT_TEST, PGHOST_TEST)
#   psql_in DB ARGS...            psql as the postgres user against that cluster, stop on first error
#   pg_as_postgres CMD ARGS...    run a PostgreSQL 15 binary (pg_dump, createdb, ...) as postgres
#   stop_server / start_server [PG_CTL_ARGS...] / restart_cluster [PG_CTL_ARGS...]
#                                 stop (fast) / start / both, logging to DIR/server.log; extra
#                                 args (e.g. -o "-c name=value") apply to this start only
#   wait_until_ready [SECONDS]    wait until the server accepts connections (after a crash)
#   reload_cluster                pg_reload_conf() and wait until new sessions see it
#   set_setting NAME VALUE [NAME VALUE]...
#                                 ALTER SYSTEM SET NAME = 'VALUE' for each pair, then one reload
#   reset_setting NAME...         ALTER SYSTEM RESET each NAME, then one reload
#   crash_backend LOG             kill -9 a backend, wait for the crash restart (LOG: server log)
#   check NAME CMD ARGS...        run CMD, print PASS/FAIL NAME, count the result
#   finish                        print "N passed, M failed" and exit non-zero if anything failed
#   report_if_aborted RC          in an EXIT trap: a script that stopped early fails, with a summary
#
# The cluster is stopped and DIR removed on exit (including on failure) through an EXIT trap.

# The PostgreSQL to run, by its bin directory (a source build or an unpacked bundle works too,
# with LD_LIBRARY_PATH set for its libraries), and the OS user that runs it.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_OS_USER=${PG_OS_USER:-postgres}
PASSED=0
FAILED=0
CLUSTER_DIR=
PGPORT_TEST=
PGHOST_TEST=

# Everything here runs as root, and PostgreSQL refuses to run as root: go through the
# PG_OS_USER for every binary. From /, since the checkout may be a directory that user cannot
# enter (root's home), and psql would complain about it into output that checks compare.
pg_as_postgres() {
    local bin=$1
    shift
    runuser -u "$PG_OS_USER" -- env --chdir=/ ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH="$LD_LIBRARY_PATH"} \
        "$PG_BIN/$bin" "$@"
}

# The first port >= $1 with no TCP listener and no socket in /tmp. Our cluster listens on a
# unix socket in its own directory only, so a clash couldn't actually break it, but other
# clusters on this machine (the benchmark ones) take ports too, and keeping our port unique
# means a stray `psql -p PORT` can never reach the wrong server.
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
    chown "$PG_OS_USER": "$dir"
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

stop_server() {
    pg_as_postgres pg_ctl -D "$CLUSTER_DIR/data" -m fast -w stop >/dev/null
}

# Not `pg_ctl restart`: that reuses the options of the previous start (postmaster.opts), so
# one start with -o "-c ..." would stick to every later restart.
start_server() {
    pg_as_postgres pg_ctl -D "$CLUSTER_DIR/data" -l "$CLUSTER_DIR/server.log" -w "$@" start \
        >/dev/null
}

restart_cluster() {
    stop_server
    start_server "$@"
}

wait_until_ready() {
    local deadline=$((SECONDS + ${1:-60}))
    until pg_as_postgres pg_isready -q -h "$PGHOST_TEST" -p "$PGPORT_TEST"; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "server not ready after ${1:-60} s" >&2; return 1; }
        sleep 0.1
    done
}

# pg_reload_conf() only signals the postmaster, which re-reads the files a moment later; new
# sessions inherit its settings, so wait until a new session reports a newer load time.
reload_cluster() {
    local before deadline=$((SECONDS + 10))
    before=$(psql_in postgres -c "SELECT extract(epoch FROM clock_timestamp())")
    psql_in postgres -c "SELECT pg_reload_conf()" >/dev/null
    until [ "$(psql_in postgres -c \
        "SELECT extract(epoch FROM pg_conf_load_time()) > $before")" = t ]; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "reload not seen after 10 s" >&2; return 1; }
        sleep 0.05
    done
}

# One reload for all pairs, so no session can see half of a change (a new sequence_min with
# the old sequence_max, say).
set_setting() {
    while [ "$#" -ge 2 ]; do
        psql_in postgres -v name="$1" -v value="$2" <<'SQL'
SELECT format('ALTER SYSTEM SET %s = %L', :'name', :'value') \gexec
SQL
        shift 2
    done
    reload_cluster
}

reset_setting() {
    local name
    for name in "$@"; do
        psql_in postgres -v name="$name" <<'SQL'
SELECT format('ALTER SYSTEM RESET %s', :'name') \gexec
SQL
    done
    reload_cluster
}

# kill -9 of one backend: the postmaster treats it as a crash and re-creates shared memory.
# Waits until the server (logging to LOG) has restarted and accepts connections again.
crash_backend() {
    local log=$1 crashes_before victim pid=
    crashes_before=$(grep -c "all server processes terminated; reinitializing" "$log" || true)
    pg_client psql -X -q -d postgres -c "SELECT pg_sleep(600)" >/dev/null 2>&1 &
    victim=$!
    until [ -n "$pid" ]; do
        sleep 0.1
        pid=$(psql_in postgres -c "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'")
    done
    kill -9 "$pid"
    wait "$victim" || true
    local deadline=$((SECONDS + 60))
    until [ "$(grep -c "all server processes terminated; reinitializing" "$log" || true)" -gt \
        "$crashes_before" ] || [ "$SECONDS" -gt "$deadline" ]; do
        sleep 0.1
    done
    wait_until_ready 60
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

# Succeeds when CMD fails (its stderr hidden): for checks that something is refused.
not() {
    ! "$@" 2>/dev/null
}

# Succeeds when FILE exists and does not contain the bytes of STRING.
not_grep() {
    [ -f "$2" ] && ! grep -qa -- "$1" "$2"
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

# For an EXIT trap: if the script stops before `finish` (a step outside a check failed under
# set -e), count that as a failure and still end with the summary line.
FINISHED=
report_if_aborted() {
    local rc=$1
    if [ -z "$FINISHED" ]; then
        echo "FAIL: aborted (exit status $rc) before all checks ran"
        FAILED=$((FAILED + 1))
        echo "$PASSED passed, $FAILED failed"
        exit 1
    fi
}

finish() {
    FINISHED=1
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
