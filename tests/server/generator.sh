#!/usr/bin/env bash
# The server-wide ID generator (sno_generate) in shared memory, against a throwaway cluster.
#
# Why: the generator's promises only mean something across real backends, real reloads and
# real restarts: concurrent sessions must never get the same ID, settings must reach every
# session through a reload (and only through one), a clock that goes back must never make an
# ID repeat, not even across a clean or a crash restart, and the server must refuse to make
# IDs where it cannot keep those promises (a standby, no shared_preload_libraries).
#
# Every ID this script makes goes into one table whose primary key is the ID, and the table
# survives every restart: a duplicate anywhere, before or after a restart, fails an INSERT.
#
# Needs: root (runs the server as the postgres OS user), a TEST build of sno (with the
# sno.test_clock_offset_ms setting) installed into PostgreSQL 15.
# Usage: tests/server/generator.sh   (prints PASS/FAIL per check, then "N passed, M failed")
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

DIR=/tmp/sno-gen-test
STANDBY_DATA=$DIR/standby
LOG=$DIR/server.log
SAMPLE=brpk4q72xwf2m63l
DERIVED_PARTITION= # set after start-up, from the server log

# --- helpers ---------------------------------------------------------------------------------

q() {
    psql_in postgres -c "$1"
}

# One column of sno_generator_stats().
stat() {
    q "SELECT $1 FROM sno_generator_stats()"
}

# Makes COUNT IDs with sno_generate(META) in one new session and stores them with PHASE,
# SESSION and their order n. Fails (psql exits non-zero) on a duplicate ID.
generate_into() {
    local phase=$1 session=$2 count=$3 meta=${4:-0}
    q "INSERT INTO ids SELECT sno_generate($meta), '$phase', $session, g
       FROM generate_series(1, $count) AS g"
}

# The ERROR/HINT lines of a statement that is expected to fail, with the SQLSTATE in them
# (VERBOSITY verbose prints "ERROR:  55000: message"). Extra psql arguments (-U ...) go first.
error_of() {
    local sql=$1
    shift
    pg_client psql -X -q -A -t -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d postgres "$@" \
        -c "$sql" 2>&1 >/dev/null | grep -E '^(ERROR|HINT):' || true
}

# IDs of PHASE that are not greater than the one made before them in the same session.
out_of_order() {
    q "SELECT count(*) FROM (
         SELECT id, lag(id) OVER (PARTITION BY session ORDER BY n) AS prev
         FROM ids WHERE phase = '$1') AS s
       WHERE id <= prev"
}

# The distinct tick-tock bits of PHASE's IDs, e.g. "1" or "0,1".
ticks_of() {
    q "SELECT string_agg(DISTINCT sno_tick_tock(id)::text, ',') FROM ids WHERE phase = '$1'"
}

# The distinct tick-tock bits of one step (session number) of check 5.
step_ticks() {
    q "SELECT string_agg(DISTINCT sno_tick_tock(id)::text, ',')
       FROM ids WHERE phase = 'regression' AND session = $1"
}

log_has() {
    grep -qF -- "$1" "$LOG"
}

# Runs N sessions at once, each making COUNT IDs into PHASE; fails if any session failed, and
# then shows the sessions' distinct ERROR lines (not the rest: pgrx adds long backtraces).
concurrent_sessions() {
    local phase=$1 sessions=$2 count=$3 meta=$4 s pids=() failed=0
    for s in $(seq 1 "$sessions"); do
        generate_into "$phase" "$s" "$count" "$meta" 2>"$DIR/$phase-$s.err" &
        pids+=("$!")
    done
    for s in "${pids[@]}"; do
        wait "$s" || failed=$((failed + 1))
    done
    if [ "$failed" -ne 0 ]; then
        echo "  $failed of $sessions sessions failed:" >&2
        cat "$DIR/$phase"-*.err | grep -E '^(ERROR|WARNING):' | sort | uniq -c | sed 's/^/  /' >&2
    fi
    [ "$failed" -eq 0 ]
}

