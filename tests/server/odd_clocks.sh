#!/usr/bin/env bash
# Odd clocks, crashes and operator mistakes, against throwaway clusters.
#
# Why: "never repeats" has to hold off the well-trodden paths too. Each scenario starts a fresh
# cluster (so no history of an earlier one can excuse or cause a wait) and checks:
#   backfills      sno_generate_at never repeats an ID, across restarts and crashes, or says why not
#   stalls         after clock steps back, forward, restarts and crashes, the first ID comes
#                  within the 10 s look-ahead; a wait that cannot be avoided is logged and shown
#   reload order   a reload made after the clock stepped back still applies
#   state file     a damaged, unreadable or missing state file never keeps PostgreSQL down, and a
#                  failed refresh warns while IDs are still covered
# Every ID made goes into a table whose primary key is the ID: a repeat fails its INSERT.
#
# Needs: root, a TEST build of sno (sno.test_clock_offset_ms) installed into PostgreSQL 15,
# libfaketime (the faketime package). Usage: tests/server/odd_clocks.sh [SCENARIO...]
# (prints PASS/FAIL per check, then "N passed, M failed").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

DIR=/tmp/sno-odd-clocks
LOG=$DIR/server.log
STATE=$DIR/data/sno_generator.state
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
LOOKAHEAD_S=10

# --- helpers ---------------------------------------------------------------------------------

q() {
    psql_in postgres -c "$1"
}

generator_stat() {
    q "SELECT $1 FROM sno_generator_stats()"
}

# A new cluster with partition 7000, backfills in 7001, and the table every ID goes into.
fresh_cluster() {
    start_cluster "$DIR" 5570 >/dev/null
    trap cleanup EXIT
    psql_in postgres <<'SQL'
CREATE EXTENSION sno;
CREATE TABLE ids (id sno PRIMARY KEY, phase text NOT NULL);
ALTER SYSTEM SET sno.partition = 7000;
ALTER SYSTEM SET sno.backfill_partition = 7001;
SQL
    reload_cluster
}

# COUNT IDs from sno_generate into the table, tagged PHASE.
generate() {
    q "INSERT INTO ids SELECT sno_generate(1), '$1' FROM generate_series(1, ${2:-100})"
}

# About SECONDS of steady generation: 100 IDs every 0.1 s.
generate_for() {
    q "DO \$\$ BEGIN FOR i IN 1..$(($2 * 10)) LOOP
         INSERT INTO ids SELECT sno_generate(1), '$1' FROM generate_series(1, 100);
         PERFORM pg_sleep(0.1);
       END LOOP; END \$\$"
}

# Seconds the first sno_generate of a new session took (and its ID is stored under PHASE).
first_id_seconds() {
    psql_in postgres <<SQL
SELECT clock_timestamp() AS began \gset
INSERT INTO ids SELECT sno_generate(1), '$1';
SELECT round(extract(epoch FROM clock_timestamp() - :'began')::numeric, 1);
SQL
}

# Succeeds when SECONDS is within the look-ahead (with 1 s for the machine).
within_lookahead() {
    if [ "$(q "SELECT $1 <= $LOOKAHEAD_S + 1")" = t ]; then
        return 0
    fi
    echo "  waited ${1}s" >&2
    return 1
}

set_offset_ms() {
    set_setting sno.test_clock_offset_ms "$1"
}

# The ERROR, DETAIL and HINT lines of a statement expected to fail, SQLSTATE included.
error_of() {
    pg_client psql -X -q -A -t -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d postgres -c "$1" \
        2>&1 >/dev/null | grep -E '^(ERROR|DETAIL|HINT):' || true
}

no_repeats() {
    same "$(q "SELECT count(*) = count(DISTINCT id) FROM ids")" t
}

log_count() {
    grep -cF -- "$1" "$LOG" || true
}

cleanup() {
    local rc=$?
    stop_cluster
    report_if_aborted "$rc"
}

