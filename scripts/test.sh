#!/usr/bin/env bash
# Runs every test, on every PostgreSQL major sno supports (or the ones named):
#   - cargo fmt --check and cargo clippy -D warnings;
#   - the core alone (no PostgreSQL, no pgrx): unit, property, concurrency and doc tests;
#   - per major: a test build installed into this checkout's installation of that major
#     (scripts/pg_config.sh), then the SQL tests (pg_regress, tests/regress.sh) and the
#     whole-server tests (TAP on PostgreSQL::Test::Cluster, tests/tap.sh): failover, logical
#     replication, odd clocks, Citus on 15 to 17, fuzzing with sqlsmith, pg_upgrade from 15
#     and logical replication from a 15 publisher to the major, and on 18 pg_upgrade from 16
#     and 17 and the ORMs;
#   - PostgreSQL 18 built with assertions (scripts/test-cassert.sh): the SQL tests, most TAP
#     tests and the fuzzing again, failing on any failed assertion in a server's log;
#   - the release packages: a tarball per major, installed into a fresh copy of that major and
#     SQL-tested; the Debian package for Debian's own 15, installed with apt-get, tested, removed.
# Sets up whatever is missing first (scripts/setup.sh --tests); a major that cannot be set up
# fails the run.
#
# Usage: scripts/test.sh [MAJOR...]     (default: 15 16 17 18)
#
# Test builds (they have the sno.test_clock_offset_ms setting, which moves the generator's
# clock) go only into this checkout's own installations. The system's PostgreSQL 15 gets only
# the Debian package, for its test, and is left with the sno files it had before: the last
# check compares them with what they were when the run began.
set -euo pipefail
cd "$(dirname "$0")/.."
MAJORS=("$@")
((${#MAJORS[@]})) || MAJORS=(15 16 17 18)
OLDEST=15
NEWEST=18
started=$SECONDS
# The TAP tests run again with assertions: each that drives a code path of its own through sno
# (generation, settings, clocks, restarts and crashes, WAL replay, pg_upgrade, backfills, the
# fuzzing). Left out, to keep the run short: those that repeat a path above while mostly
# waiting (013, 014, 015, 020, 021), replication between servers (022, 023, 040), the client
# programs (017, 060), dump and restore (010), and Citus (none for 18).
CASSERT_TAP_TESTS=(001_concurrency.pl 002_meta_and_generate_at.pl 003_sequence_pool.pl
    004_settings_reload.pl 005_clock_regression.pl 006_clean_restart.pl 007_crash_restart.pl
    008_standby.pl 009_no_preload.pl 011_extension_upgrade.pl 012_backfills.pl
    016_state_file.pl 018_pg_upgrade.pl 019_failover_crash.pl 024_partition_mistakes.pl
    025_standby_without_sno.pl 026_settings_never_stop.pl 027_replay_write_retried.pl
    028_replay_newer_record.pl 035_pg_upgrade_carry_inputs.pl 036_backfill_writes.pl 050_fuzz.pl)

# The oldest major is the old cluster of every pg_upgrade test and the publisher of the
# cross-major replication test, so it is set up even when not named.
scripts/setup.sh --tests $(printf '%s\n' "$OLDEST" "${MAJORS[@]}" | sort -un)

SYSTEM_PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
system_sno_files() {
    find "$("$SYSTEM_PG_CONFIG" --pkglibdir)" "$("$SYSTEM_PG_CONFIG" --sharedir)/extension" \
        -maxdepth 1 \( -name sno.so -o -name sno.control -o -name 'sno--*.sql' \) -print0 |
        sort -z | xargs -0r sha256sum
}
SYSTEM_SNO_BEFORE=$(system_sno_files)

echo "==> cargo fmt --check and cargo clippy -D warnings"
cargo fmt --check
cargo fmt --check --manifest-path tests/clients/rust/Cargo.toml
cargo fmt --check --manifest-path benches/Cargo.toml
PGRX_PG_CONFIG_PATH=$(scripts/pg_config.sh "$NEWEST") cargo clippy --quiet --no-default-features \
    --features "pg$NEWEST,test-clock" --all-targets -- -D warnings
cargo clippy --quiet --no-default-features --features serde,diesel,postgres-types,sqlx \
    --all-targets -- -D warnings
cargo clippy --quiet --manifest-path benches/Cargo.toml --all-targets -- -D warnings

failed=()
run() {
    local name=$1
    shift
    echo "==> $name"
    "$@" || failed+=("$name")
}

run "the core: unit, property, concurrency and doc tests" \
    cargo test --quiet --no-default-features --features serde,diesel

prefix_of() { dirname "$(dirname "$(scripts/pg_config.sh "$1")")"; }

for major in $(printf '%s\n' "$OLDEST" "${MAJORS[@]}" | sort -un); do
    echo "==> installing a test build into PostgreSQL $major ($(prefix_of "$major"))"
    scripts/install.sh "$major" --test
done

for major in "${MAJORS[@]}"; do
    export PG_CONFIG
    PG_CONFIG=$(scripts/pg_config.sh "$major")
    run "PostgreSQL $major: SQL tests (pg_regress)" tests/regress.sh
    # The ORM programs (060) run once, on the newest major: what they test is the libraries'.
    tap_tests=(tests/t/*.pl)
    ((major == NEWEST)) || mapfile -t tap_tests < <(printf '%s\n' "${tap_tests[@]}" | grep -v _orms)
    run "PostgreSQL $major: whole-server tests (TAP)" \
        env SNO_UPGRADE_FROM="$(prefix_of "$OLDEST")" SNO_PUBLISHER_INSTALL="$(prefix_of "$OLDEST")" \
        tests/tap.sh "${tap_tests[@]}"
    if ((major == NEWEST)); then
        for old in "${MAJORS[@]}"; do
            ((old != OLDEST && old != NEWEST)) || continue
            run "PostgreSQL $major: pg_upgrade from $old (TAP)" \
                env SNO_UPGRADE_FROM="$(prefix_of "$old")" tests/tap.sh t/018_pg_upgrade.pl
        done
    fi
done
unset PG_CONFIG

if [[ " ${MAJORS[*]} " == *" $NEWEST "* ]]; then
    run "PostgreSQL $NEWEST with assertions: SQL, TAP and fuzzing" \
        env SNO_UPGRADE_FROM="$(prefix_of "$OLDEST")" SNO_PUBLISHER_INSTALL="$(prefix_of "$OLDEST")" \
        scripts/test-cassert.sh "${CASSERT_TAP_TESTS[@]/#/t/}"
fi

echo "==> the release packages"
for major in "${MAJORS[@]}"; do
    tarball=$(scripts/package.sh tarball "$major" | tail -n 1)
    run "the release tarball for PostgreSQL $major" tests/package_tarball.sh "$tarball"
done
if [[ " ${MAJORS[*]} " == *" 15 "* ]]; then
    deb=$(scripts/package.sh deb | tail -n 1)
    run "the Debian package for PostgreSQL 15" \
        env SNO_TAP_MODULES="$("$(scripts/pg_config.sh 15)" --pkglibdir)/pgxs/src/test/perl" \
        PG_CONFIG="$SYSTEM_PG_CONFIG" tests/package_deb.sh "$deb"
fi

echo "==> the system's PostgreSQL 15 ($SYSTEM_PG_CONFIG): its sno files as before the run"
if [[ $(system_sno_files) != "$SYSTEM_SNO_BEFORE" ]]; then
    echo "before:"; echo "${SYSTEM_SNO_BEFORE:-(none)}"
    echo "after:"; system_sno_files
    failed+=("the system's PostgreSQL 15 left as it was")
else
    echo "unchanged: ${SYSTEM_SNO_BEFORE:-no sno files, none now}"
fi

echo "==> $(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s"
if ((${#failed[@]})); then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all tests passed on PostgreSQL ${MAJORS[*]}"