stop_standby() {
    if [ -f "$STANDBY_DATA/postmaster.pid" ]; then
        pg_as_postgres pg_ctl -D "$STANDBY_DATA" -m immediate -w stop >/dev/null 2>&1 || true
    fi
}

# On exit: stop both servers and wipe $DIR. If a step outside a check failed (set -e), say so
# and still end with the summary line.
cleanup() {
    local rc=$?
    stop_standby
    stop_cluster
    report_if_aborted "$rc"
}

setup() {
    # A standby left running by a run that was killed half-way lives inside $DIR, which
    # start_cluster is about to wipe: stop it first.
    stop_standby
    start_cluster "$DIR" 5540
    trap cleanup EXIT
    psql_in postgres <<'SQL'
CREATE EXTENSION sno;
CREATE TABLE ids (
    id      sno PRIMARY KEY, -- a repeated ID anywhere in this script fails its INSERT
    phase   text NOT NULL,
    session int NOT NULL,
    n       int NOT NULL
);
CREATE ROLE app LOGIN;
SQL
    DERIVED_PARTITION=$(sed -n \
        's/.*sno: sno.partition is not set; using partition \([0-9]*\) derived from the system identifier.*/\1/p' \
        "$LOG" | head -n 1)
}

# --- 1. concurrency ----------------------------------------------------------------------------
# 8 sessions hammer the one shared generator at once. Nothing has called sno_generate before,
# so the generated counter must account for exactly these IDs.
check_concurrency() {
    check "1: 8 concurrent sessions x 125,000 IDs insert without a duplicate" \
        concurrent_sessions concurrency 8 125000 1
    check "1: exactly 1,000,000 rows" \
        same "$(q "SELECT count(*) FROM ids WHERE phase = 'concurrency'")" 1000000
    check "1: each of the 8 sessions got 125,000 IDs" \
        same "$(q "SELECT count(*) || ':' || min(c) || '..' || max(c) FROM (SELECT count(*) AS c
                   FROM ids WHERE phase = 'concurrency' GROUP BY session) AS s")" "8:125000..125000"
    check "1: each session's IDs strictly increase in call order" \
        same "$(out_of_order concurrency)" 0
    check "1: sno_generator_stats().generated = 1000000" same "$(stat generated)" 1000000
    check "1: every ID has meta 1 and the derived partition" \
        same "$(q "SELECT count(*) FROM ids WHERE sno_meta(id) <> 1
                   OR sno_partition(id) <> ${DERIVED_PARTITION:--1}")" 0
    # Byte order = time order: sorting by ID never goes back in time, and the sno ordering is
    # the ordering of the 10 bytes.
    check "1: ordered by id, sno_time never decreases" \
        same "$(q "SELECT count(*) FROM (SELECT sno_time(id) AS t,
                   lag(sno_time(id)) OVER (ORDER BY id) AS prev FROM ids) AS s WHERE t < prev")" 0
    check "1: ordered by id, the bytes strictly increase" \
        same "$(q "SELECT count(*) FROM (SELECT id::bytea AS b,
                   lag(id::bytea) OVER (ORDER BY id) AS prev FROM ids) AS s WHERE b <= prev")" 0
    check "1: sno_time of the IDs is now" \
        same "$(q "SELECT min(sno_time(id)) > now() - interval '10 min'
                   AND max(sno_time(id)) <= clock_timestamp() FROM ids")" t
    # Within a run of sequences a session times the rest of the unit with the CPU's counter
    # instead of reading the clock (README, "Clock reads"). Each ID must still carry the
    # unit its call ran in: one that started no later than the call ended, and ended after the
    # call began.
    local timed_by_counter="timing runs of sequences with the CPU's time-stamp counter \([0-9.]+ GHz\)"
    local timed_by_clock="no usable time-stamp counter .*; every ID reads the clock"
    check "1: the log says how sessions time their runs of sequences ($(grep -oE \
        -- "sno: ($timed_by_counter|$timed_by_clock)" "$LOG" | head -n 1 | cut -c6-))" \
        grep -qE -- "LOG:  sno: ($timed_by_counter|$timed_by_clock)" "$LOG"
    check "1: 500,000 IDs in one session each carry the 4 ms unit of their call" \
        same "$(q "WITH calls AS MATERIALIZED (
                     SELECT g, clock_timestamp() AS began, sno_generate(1) AS id,
                            clock_timestamp() AS ended
                     FROM generate_series(1, 500000) AS g),
                   stored AS (INSERT INTO ids SELECT id, 'timing', 0, g FROM calls)
                   SELECT count(*) FROM calls
                   WHERE sno_time(id) > ended OR sno_time(id) + interval '4 ms' <= began")" 0
}

