#!/usr/bin/env bash
# Builds sno and installs it into one PostgreSQL major's directories:
#
#     scripts/install.sh MAJOR           # a release build
#     scripts/install.sh MAJOR --test    # a test build (has sno.test_clock_offset_ms; tests only)
#
# The library file is removed first, so the new one gets a new inode: a server running with the
# old one loaded (the demo, say) keeps its mapping instead of crashing on the overwritten file.
# Run as root, after scripts/setup.sh MAJOR.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: scripts/install.sh MAJOR [--test]}
pg_config=$(scripts/pg_config.sh "$major")
case ${2:-} in
--test) build=(--features "pg$major,test-clock") ;;
"") build=(--release --features "pg$major") ;;
*)
    echo "usage: scripts/install.sh MAJOR [--test]" >&2
    exit 2
    ;;
esac
rm -f "$("$pg_config" --pkglibdir)/sno.so"
cargo pgrx install --no-default-features "${build[@]}" --pg-config "$pg_config" >/dev/null
