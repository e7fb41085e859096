#!/usr/bin/env bash
# Runs the SQL tests, the whole-server tests and the fuzzing against a PostgreSQL built with
# assertions (--enable-cassert), where PostgreSQL checks what sno does with memory, locks and
# interrupts: a failed check stops the backend with a TRAP line and a backtrace in the log.
#
#     scripts/test-cassert.sh [--prefix DIR] [--build-only] [t/NNN_name.pl ...]
#
# Steps, each skipped when its result is there already (--build-only: steps 1 to 3 only, which
# scripts/test.sh runs in the background while other tests run):
#   1. scripts/build-postgresql.sh 18 --cassert: PostgreSQL 18 from Debian's source package,
#      with assertions (about 4.5 minutes on two idle cores, once a machine), into
#      /var/cache/sno/postgresql-18-cassert, which nothing is installed into; then copied into
#      this checkout's own installation beside its other majors (scripts/pg_config.sh's
#      directory, 18-cassert), so that two checkouts never test each other's builds, and copied
#      again when the cache was built again with other options. With --prefix DIR, built into
#      DIR directly and used there;
#   2. a test build of sno against that PostgreSQL's headers, in its own cargo target directory
#      (cassert-18 in cargo's, seeded from its debug/) so that it does not rebuild pgrx over the
#      plain 18's build;
#   3. that build installed into DIR (library, control file, SQL scripts);
#   4. tests/regress.sh (pg_regress), then tests/tap.sh with the TAP tests named, or every one
#      (tests that need what is not set skip themselves: pg_upgrade without SNO_UPGRADE_FROM,
#      Citus on 18, the package tests).
# Then it prints every assertion failure and crash in the servers' logs, with the backtrace
# PostgreSQL wrote after it. Exits non-zero if a step or a test failed. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."

MAJOR=18
pristine=/var/cache/sno/postgresql-$MAJOR-cassert
prefix=$(dirname "$(dirname "$(scripts/pg_config.sh "$MAJOR")")")-cassert
if [[ ${1:-} == --prefix ]]; then
    prefix=${2:?--prefix needs a directory}
    pristine=$prefix
    shift 2
fi
build_only=false
if [[ ${1:-} == --build-only ]]; then
    build_only=true
    shift
fi
pg_config=$prefix/bin/pg_config
# Cargo's target directory, wherever the user's CARGO_TARGET_DIR (or build.target-dir) puts it.
cargo_target=$(scripts/cargo.sh metadata --format-version 1 --no-deps |
    grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
target_dir=$cargo_target/cassert-$MAJOR

start=$SECONDS
scripts/build-postgresql.sh "$MAJOR" --cassert --prefix "$pristine"
# The copy is replaced when the cache's configure options are not the copy's: a copy from
# before the cache was built again (build-postgresql.sh builds one with other options again).
if [[ ! -x $pg_config ||
    $("$pg_config" --configure) != $("$pristine/bin/pg_config" --configure) ]]; then
    echo "==> copying it into this checkout's own installation, $prefix"
    rm -rf "$prefix.partial"
    cp -a "$pristine" "$prefix.partial"
    rm -rf "$prefix"
    mv "$prefix.partial" "$prefix"
fi
echo "==> a test build of sno against $("$pg_config" --version) with assertions"
# Seeded from the plain builds' directory, only pgrx's bindings and what depends on them are
# built again (about 2 minutes instead of every dependency).
if [[ ! -d $target_dir/debug && -d $cargo_target/debug ]]; then
    mkdir -p "$target_dir"
    cp -a "$cargo_target/debug" "$target_dir/"
fi
library=$(CARGO_TARGET_DIR=$target_dir \
    scripts/build.sh "$MAJOR" "$pg_config" dev "pg$MAJOR,test-clock")
pkglibdir=$("$pg_config" --pkglibdir)
extension_dir=$("$pg_config" --sharedir)/extension
rm -f "$pkglibdir/sno.so" # a new file, not one a running server has mapped
cp "$library" "$pkglibdir/sno.so"
# The control file and the SQL scripts, as every install writes them (assembled from sql/parts/).
scripts/extension-files.sh "$extension_dir"
echo "==> built and installed in $((SECONDS - start)) s"
! $build_only || exit 0

failed=()
logs=$(mktemp -d "${TMPDIR:-/tmp}/sno-cassert.XXXXXX")
chmod 755 "$logs"
echo "==> PostgreSQL $MAJOR with assertions: SQL tests (pg_regress)"
PG_CONFIG=$pg_config tests/regress.sh 2>&1 | tee "$logs/regress.out" || failed+=("SQL tests")
echo "==> PostgreSQL $MAJOR with assertions: whole-server tests (TAP)"
# The nodes' logs are kept, passed or failed, to be searched below: an assertion can fail where
# no test looks (a background process, a server's shutdown).
SNO_TAP_KEEP=1 PG_CONFIG=$pg_config tests/tap.sh "$@" 2>&1 | tee "$logs/tap.out" \
    || failed+=("whole-server tests")

# The servers' logs: the SQL tests' (tests/results/server.log, kept when they fail) and the TAP
# work directory's, which tests/tap.sh names.
server_logs=()
[[ -f tests/results/server.log ]] && server_logs+=(tests/results/server.log)
tap_dir=$(sed -n -e 's/^FAILED: logs .* in \(.*\)\/tmp_check\/log$/\1/p' -e 's/^kept: //p' "$logs/tap.out")
if [[ -n $tap_dir && -d $tap_dir ]]; then
    while IFS= read -r -d '' file; do
        server_logs+=("$file")
    done < <(find "$tap_dir" -name '*.log' -print0)
fi
# sno's frames in a backtrace name only an offset in sno.so (its Rust functions are not
# exported): the test build's debug information names the function and the line.
symbolize() {
    local line offset
    while IFS= read -r line; do
        offset=$(sed -n 's/.*sno\.so(+\(0x[0-9a-f]*\)).*/\1/p' <<<"$line")
        if [[ -n $offset ]]; then
            line="$line  $(addr2line -f -C -i -p -e "$library" "$offset" \
                | tr '\n' ' ' | sed "s|$PWD/||g")"
        fi
        echo "$line"
    done
}
# A failed assertion (TRAP, then the backtrace: lines ending in "[0x...]"), or a process ended by
# a signal other than the SIGKILL that the crash tests send, with the statement it ran.
CRASH='TRAP:|was terminated by exception|terminated by signal ([0-8]|[1-9][0-9]):'
crashed=false
for file in "${server_logs[@]}"; do
    if grep -qE "$CRASH" "$file"; then
        crashed=true
        echo "==> assertion failures and crashes in $file"
        grep -E -A 60 "$CRASH" "$file" \
            | grep -E "$CRASH|Failed process|\[0x[0-9a-f]+\]\$" | head -n 120 | symbolize || true
    fi
done
if $crashed; then
    failed+=("assertions or crashes in the servers' logs (above)")
elif ((${#failed[@]} == 0)) && [[ -n $tap_dir ]]; then
    rm -rf "$tap_dir"
fi
rm -rf "$logs"
echo "==> PostgreSQL $MAJOR with assertions: done in $((SECONDS - start)) s"
if ((${#failed[@]})); then
    printf 'FAILED with assertions: %s\n' "${failed[@]}"
    exit 1
fi
echo "all tests passed on PostgreSQL $MAJOR with assertions"