# Meta outside a byte, and IDs for a given time, which must not disturb the counters above.
check_meta_and_generate_at() {
    check "meta 256 -> 22003" same "$(error_of "SELECT sno_generate(256)" | head -n 1)" \
        "ERROR:  22003: sno meta 256 is out of range 0..255"
    check "meta -1 -> 22003" same "$(error_of "SELECT sno_generate(-1)" | cut -c1-15)" \
        "ERROR:  22003: "
    local generated_before
    generated_before=$(stat generated)
    set_setting sno.backfill_partition 4321
    check "sno_generate_at(9, t): that time, tick-tock 0, meta 9, the backfill partition" \
        same "$(q "SELECT sno_time(x) = '2020-01-01 00:00:00.004+00', sno_tick_tock(x), sno_meta(x),
                          sno_partition(x)
                   FROM (SELECT sno_generate_at(9, '2020-01-01 00:00:00.004+00') AS x) AS s")" \
        "t|0|9|4321"
    check "generated_at counts it, generated does not" \
        same "$(stat "generated_at || ',' || generated")" "1,$generated_before"
}

# --- 2. a small pool through a reload ----------------------------------------------------------
# 4 sequences per 4 ms unit cannot serve 8 busy sessions: callers must wait for the next unit
# instead of repeating or leaving the bounds, and the log must say the pool is overflowing.
check_small_pool() {
    set_setting sno.sequence_min 0 sno.sequence_max 3
    local started=$SECONDS
    check "2: pool 0..3: 8 concurrent sessions x 500 IDs insert without a duplicate" \
        concurrent_sessions overflow 8 500 2
    local elapsed=$((SECONDS - started))
    check "2: 4,000 rows" same "$(q "SELECT count(*) FROM ids WHERE phase = 'overflow'")" 4000
    check "2: each session's IDs strictly increase" same "$(out_of_order overflow)" 0
    check "2: every sequence is within 0..3" \
        same "$(q "SELECT min(sno_sequence(id)) || '..' || max(sno_sequence(id))
                   FROM ids WHERE phase = 'overflow'")" "0..3"
    check "2: stats show the bounds 0..3" same "$(stat "sequence_min || '..' || sequence_max")" "0..3"
    check "2: overflow_stalls > 0 (got $(stat overflow_stalls))" \
        test "$(stat overflow_stalls)" -gt 0
    local line="LOG:  sno: the sequence pool is overflowing: [0-9]+ calls waited for a new 4 ms unit \(partition $DERIVED_PARTITION, sequences 0\.\.3, 4 per unit\)"
    check "2: the server log has the overflow line" grep -qE -- "$line" "$LOG"
    local lines
    lines=$(grep -cE -- "$line" "$LOG" || true)
    check "2: at most one overflow line per second ($lines lines in ${elapsed}s)" \
        test "$lines" -le $((elapsed + 1))
}