# --- backfills -----------------------------------------------------------------------------------
# 70,000 IDs for one instant used to give 65,536 distinct ones, the same again after a restart,
# and backfills of live IDs' times collided with them.
scenario_backfills() {
    fresh_cluster
    reset_setting sno.backfill_partition
    check "backfill: without sno.backfill_partition -> 55000, what and what to do" \
        same "$(error_of "SELECT sno_generate_at(1, now())")" \
        "ERROR:  55000: sno_generate_at requires sno.backfill_partition to be set
DETAIL:  Backfill IDs carry a partition of their own, so that they cannot repeat an ID from sno_generate.
HINT:  Set sno.backfill_partition in postgresql.conf to a partition that no server uses for sno.partition or sno.backfill_partition, then reload."
    set_setting sno.backfill_partition 7000
    check "backfill: sno.backfill_partition = sno.partition -> 55000" \
        same "$(error_of "SELECT sno_generate_at(1, now())" | head -n 1)" \
        "ERROR:  55000: sno.backfill_partition (7000) is this server's sno.partition"
    set_setting sno.backfill_partition 7001

    check "backfill: 70,000 IDs for one instant insert without a repeat" \
        q "INSERT INTO ids SELECT sno_generate_at(1, '2024-01-01 00:00:00+00'), 'instant'
           FROM generate_series(1, 70000)"
    check "backfill: ... 65,536 in tick-tock 0 and 4,464 in 1, all in partition 7001" \
        same "$(q "SELECT string_agg(t || ':' || n, ',' ORDER BY t)
                   FROM (SELECT sno_tick_tock(id) AS t, count(*) AS n FROM ids
                         WHERE phase = 'instant' AND sno_partition(id) = 7001
                         AND sno_time(id) = '2024-01-01 00:00:00+00' GROUP BY 1) AS s")" \
        "0:65536,1:4464"
    restart_cluster
    check "backfill: after a clean restart, more for that instant -> 54000, never a repeat" \
        same "$(error_of "SELECT sno_generate_at(1, '2024-01-01 00:00:00+00')" | head -n 1)" \
        "ERROR:  54000: sno_generate_at cannot make another ID for meta 1 at 2024-01-01 00:00:00.000+00"

    generate live 20000
    check "backfill: one for each of 20,000 live IDs' times (ORDER BY id) meets none of them" \
        q "INSERT INTO ids SELECT sno_generate_at(1, sno_time(id)), 'of_live'
           FROM ids WHERE phase = 'live' ORDER BY id"
    check "backfill: ... each has its live ID's unit" \
        same "$(q "SELECT count(*) FROM (SELECT sno_time(id) AS t, row_number() OVER (ORDER BY id) AS n
                   FROM ids WHERE phase = 'of_live') AS b JOIN (SELECT sno_time(id) AS t,
                   row_number() OVER (ORDER BY id) AS n FROM ids WHERE phase = 'live') AS l
                   USING (n) WHERE b.t = l.t")" 20000

    # A real backfill: rows of another system, with their own times, in time order.
    q "CREATE TABLE legacy AS SELECT g AS n, timestamptz '2020-01-01' + g * interval '7 s'
         + random() * interval '5 s' AS created_at FROM generate_series(1, 30000) AS g"
    check "backfill: a legacy table's 30,000 rows get IDs of their own times" \
        same "$(q "WITH filled AS (INSERT INTO ids SELECT sno_generate_at(2, created_at), 'legacy'
                   FROM legacy ORDER BY created_at RETURNING id)
                   SELECT count(*) FROM filled")" 30000
    check "backfill: ... sorted by ID, the rows are in time order" \
        same "$(q "SELECT count(*) FROM (SELECT sno_time(id) AS t, lag(sno_time(id)) OVER
                   (ORDER BY id) AS prev FROM ids WHERE phase = 'legacy') AS s WHERE t < prev")" 0
    crash_backend "$LOG"
    check "backfill: after a crash, a second pass over the same times: no repeat, tick-tock 1" \
        same "$(q "WITH filled AS (INSERT INTO ids SELECT sno_generate_at(2, created_at), 'legacy2'
                   FROM legacy ORDER BY created_at RETURNING id)
                   SELECT count(*) || ':' || min(sno_tick_tock(id)) FROM filled")" "30000:1"
    check "backfill: a third pass over those times -> 55000, saying why and what to do" \
        same "$(error_of "SELECT sno_generate_at(2, '2020-01-01 00:00:10+00')" \
                | sed 's/already reach .*/already reach .../')" \
        "ERROR:  55000: sno_generate_at cannot make another ID for meta 2 at 2020-01-01 00:00:10.000+00
DETAIL:  Backfill IDs of meta 2 already reach ...
HINT:  Backfill in time order (ORDER BY the time column), one pass per meta; a further pass over the same times needs another meta. sno_backfill_cursors() shows how far each meta reaches."
    check "backfill: sno_backfill_cursors() shows metas 1 and 2" \
        same "$(q "SELECT string_agg(meta || ':' || tick_tock, ',' ORDER BY meta)
                   FROM sno_backfill_cursors()")" "1:1,2:1"
    check "backfill: no ID anywhere repeats" no_repeats
}

# --- stalls --------------------------------------------------------------------------------------
# The clock goes back 120 s while IDs are made for about 6 s; then a crash. The look-ahead
# written after the step used to carry the old timeline's reservation, so the restarted
# generator waited until the clock had caught up with it: 108 s.
scenario_step_back_then_crash() {
    fresh_cluster
    generate before
    set_offset_ms -120000
    generate_for after_step 6
    crash_backend "$LOG"
    local waited
    waited=$(first_id_seconds after_crash)
    check "stalls: 120 s back, 6 s of IDs, crash: first ID in ${waited}s (within 10 s)" \
        within_lookahead "$waited"
    check "stalls: ... no ID repeats" no_repeats
}

