#!/usr/bin/env bash
# Runs every test, on every PostgreSQL major sno supports (or the ones named):
#   - cargo fmt --check and cargo clippy -D warnings;
#   - the core alone (no PostgreSQL, no pgrx): unit, property, concurrency and doc tests;
#   - per major: a test build installed into this checkout's installation of that major
#     (scripts/pg_config.sh), then the SQL tests (pg_regress, tests/regress.sh) and the
#     whole-server tests (TAP on PostgreSQL::Test::Cluster, tests/tap.sh): failover, logical
#     replication, odd clocks, Citus on 15 and 18, fuzzing with sqlsmith, pg_upgrade from 15
#     and logical replication from a 15 publisher to the major, and on the newest named (19,
#     the release candidate: scripts/get-postgresql-19.sh) pg_upgrade from each other major
#     named and the ORMs; the majors between the oldest and the newest (16, 17, 18) run the TAP
#     tests through what a major changes, not those that repeat sno's own logic at length
#     (full_major, below);
#   - PostgreSQL 18 built with assertions (scripts/test-cassert.sh): the SQL tests, most TAP
#     tests and the fuzzing again, failing on any failed assertion in a server's log;
#   - sno's SQL edition (sql/edition/, docs/managed.md) on every major: byte for byte against
#     native sno (pg_regress), its three forms, pg_tle's too, and (on 15 and 19) its generator
#     across servers;
#   - the release packages: the tarballs of 15 and 19, installed into a fresh copy of that major
#     and SQL-tested; the Debian package for Debian's own 15, installed with apt-get, tested,
#     removed.
# Sets up whatever is missing first (scripts/setup.sh --tests; Citus in the background); a major
# that cannot be set up fails the run.
# Ends with each stage's time. The builds that only later stages need run in the background
# (below: "Speed"), so that the whole run stays well under 45 minutes on two cores.
#
# Usage: scripts/test.sh [MAJOR...]     (default: 15 16 17 18 19)
#
# Test builds (they have the sno.test_clock_offset_ms setting, which moves the generator's
# clock) go only into this checkout's own installations. The system's PostgreSQL 15 gets only
# the Debian package, for its test, and is left with the sno files it had before: the last
# check compares them with what they were when the run began.
set -euo pipefail
cd "$(dirname "$0")/.."
MAJORS=("$@")
((${#MAJORS[@]})) || MAJORS=(15 16 17 18 19)
OLDEST=15
# The newest major named (19 by default): clippy checks its code paths against its headers (the
# other majors' are checked by their release builds, scripts/package.sh, which fail on any
# warning), the ORM programs run on it, and it is pg_upgrade's new cluster from every other
# major named. Taken from the majors named, so that `scripts/test.sh 16 17 18` still upgrades
# into 18 and runs the ORMs there, and needs no installation of a major it was not given.
NEWEST=$(printf '%s\n' "${MAJORS[@]}" | sort -n | tail -n 1)
# The major built with assertions: scripts/build-postgresql.sh builds it from Debian's source
# package, and 19's (the release candidate's, in experimental) is not in the archive, only its
# binary packages. It stays 18 until Debian's archive has 19's source.
CASSERT_MAJOR=18 # scripts/test-cassert.sh's MAJOR
started=$SECONDS
# The TAP tests run again with assertions: each that drives a code path of its own through sno
# (generation, settings, clocks, restarts and crashes, WAL replay, pg_upgrade, backfills, the
# fuzzing). Left out, to keep the run short: those that repeat a path above while mostly
# waiting (013, 014, 015, 020, 021), replication between servers (022, 023, 040), the client
# programs (017, 060; the ORMs run only on the newest major anyway), dump and restore (010),
# and Citus (on 18 without assertions).
CASSERT_TAP_TESTS=(001_concurrency.pl 002_meta_and_generate_at.pl 003_sequence_pool.pl
    004_settings_reload.pl 005_clock_regression.pl 006_clean_restart.pl 007_crash_restart.pl
    008_standby.pl 009_no_preload.pl 011_extension_upgrade.pl 012_backfills.pl
    016_state_file.pl 018_pg_upgrade.pl 019_failover_crash.pl 024_partition_mistakes.pl
    025_standby_without_sno.pl 026_settings_never_stop.pl 027_replay_write_retried.pl
    028_replay_newer_record.pl 035_pg_upgrade_carry_inputs.pl 036_backfill_writes.pl
    041_synchronous_standby.pl 050_fuzz.pl)

# The TAP tests that take longest, started first: prove -j2 then never ends on one of them alone.
LONG_TAP_TESTS=(050_fuzz.pl 045_registry_adversarial.pl 013_stalls_within_lookahead.pl
    032_citus_partition_watch.pl 042_renewal_ahead.pl 001_concurrency.pl 030_citus.pl
    026_settings_never_stop.pl 036_backfill_writes.pl)
# The majors that run every test: the oldest (the old cluster of every pg_upgrade test and the
# publisher of replication across majors) and the newest named. The majors between them (16, 17
# and 18 by default) run every SQL test (pg_regress, the SQL edition's byte-for-byte comparison
# with native sno included), pg_upgrade into the newest, and the TAP tests through what a major
# changes under sno (start-up, crash recovery and WAL replay, standbys and promotion, logical
# replication, dump and restore, settings, the extension's upgrades, the clients' protocol, the
# SQL edition's three forms), but not the scenarios of the two lists below: those go through
# code and SQL that no major changes, and made most of a middle major's TAP time and CPU (16's
# and 17's TAP stages went from about 250 s to 80 s; the run was CPU-bound, the cores busy
# 5,290 of 5,918 s). 18 runs four of them with assertions (001, 026, 036, 050: CASSERT_TAP_TESTS)
# and Citus's (below). sno's code has no branch of its own for 16, 17 or 18 that 19 does not
# take too (its pgNN_or_later conditions). The release tarballs are built and tested for the
# oldest and the newest alone too.
full_major() { (($1 == OLDEST || $1 == NEWEST)); }
# Scenarios that mostly wait on clocks and timers through code no major changes (the look-ahead
# after a step of the clock, two steps back, a reload after one, failover to an old backup, the
# spacing of backfill writes, a reservation running low after a failed fsync, a writer held
# between composing and logging, the renewer ahead of a slow caller, the registry's epoch floors
# after its restarts, failover and restore), and the SQL edition's moves to native sno and its
# generator across servers (plain SQL that no major changes).
WAITING_TAP_TESTS=(013_stalls_within_lookahead.pl 014_two_steps_back_wait.pl
    015_reload_after_step_back.pl 021_failover_old_backup.pl 036_backfill_writes.pl
    037_failed_sync.pl 038_wal_order.pl 042_renewal_ahead.pl 045_registry_adversarial.pl
    046_edition_move.pl 047_edition_servers.pl)
# Scenarios that repeat sno's own logic at length, mostly on the CPU: many sessions generating
# at once (001), the fuzzing (050, sqlsmith's random SQL), settings that cannot work through a
# crash restart (026), the partition registry's claims and leases (043, 044) and the SQL
# edition beside it (049), a bigint key moved to sno (039).
AT_LENGTH_TAP_TESTS=(001_concurrency.pl 026_settings_never_stop.pl 039_migration.pl
    043_registry_claims.pl 044_registry_leases.pl 049_edition_registry.pl 050_fuzz.pl)
# Citus (030 to 033) runs where it is built (scripts/build-citus.sh, has_citus below): on 15 with
# Citus 13.2.2 and on 18 with 14.0.1, so that each of the two Citus releases the tests use runs
# on one major.
CITUS_TAP_TESTS=(030_citus.pl 031_citus_check_search_path.pl 032_citus_partition_watch.pl
    033_citus_partition_source.pl)

# Each stage's time and how busy the cores were meanwhile, printed at the end with the whole
# run's: where the minutes go, and whether the cores were busy (then only less work shortens the
# run) or idle (then running more at once does). The cores' busy seconds count every process
# (the servers a test starts, which leave its process tree, and the background steps too); a
# background step's own CPU seconds are its processes' (children_cpu), printed where it is
# awaited.
failed=()
stage_times=()
CLOCK_TICKS=$(getconf CLK_TCK)
# CPU seconds (user + system) of the processes this shell started and has waited for, into the
# variable named: from /proc, as the shell's `times` would print them, without a subshell (one
# would count its own children, none yet).
children_cpu() { # VARIABLE
    local stat fields
    read -r stat <"/proc/$BASHPID/stat"
    read -ra fields <<<"${stat##*) }" # from the state, field 3: cutime is 16, cstime 17
    printf -v "$1" '%d' $(((fields[13] + fields[14]) / CLOCK_TICKS))
}
# The seconds all cores together have been busy since the machine started, into the variable
# named (/proc/stat's first line: user, nice, system, then idle and iowait, then irq, softirq,
# steal).
cores_busy() { # VARIABLE
    local user nice system irq softirq steal
    read -r _ user nice system _ _ irq softirq steal _ </proc/stat
    printf -v "$1" '%d' $(((user + nice + system + irq + softirq + steal) / CLOCK_TICKS))
}
record_time() { # NAME START BUSY_AT_START
    local busy
    cores_busy busy
    stage_times+=("$(printf '%5d s %5d s busy  %s' $((SECONDS - $2)) $((busy - $3)) "$1")")
}
# A stage every later one needs: a failure ends the run here.
required() {
    local name=$1 start=$SECONDS busy
    shift
    cores_busy busy
    echo "==> $name"
    "$@"
    record_time "$name" "$start" "$busy"
}
# A stage that may fail alone: the run goes on and names it at the end.
run() {
    local name=$1 start=$SECONDS busy
    shift
    cores_busy busy
    echo "==> $name"
    "$@" || failed+=("$name")
    record_time "$name" "$start" "$busy"
}
busy_at_start=0
cores_busy busy_at_start

# Speed: the builds that no test needs until late (PostgreSQL 18 with assertions, sno against
# it, the release packages: about 12 minutes of two busy cores on a fresh machine) run in the
# background, in three chains, at the lowest CPU priority (nice 19): they use what the
# foreground leaves idle (setup's downloads, cargo's serial steps, the TAP tests' waits on
# timers) and yield at once to the tests' servers. Each step's output goes to a file of its
# own, printed whole, under the step's name, where the foreground waits for it (await): logs
# never interleave.
BACKGROUND=$(mktemp -d "${TMPDIR:-/tmp}/sno-test-background.XXXXXX")
background_pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
stop_background() {
    local pid
    for pid in "${background_pids[@]}"; do
        kill -- -"$pid" 2>/dev/null || true
    done
    rm -rf "$BACKGROUND"
}
trap stop_background EXIT
in_background() { # STEP COMMAND...: one step of the background chain
    local step=$1 start=$SECONDS status=0 cpu_start cpu
    shift
    children_cpu cpu_start
    nice -n 19 "$@" </dev/null >"$BACKGROUND/$step.log" 2>&1 || status=$?
    children_cpu cpu
    echo "$((SECONDS - start)) s, $((cpu - cpu_start)) s CPU" >"$BACKGROUND/$step.seconds"
    echo "$status" >"$BACKGROUND/$step.status"
    return "$status"
}
wait_for_file() { until [[ -f $1 ]]; do sleep 1; done; }
await() { # STEP NAME [DONE]: waits for a background step, prints its output, records its time
    local step=$1 name=$2 done=${3:-built} start=$SECONDS took busy
    cores_busy busy
    echo "==> $name ($done in the background)"
    wait_for_file "$BACKGROUND/$step.status"
    cat "$BACKGROUND/$step.log"
    took="$done in the background in $(cat "$BACKGROUND/$step.seconds")"
    echo "($took; waited for it $((SECONDS - start)) s)"
    record_time "$name: waited for it ($took)" "$start" "$busy"
    [[ $(cat "$BACKGROUND/$step.status") == 0 ]] || { failed+=("$name"); return 1; }
}
has_major() { [[ " ${MAJORS[*]} " == *" $1 "* ]]; }
# A released Citus runs on it (scripts/build-citus.sh), and its tests run there (above): the
# oldest major, and 18, the newest Citus runs on.
has_citus() { (($1 <= 18)) && { full_major "$1" || (($1 == CASSERT_MAJOR)); }; }
# PostgreSQL with assertions and sno against it, the first chain, started before setup: on a
# bare machine this build was what the run waited for last, and it needs only the Debian
# packages that scripts/setup.sh installs first, not the majors that setup then fetches (about
# 2 minutes, mostly downloads, which leave the cores idle: some 120 s of CPU for the build). So
# build-postgresql.sh waits for those packages alone (--wait-for-packages; the file tells it
# that setup has ended, should one of them never come).
cassert_builds() {
    # set -m: each chain is a process group of its own, which the EXIT trap stops whole.
    set -m
    (
        trap - EXIT
        set +e
        # PostgreSQL's build needs no cargo: it starts at once, beside setup and the foreground.
        in_background cassert-postgresql scripts/build-postgresql.sh "$CASSERT_MAJOR" --cassert \
            --wait-for-packages "$BACKGROUND/setup.done"
        # sno against it starts from the test builds' target/debug (test-cassert.sh copies it),
        # so it waits until the foreground has made those.
        wait_for_file "$BACKGROUND/test-builds.done"
        in_background cassert-sno scripts/test-cassert.sh --build-only
    ) &
    background_pids+=($!)
    set +m
}
background_builds() {
    set -m # each chain a process group of its own, as above
    # Two more chains, after setup, so that both cores work while the foreground waits (a
    # release build links with one: codegen-units = 1 and fat LTO). The client and ORM test
    # programs, which the first TAP stage and the newest major's need: built once, here, rather
    # than in the foreground there (tests/tap.sh copies them).
    (
        trap - EXIT
        set +e
        in_background clients tests/build_clients.sh "$BACKGROUND/clients"
        in_background orms tests/build_orms.sh "$BACKGROUND/orms"
    ) &
    background_pids+=($!)
    # Citus for the TAP tests of 15 and 18 (scripts/build-citus.sh), which the foreground awaits
    # before them, then the release packages. Release builds go to target/release, apart from
    # the foreground's target/debug. The Debian package is built right after the 15 tarball,
    # whose library it takes: built after another major's, that library would be built again
    # (sno.so's name in target/ does not change with the major, so cargo overwrites it).
    (
        trap - EXIT
        set +e
        for major in "${MAJORS[@]}"; do
            ! has_citus "$major" || in_background "citus-$major" scripts/build-citus.sh "$major"
        done
        for major in "${MAJORS[@]}"; do
            full_major "$major" || continue
            in_background "tarball-$major" scripts/package.sh tarball "$major"
            ((major != 15)) || in_background deb scripts/package.sh deb
        done
    ) &
    background_pids+=($!)
    set +m
}

! has_major "$CASSERT_MAJOR" || cassert_builds
# The oldest major is the old cluster of every pg_upgrade test and the publisher of the
# cross-major replication test, so it is set up even when not named.
required "setup (scripts/setup.sh --tests --without-citus; Citus is built in the background)" \
    scripts/setup.sh --tests --without-citus $(printf '%s\n' "$OLDEST" "${MAJORS[@]}" | sort -un)
touch "$BACKGROUND/setup.done"

SYSTEM_PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
system_sno_files() {
    find "$("$SYSTEM_PG_CONFIG" --pkglibdir)" "$("$SYSTEM_PG_CONFIG" --sharedir)/extension" \
        -maxdepth 1 \( -name sno.so -o -name sno.control -o -name 'sno--*.sql' \) -print0 |
        sort -z | xargs -0r sha256sum
}
SYSTEM_SNO_BEFORE=$(system_sno_files)

background_builds

lint() {
    scripts/cargo.sh fmt --check
    scripts/cargo.sh fmt --check --manifest-path tests/clients/rust/Cargo.toml
    scripts/cargo.sh fmt --check --manifest-path benches/Cargo.toml
    PGRX_PG_CONFIG_PATH=$(scripts/pg_config.sh "$NEWEST") scripts/cargo.sh clippy --quiet \
        --no-default-features --features "pg$NEWEST,test-clock" --all-targets -- -D warnings
    scripts/cargo.sh clippy --quiet --no-default-features \
        --features serde,diesel,postgres-types,sqlx --all-targets -- -D warnings
    scripts/cargo.sh clippy --quiet --manifest-path benches/Cargo.toml --all-targets -- -D warnings
}
required "cargo fmt --check and cargo clippy -D warnings" lint

run "the core: unit, property, concurrency and doc tests" \
    scripts/cargo.sh test --quiet --no-default-features --features serde,diesel

prefix_of() { dirname "$(dirname "$(scripts/pg_config.sh "$1")")"; }

for major in $(printf '%s\n' "$OLDEST" "${MAJORS[@]}" | sort -un); do
    required "installing a test build into PostgreSQL $major ($(prefix_of "$major"))" \
        scripts/install.sh "$major" --test
done
touch "$BACKGROUND/test-builds.done"
# pg_tle (Apache-2.0, from ../shared/vendor) for the SQL edition's pg_tle form (TAP 048): a few
# seconds a major; without it 048 skips that form.
run "pg_tle for the SQL edition's tests (scripts/build-pg_tle.sh)" \
    scripts/build-pg_tle.sh "${MAJORS[@]}"

# Speed: prove runs two TAP tests at a time (unless PROVE_FLAGS says otherwise). Most of a
# test's time is spent waiting (on clocks, timeouts, replication), and each runs on nodes,
# ports and directories of its own; on two cores this takes the TAP stages from about 4
# minutes a major to about 2.
export PROVE_FLAGS=${PROVE_FLAGS--j2}
clients_built=
for major in "${MAJORS[@]}"; do
    export PG_CONFIG
    PG_CONFIG=$(scripts/pg_config.sh "$major")
    run "PostgreSQL $major: SQL tests (pg_regress)" tests/regress.sh
    run "PostgreSQL $major: the SQL edition against native sno (pg_regress)" \
        tests/regress.sh edition_conformance edition_generator
    tap_tests=()
    for test in "${LONG_TAP_TESTS[@]/#/tests/t/}" tests/t/*.pl; do
        name=$(basename "$test")
        [[ " ${tap_tests[*]} " != *" tests/t/$name "* ]] || continue
        # The ORM programs (060) run once, on the newest major: what they test is the libraries'.
        [[ $name != *_orms.pl ]] || ((major == NEWEST)) || continue
        if [[ " ${WAITING_TAP_TESTS[*]} ${AT_LENGTH_TAP_TESTS[*]} " == *" $name "* ]] &&
            ! full_major "$major"; then
            continue
        fi
        [[ " ${CITUS_TAP_TESTS[*]} " != *" $name "* ]] || has_citus "$major" || continue
        tap_tests+=("tests/t/$name")
    done
    ! has_citus "$major" || await "citus-$major" "Citus for PostgreSQL $major" || true
    programs=()
    if [[ -z $clients_built ]]; then
        clients_built=no
        ! await clients "the client test programs" || clients_built=yes
    fi
    [[ $clients_built == no ]] || programs+=(SNO_CLIENTS_BUILT="$BACKGROUND/clients")
    if [[ " ${tap_tests[*]} " == *_orms.pl* ]] && await orms "the ORM test programs"; then
        programs+=(SNO_ORMS_BUILT="$BACKGROUND/orms")
    fi
    run "PostgreSQL $major: whole-server tests (TAP)" \
        env SNO_UPGRADE_FROM="$(prefix_of "$OLDEST")" SNO_PUBLISHER_INSTALL="$(prefix_of "$OLDEST")" \
        "${programs[@]}" tests/tap.sh "${tap_tests[@]}"
    if ((major == NEWEST)); then
        for old in "${MAJORS[@]}"; do
            ((old != OLDEST && old != NEWEST)) || continue
            run "PostgreSQL $major: pg_upgrade from $old (TAP)" \
                env SNO_UPGRADE_FROM="$(prefix_of "$old")" tests/tap.sh t/018_pg_upgrade.pl
        done
    fi
done
unset PG_CONFIG

if has_major "$CASSERT_MAJOR"; then
    # test-cassert.sh finds PostgreSQL and sno built and installed by then, and builds nothing.
    await cassert-postgresql "PostgreSQL $CASSERT_MAJOR with assertions: the build" || true
    await cassert-sno "PostgreSQL $CASSERT_MAJOR with assertions: sno built against it" || true
    run "PostgreSQL $CASSERT_MAJOR with assertions: SQL, TAP and fuzzing" \
        env SNO_UPGRADE_FROM="$(prefix_of "$OLDEST")" SNO_PUBLISHER_INSTALL="$(prefix_of "$OLDEST")" \
        scripts/test-cassert.sh "${CASSERT_TAP_TESTS[@]/#/t/}"
fi

# The packages' tests, two at a time, as background steps in two lanes: each is one server and
# one client at a time, and by now nothing else is left to use the other core.
packages=() # the steps that built one: tarball-MAJOR, deb
for major in "${MAJORS[@]}"; do
    full_major "$major" || continue
    if await "tarball-$major" "the release tarball for PostgreSQL $major"; then
        packages+=("tarball-$major")
    fi
done
if has_major 15 && await deb "the Debian package for PostgreSQL 15"; then
    packages+=(deb)
fi
package_test_name() { # STEP
    case $1 in
    tarball-*) echo "the release tarball for PostgreSQL ${1#tarball-}: installed and tested" ;;
    deb) echo "the Debian package for PostgreSQL 15: installed, tested, removed" ;;
    esac
}
package_test() { # STEP: tests what the background step STEP built, as the step test-STEP
    local package
    package=$(tail -n 1 "$BACKGROUND/$1.log")
    case $1 in
    tarball-*) in_background "test-$1" tests/package_tarball.sh "$package" ;;
    deb)
        in_background test-deb \
            env SNO_TAP_MODULES="$("$(scripts/pg_config.sh 15)" --pkglibdir)/pgxs/src/test/perl" \
            PG_CONFIG="$SYSTEM_PG_CONFIG" tests/package_deb.sh "$package" ;;
    esac
}
set -m # each lane a process group of its own, which the EXIT trap stops whole
for lane in 0 1; do
    (
        trap - EXIT
        set +e
        for ((i = lane; i < ${#packages[@]}; i += 2)); do package_test "${packages[i]}"; done
    ) &
    background_pids+=($!)
done
set +m
for step in "${packages[@]}"; do
    await "test-$step" "$(package_test_name "$step")" ran || true
done
wait "${background_pids[@]}" || true
background_pids=()

echo "==> the system's PostgreSQL 15 ($SYSTEM_PG_CONFIG): its sno files as before the run"
if [[ $(system_sno_files) != "$SYSTEM_SNO_BEFORE" ]]; then
    echo "before:"; echo "${SYSTEM_SNO_BEFORE:-(none)}"
    echo "after:"; system_sno_files
    failed+=("the system's PostgreSQL 15 left as it was")
else
    echo "unchanged: ${SYSTEM_SNO_BEFORE:-no sno files, none now}"
fi

echo "==> time by stage"
printf '%s\n' "${stage_times[@]}"
busy=0
cores_busy busy
echo "==> $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s in all; the machine's" \
    "$(nproc) cores were busy $((busy - busy_at_start)) s of $(($(nproc) * (SECONDS - started))) s"
if ((${#failed[@]})); then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all tests passed on PostgreSQL ${MAJORS[*]}"