# --- 3. bounds too small for a pool, on reload ---------------------------------------------------
# A reload must not break a running server: the bad bounds are refused with a WARNING in the
# session that meets them, and the old bounds (0..3) stay in force.
check_bad_bounds_on_reload() {
    set_setting sno.sequence_min 10 sno.sequence_max 12
    local warnings
    warnings=$(generate_into bad_bounds 1 50 3 2>&1 >/dev/null) || true
    check "3: pool 10..12: a new session's sno_generate warns once, with the numbers" \
        same "$warnings" "WARNING:  sno: ignoring new settings: sno.sequence_min = 10 and sno.sequence_max = 12 leave a pool of 3 sequences per 4 ms; at least 4 are needed; keeping partition $DERIVED_PARTITION and sequences 0..3"
    check "3: the IDs were still made, with the old bounds 0..3" \
        same "$(q "SELECT count(*) || ':' || min(sno_sequence(id)) || '..' || max(sno_sequence(id))
                   FROM ids WHERE phase = 'bad_bounds'")" "50:0..3"
    check "3: stats still show 0..3" same "$(stat "sequence_min || '..' || sequence_max")" "0..3"

    reset_setting sno.sequence_min sno.sequence_max
    check "3: after RESET + reload, IDs insert without a duplicate" generate_into defaults 1 100 3
    check "3: stats show the defaults 0..65535" \
        same "$(stat "sequence_min || '..' || sequence_max")" "0..65535"
}

# --- 4. the settings -----------------------------------------------------------------------------
# sno.partition decides uniqueness between servers, so it may change only through the
# configuration files and a reload, never per session, for superusers and others alike.
check_settings() {
    check "4: start-up log names the derived partition" test -n "$DERIVED_PARTITION"
    check "4: stats partition = the derived partition ($DERIVED_PARTITION)" \
        same "$(stat partition)" "$DERIVED_PARTITION"

    # A session that is already open applies the reload at its next sno_generate call.
    local out
    out=$(psql_in postgres <<'SQL'
INSERT INTO ids SELECT sno_generate(4), 'partition', 1, 1;
ALTER SYSTEM SET sno.partition = 1234;
SELECT pg_reload_conf() AS reloaded \gset
-- The reload reaches this backend as a signal, handled between statements.
SELECT pg_sleep(1) AS slept \gset
INSERT INTO ids SELECT sno_generate(4), 'partition', 1, 2;
SELECT string_agg(sno_partition(id)::text, ',' ORDER BY n) FROM ids WHERE phase = 'partition';
SQL
    ) || true
    check "4: an open session switches to sno.partition = 1234 after the reload" \
        same "$out" "$DERIVED_PARTITION,1234"
    reload_cluster # let new sessions see it for sure
    generate_into partition 2 10 4
    check "4: a new session's IDs have partition 1234" \
        same "$(q "SELECT string_agg(DISTINCT sno_partition(id)::text, ',')
                   FROM ids WHERE phase = 'partition' AND session = 2")" 1234
    check "4: stats partition = 1234" same "$(stat partition)" 1234
    check "4: SHOW sno.partition = 1234" same "$(q "SHOW sno.partition")" 1234

    local refused='ERROR:  55P02: parameter "sno.partition" cannot be changed now'
    check "4: SET sno.partition as superuser -> 55P02" \
        same "$(error_of "SET sno.partition = 5")" "$refused"
    check "4: SET sno.partition after SET ROLE app -> 55P02" \
        same "$(error_of "SET ROLE app; SET sno.partition = 5")" "$refused"
    check "4: SET sno.partition logged in as app -> 55P02" \
        same "$(error_of "SET sno.partition = 5" -U app)" "$refused"
    check "4: SET sno.sequence_max logged in as app -> 55P02" \
        same "$(error_of "SET sno.sequence_max = 5" -U app)" \
        'ERROR:  55P02: parameter "sno.sequence_max" cannot be changed now'
    check "4: SET sno.test_clock_offset_ms logged in as app -> 42501" \
        same "$(error_of "SET sno.test_clock_offset_ms = 5" -U app)" \
        'ERROR:  42501: permission denied to set parameter "sno.test_clock_offset_ms"'
    check "4: pg_settings lists the settings, with descriptions" \
        same "$(q "SELECT name || '|' || setting || '|' || context || '|' || (short_desc <> '')
                   FROM pg_settings WHERE name LIKE 'sno.%' ORDER BY name")" \
        "sno.backfill_partition|4321|sighup|true
sno.partition|1234|sighup|true
sno.sequence_max|65535|sighup|true
sno.sequence_min|0|sighup|true
sno.test_clock_offset_ms|0|superuser|true"
}