scenario_step_back_then_clean_stop() {
    fresh_cluster
    generate before
    set_offset_ms -120000
    generate_for after_step 6
    restart_cluster
    local waited
    waited=$(first_id_seconds after_restart)
    check "stalls: 120 s back, 6 s of IDs, clean restart: first ID in ${waited}s (within 10 s)" \
        within_lookahead "$waited"
    check "stalls: ... no ID repeats" no_repeats
}

scenario_two_crashes() {
    fresh_cluster
    generate before
    set_offset_ms -120000
    generate_for after_step 3
    crash_backend "$LOG"
    sleep 2
    crash_backend "$LOG"
    local waited
    waited=$(first_id_seconds after_crashes)
    check "stalls: 120 s back, two crashes 2 s apart: first ID in ${waited}s (within 10 s)" \
        within_lookahead "$waited"
    check "stalls: ... no ID repeats" no_repeats
}

scenario_forward_then_back() {
    fresh_cluster
    generate before
    set_offset_ms 60000
    generate_for ahead 2
    set_offset_ms 0
    generate_for back 2
    crash_backend "$LOG"
    local waited
    waited=$(first_id_seconds after_crash)
    check "stalls: 60 s forward, back, crash: first ID in ${waited}s (within 10 s)" \
        within_lookahead "$waited"
    check "stalls: ... no ID repeats" no_repeats
}

# Back 8 s (tick-tock 1 starts), then back to 15 s behind: both timelines have used that span,
# so callers must wait until the clock reaches tick-tock 1's last ID. That wait is logged once,
# with its length, and shown by sno_generator_stats() while it lasts.
scenario_two_steps_back() {
    fresh_cluster
    generate before
    set_offset_ms -8000
    generate after_first_step
    set_offset_ms -15000
    pg_client psql -X -q -d postgres -c \
        "INSERT INTO ids SELECT sno_generate(1), 'waiting' FROM generate_series(1, 10)" &
    local waiter=$!
    sleep 1
    check "stalls: two steps back: sno_generator_stats().waiting_until shows the wait" \
        same "$(generator_stat "waiting_until IS NOT NULL")" t
    wait "$waiter"
    local line="is behind IDs this server may have made in both tick-tock timelines; sno_generate waits"
    check "stalls: ... the log says so once, with the length" \
        same "$(log_count "$line"):$(grep -cE -- "$line [0-9]+\.[0-9] s, until " "$LOG")" "1:1"
    check "stalls: ... and afterwards waiting_until is empty" same "$(generator_stat "waiting_until IS NULL")" t
    check "stalls: ... regression_waits = 1, clock_regressions = 1" \
        same "$(generator_stat "regression_waits || ',' || clock_regressions")" "1,1"
    check "stalls: ... no ID repeats" no_repeats
}

# --- reload order ------------------------------------------------------------------------------
# The server's real clock steps back 300 s (libfaketime); a reload made afterwards must still
# apply in a session that applied the previous one before the step.
scenario_reload_after_step_back() {
    fresh_cluster
    if [ ! -e "$FAKETIME_LIB" ]; then
        check "reload order: libfaketime is installed ($FAKETIME_LIB)" false
        return
    fi
    local faketime_file=$DIR/faketime
    echo "+0" >"$faketime_file"
    chown "$PG_OS_USER": "$faketime_file"
    stop_server
    runuser -u "$PG_OS_USER" -- env --chdir=/ LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$faketime_file" \
        FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_CACHE_DURATION=1 \
        "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$LOG" -w start >/dev/null
    set_setting sno.partition 20
    local out
    out=$(psql_in postgres <<SQL
INSERT INTO ids SELECT sno_generate(1), 'partition 20';
SELECT 'before=' || sno_partition(max(id)) FROM ids WHERE phase = 'partition 20';
\! echo -300 > $faketime_file; sleep 2
\! $PG_BIN/psql -X -q -h $PGHOST_TEST -p $PGPORT_TEST -U postgres -d postgres -c "ALTER SYSTEM SET sno.partition = 21" -c "SELECT pg_reload_conf()" >/dev/null; sleep 1
SELECT 'stepped=' || (now() < timestamptz '$(date -u +%FT%T)+00' - interval '200 s');
SELECT 'show=' || current_setting('sno.partition');
INSERT INTO ids SELECT sno_generate(1), 'partition 21' FROM generate_series(1, 10);
SELECT 'ids=' || string_agg(DISTINCT sno_partition(id)::text, ',') FROM ids WHERE phase = 'partition 21';
SELECT 'stats=' || partition FROM sno_generator_stats();
SQL
    ) || true
    field() { sed -n "s/^$1=//p" <<<"$out"; }
    check "reload order: IDs carry partition 20 before the step" same "$(field before)" 20
    check "reload order: the session's clock went back 300 s" same "$(field stepped)" true
    check "reload order: after the step and a reload, SHOW says 21" same "$(field show)" 21
    check "reload order: ... the session's IDs carry 21" same "$(field ids)" 21
    check "reload order: ... sno_generator_stats() says 21" same "$(field stats)" 21
}

