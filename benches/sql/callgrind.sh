# shellcheck shell=bash
# What the instruction benchmarks (hook_instructions.sh, generate_instructions.sh) share: SQL
# run in PostgreSQL's single-user mode (`postgres --single`, one backend, no client) under
# valgrind's callgrind, on a cluster of scripts/cluster.sh. Source it after cluster.sh; don't
# run it.
#
#   require_callgrind N    exits unless N is a positive integer, this runs as root (the server
#                          runs as the postgres user) and valgrind is installed
#   single_user_callgrind TOGGLE DATA PRELOAD DB INPUT OUT
#                          runs the statements of the file INPUT in database DB of the data
#                          directory DATA (shared_preload_libraries = PRELOAD), counting only
#                          what runs inside the function TOGGLE; the profile goes to OUT
#                          (/dev/null for none), callgrind's summary to standard output
#   collected              reads that summary on standard input: the instructions counted
#   run_report             prepare, report and stop_cluster (the script's functions), timed

require_callgrind() {
    [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive integer, got '$1'" >&2; exit 2; }
    [[ $(id -u) == 0 ]] || { echo "run as root (the server is started as the postgres user)" >&2; exit 2; }
    command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }
}

single_user_callgrind() {
    local toggle=$1 data=$2 preload=$3 db=$4 input=$5 out=$6
    chmod 644 "$input"
    runuser -u "$PG_OS_USER" -- env --chdir=/ valgrind --tool=callgrind \
        --toggle-collect="$toggle" --callgrind-out-file="$out" \
        "$PG_BIN/postgres" --single -D "$data" -c shared_preload_libraries="$preload" "$db" \
        <"$input" 2>&1 >/dev/null
}

collected() { grep -o 'Collected : [0-9]*' | awk '{ print $3 }'; }

run_report() {
    local t0=$SECONDS
    log "preparing a cluster in $DIR"
    prepare
    report
    stop_cluster
    log "done in $((SECONDS - t0)) s"
}