# --- 5. clock regression in one session ------------------------------------------------------
# The session's clock goes back 6 s: the generator starts the other timeline (tick-tock 1).
# Forward to -3 s: it continues there. Back to -4 s: that span was used by both timelines
# (tick 0 up to "now", tick 1 up to -3 s), so the call waits until the clock reaches tick 1's
# last unit, about 1 s. Back to 0: still tick 1, which now runs ahead of tick 0's old IDs.
check_clock_regression() {
    local out
    out=$(psql_in postgres <<'SQL'
SET sno.test_clock_offset_ms = 0;
INSERT INTO ids SELECT sno_generate(5), 'regression', 0, g FROM generate_series(1, 10) AS g;
SELECT 'start=' || tick_tock || ',' || clock_regressions FROM sno_generator_stats();

SET sno.test_clock_offset_ms = -6000;
INSERT INTO ids SELECT sno_generate(5), 'regression', 1, g FROM generate_series(1, 100) AS g;
SELECT 'back6=' || tick_tock || ',' || clock_regressions FROM sno_generator_stats();

SET sno.test_clock_offset_ms = -3000;
INSERT INTO ids SELECT sno_generate(5), 'regression', 2, g FROM generate_series(1, 100) AS g;
SELECT 'back3=' || tick_tock || ',' || clock_regressions FROM sno_generator_stats();

SET sno.test_clock_offset_ms = -4000;
SELECT clock_timestamp() AS before_wait \gset
INSERT INTO ids SELECT sno_generate(5), 'regression', 3, 1;
SELECT 'waited=' || round(extract(epoch FROM clock_timestamp() - :'before_wait')::numeric, 3);
SELECT 'back4=' || tick_tock || ',' || clock_regressions || ',' || regression_waits
FROM sno_generator_stats();

SET sno.test_clock_offset_ms = 0;
INSERT INTO ids SELECT sno_generate(5), 'regression', 4, g FROM generate_series(1, 10) AS g;
SELECT 'forward=' || tick_tock || ',' || clock_regressions FROM sno_generator_stats();
SQL
    ) || echo "  the regression session failed" >&2
    field() { sed -n "s/^$1=//p" <<<"$out"; }
    check "5: offset 0: tick_tock 0, no regressions yet" same "$(field start)" "0,0"
    check "5: offset -6000: tick_tock flips to 1, clock_regressions = 1" same "$(field back6)" "1,1"
    check "5: offset -6000: 100 IDs inserted, all tick 1" same "$(step_ticks 1):$(q \
        "SELECT count(*) FROM ids WHERE phase = 'regression' AND session = 1")" "1:100"
    check "5: offset -6000: the IDs are earlier than the offset-0 ones" \
        same "$(q "SELECT max(sno_time(id)) FILTER (WHERE session = 1)
                   < min(sno_time(id)) FILTER (WHERE session = 0) FROM ids
                   WHERE phase = 'regression'")" t
    check "5: offset -3000: continues in tick 1, no new regression" same "$(field back3)" "1,1"
    check "5: offset -3000: 100 IDs inserted, all tick 1" same "$(step_ticks 2):$(q \
        "SELECT count(*) FROM ids WHERE phase = 'regression' AND session = 2")" "1:100"
    local waited
    waited=$(field waited)
    check "5: offset -4000: the call waited ${waited:-?}s (> 0.3 s, < 3 s)" \
        test "$(q "SELECT coalesce(${waited:-NULL} > 0.3 AND ${waited:-NULL} < 3, false)")" = t
    check "5: offset -4000: regression_waits = 1, no new regression (tick,regressions,waits)" \
        same "$(field back4)" "1,1,1"
    check "5: offset -4000: its ID is unique, tick 1, after the -3000 IDs" \
        same "$(step_ticks 3):$(q "SELECT bool_and(a.id > b.id) FROM ids AS a, ids AS b
                   WHERE a.phase = 'regression' AND a.session = 3
                     AND b.phase = 'regression' AND b.session = 2")" "1:t"
    check "5: back at offset 0: tick stays 1" same "$(field forward)" "1,1"
    check "5: back at offset 0: 10 IDs inserted, tick 1" same "$(step_ticks 4)" 1
}