# --- state file ----------------------------------------------------------------------------------
scenario_state_file() {
    fresh_cluster
    generate before 1000
    stop_server
    cp -p "$STATE" "$DIR/state.backup"

    truncate -s 60 "$STATE"
    check "state file: cut to 60 bytes, the server still starts" start_server
    check "state file: the log says so once, at start" \
        same "$(log_count "sno: could not read sno_generator.state: sno_generator.state is not a valid sno state file; sno_generate and sno_generate_at raise an error until the file is restored or removed")" 1
    check "state file: the type works" same "$(q "SELECT 'brpk4q72xwf2m63l'::sno::text")" brpk4q72xwf2m63l
    check "state file: existing IDs decode" same "$(q "SELECT count(sno_time(id)) FROM ids")" 1000
    check "state file: sno_generate -> XX001, what happened and what to do" \
        same "$(error_of "SELECT sno_generate(1)")" \
        "ERROR:  XX001: sno cannot generate IDs: could not read sno_generator.state: sno_generator.state is not a valid sno state file
DETAIL:  The file records how far this server's generator went, so that no ID repeats after a restart with the clock set back. Without it, sno_generate and sno_generate_at are off; everything else works.
HINT:  Restore sno_generator.state from a backup of this data directory; or, if no clock on this server has gone back since its newest ID was made, remove the file. The next call reads it again."
    check "state file: sno_generate_at too" \
        same "$(error_of "SELECT sno_generate_at(1, now())" | head -n 1 | cut -c1-35)" \
        "ERROR:  XX001: sno cannot generate "
    check "state file: the file is left as it was" same "$(stat -c %s "$STATE")" 60

    # Restored, with the clock 2 s behind the IDs made before: no restart needed, no repeat.
    cp -p "$DIR/state.backup" "$STATE"
    set_offset_ms -2000
    check "state file: restored from the backup, the next call works (clock 2 s back)" \
        generate after_restore 1000
    check "state file: ... the log says it was read again" \
        same "$(log_count "sno: read sno_generator.state again; generating IDs")" 1
    check "state file: ... no ID repeats" no_repeats
    set_offset_ms 0

    stop_server
    chmod 000 "$STATE"
    start_server
    check "state file: unreadable -> 58030" \
        same "$(error_of "SELECT sno_generate(1)" | head -n 1 | cut -c1-34)" "ERROR:  58030: sno cannot generate"
    local new_history="sno: no state file (sno_generator.state): starting a new history at"
    local histories
    histories=$(log_count "$new_history")
    rm -f "$STATE"
    check "state file: removed, the next call works" generate after_remove
    check "state file: ... and the log says a new history starts" \
        same "$(log_count "$new_history")" $((histories + 1))

    stop_server
    rm -f "$STATE"
    start_server
    check "state file: missing at start: the log says a new history starts" \
        same "$(log_count "$new_history")" $((histories + 2))

    # A refresh that cannot be written: WARNING at once while IDs are still covered, then an
    # error once they are not.
    generate covered 10
    mkdir "$DIR/data/sno_generator.state.tmp"
    set_offset_ms 6000
    check "state file: a failed refresh warns at once, and the ID is still made" \
        same "$(pg_client psql -X -q -A -t -d postgres -c \
                "INSERT INTO ids SELECT sno_generate(1), 'refresh_failed'" 2>&1 | head -n 1)" \
        "WARNING:  sno: could not extend the reservation in sno_generator.state: Is a directory (os error 21)"
    check "state file: ... sno_generator_stats().state_file_failures counts it" \
        same "$(generator_stat "state_file_failures > 0")" t
    set_offset_ms 12000
    check "state file: past the reservation -> 58030, and no ID" \
        same "$(error_of "SELECT sno_generate(1)" | head -n 1 | cut -c1-55)" \
        "ERROR:  58030: sno: could not write sno_generator.state"
    rmdir "$DIR/data/sno_generator.state.tmp"
    check "state file: writable again, IDs are made" generate writable_again
    check "state file: ... no ID repeats" no_repeats
}

ALL=(backfills step_back_then_crash step_back_then_clean_stop two_crashes forward_then_back
    two_steps_back reload_after_step_back state_file)
for scenario in "${@:-${ALL[@]}}"; do
    echo "--- $scenario"
    "scenario_$scenario"
    stop_cluster
done
finish