# --- 6. clean restart with the clock set back --------------------------------------------------
# At a clean shutdown the exact state is saved; a restart with the clock 20 s back must then
# start a new timeline (flip tick-tock) and issue IDs earlier than the newest one.
#
# The clock may only flip into a span the other timeline has not used: tick 0 was used up to the
# start of check 5. So first wait until that is more than 20 s (+2 s margin) ago; otherwise the
# restarted generator would rightly wait ~20 s in tick 1 instead. Then make fresh tick-1 IDs so
# that the newest ID is "now" and the restarted clock (now - 20 s) lands before it.
check_clean_restart() {
    local pause
    pause=$(q "SELECT greatest(0, ceil(extract(epoch FROM
                 (SELECT max(sno_time(id)) FROM ids WHERE sno_tick_tock(id) = 0)
                 + interval '22 s' - clock_timestamp())))")
    echo "  (waiting ${pause}s until tick 0's last ID is 22 s old)"
    sleep "$pause"
    generate_into before_clean_restart 1 100 6
    local tick_before newest before
    tick_before=$(stat tick_tock)
    newest=$(q "SELECT max(sno_time(id)) FROM ids")
    before=$(q "SELECT count(*) FROM ids")

    q "ALTER SYSTEM SET sno.test_clock_offset_ms = '-20000'"
    restart_cluster
    check "6: state file exists after the clean shutdown" test -f "$DIR/data/sno_generator.state"

    local started=$SECONDS
    check "6: after a clean restart with the clock 20 s back, 1,000 IDs insert without a duplicate" \
        generate_into after_clean_restart 1 1000 6
    echo "  (took $((SECONDS - started))s)"
    check "6: all $before earlier rows are still there" \
        same "$(q "SELECT count(*) FROM ids WHERE phase <> 'after_clean_restart'")" "$before"
    check "6: the new IDs are earlier than the newest earlier ID" \
        same "$(q "SELECT max(sno_time(id)) < '$newest' FROM ids WHERE phase = 'after_clean_restart'")" t
    check "6: tick-tock flipped again ($tick_before -> $((1 - tick_before)))" \
        same "$(ticks_of after_clean_restart)" "$((1 - tick_before))"
    check "6: stats: tick_tock $((1 - tick_before)), clock_regressions 2" \
        same "$(stat "tick_tock || ',' || clock_regressions")" "$((1 - tick_before)),2"
    check "6: the new IDs still increase" same "$(out_of_order after_clean_restart)" 0
}

# --- 7. crash restart with the clock set back ----------------------------------------------------
# After a crash nothing is saved: the look-ahead reservation already in the state file
# (about 10 s ahead of the clock) must cover every ID issued. kill -9 of one backend makes the
# postmaster re-create shared memory from that file; with the clock 2 s back the restarted
# generator is behind the reservation and must flip tick-tock.
check_crash_restart() {
    set_setting sno.test_clock_offset_ms 0
    generate_into before_crash 1 100 7
    sleep 4 # the next call finds less than half of the reservation left and extends it
    generate_into before_crash 2 100 7
    check "7: persisted_through is at least 4 s ahead of the last ID" \
        same "$(stat "persisted_through >= last_time + interval '4 s'")" t
    local tick_before regressions_before before
    tick_before=$(stat tick_tock)
    regressions_before=$(stat clock_regressions)
    before=$(q "SELECT count(*) FROM ids")

    set_setting sno.test_clock_offset_ms -2000
    crash_backend "$LOG"
    check "7: the log shows the backend killed by signal 9" log_has "terminated by signal 9: Killed"
    check "7: the log shows the crash restart" \
        log_has "all server processes terminated; reinitializing"

    check "7: after the crash restart with the clock 2 s back, 1,000 IDs insert without a duplicate" \
        generate_into after_crash 1 1000 7
    check "7: all $before earlier rows are still there" \
        same "$(q "SELECT count(*) FROM ids WHERE phase <> 'after_crash'")" "$before"
    check "7: tick-tock flipped ($tick_before -> $((1 - tick_before)))" \
        same "$(ticks_of after_crash)" "$((1 - tick_before))"
    check "7: clock_regressions went $regressions_before -> $((regressions_before + 1))" \
        same "$(stat clock_regressions)" "$((regressions_before + 1))"
    check "7: the new IDs still increase" same "$(out_of_order after_crash)" 0
}

# --- 8. hot standby ----------------------------------------------------------------------------
# A standby is a copy with the primary's partition; IDs it made would collide with the
# primary's, so it must refuse.
check_standby() {
    local port
    port=$(free_port 5560)
    pg_client pg_basebackup -D "$STANDBY_DATA" -R -X stream -c fast
    echo "port = $port" >>"$STANDBY_DATA/postgresql.conf"
    pg_as_postgres pg_ctl -D "$STANDBY_DATA" -l "$DIR/standby.log" -w start >/dev/null
    local deadline=$((SECONDS + 60)) recovering=
    until [ "$recovering" = t ] || [ "$SECONDS" -gt "$deadline" ]; do
        recovering=$(pg_as_postgres psql -X -A -t -h "$DIR" -p "$port" -U postgres -d postgres \
            -c "SELECT pg_is_in_recovery()" 2>/dev/null) || true
        [ "$recovering" = t ] || sleep 0.2
    done
    check "8: the standby is in recovery" same "$recovering" t
    check "8: sno_generate on the standby -> 25006" \
        same "$(pg_as_postgres psql -X -q -A -t -v VERBOSITY=verbose -h "$DIR" -p "$port" \
                -U postgres -d postgres -c "SELECT sno_generate()" 2>&1 >/dev/null \
                | grep '^ERROR:' || true)" \
        "ERROR:  25006: sno_generate cannot run on a standby server"
    pg_as_postgres pg_ctl -D "$STANDBY_DATA" -m fast -w stop >/dev/null
}

# --- 9. without shared_preload_libraries -----------------------------------------------------
# The type must keep working (existing data stays readable); only generation needs the shared
# memory, and it must say how to get it.
check_without_preload() {
    restart_cluster -o "-c shared_preload_libraries=''"
    check "9: the server runs without preloading" same "$(q "SHOW shared_preload_libraries")" ""
    check "9: sno_generate -> 55000 with the message and hint" \
        same "$(error_of "SELECT sno_generate()")" \
        "ERROR:  55000: sno_generate requires sno to be loaded via shared_preload_libraries
HINT:  Add shared_preload_libraries = 'sno' to postgresql.conf and restart the server."
    check "9: '$SAMPLE'::sno still works" same "$(q "SELECT '$SAMPLE'::sno::text")" "$SAMPLE"
    check "9: existing IDs are readable" \
        same "$(q "SELECT count(*) = count(DISTINCT id::text) FROM ids")" t
    pg_client createdb nopreload
    check "9: CREATE EXTENSION sno works without preloading" \
        psql_in nopreload -c "CREATE EXTENSION sno"
    check "9: ... and sno_generate there -> 55000" \
        same "$(error_of "SELECT sno_generate()" -d nopreload | head -n 1)" \
        "ERROR:  55000: sno_generate requires sno to be loaded via shared_preload_libraries"
}

# --- 10. bad bounds at start-up --------------------------------------------------------------
# At start-up there are no old bounds to keep: the server must refuse to start.
check_bad_bounds_at_start() {
    stop_server
    check "10: start with sno.sequence_min = 10, sno.sequence_max = 12 fails" \
        not start_server -o "-c sno.sequence_min=10 -c sno.sequence_max=12"
    check "10: the log says why (FATAL)" log_has \
        "FATAL:  sno.sequence_min = 10 and sno.sequence_max = 12 leave a pool of 3 sequences per 4 ms; at least 4 are needed"
    start_server
    check "10: after a normal start, 100 more IDs insert without a duplicate" \
        generate_into final 1 100 10
}

setup
check_concurrency
check_meta_and_generate_at
check_small_pool
check_bad_bounds_on_reload
check_settings
check_clock_regression
check_clean_restart
check_crash_restart
check_standby
check_without_preload
check_bad_bounds_at_start
finish
