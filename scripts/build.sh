#!/usr/bin/env bash
# Builds the extension library for one PostgreSQL major and prints the built file's path:
#
#     scripts/build.sh MAJOR PG_CONFIG [PROFILE [FEATURES]]   # PROFILE release (default) or dev
#
# Without cargo-pgrx: pgrx reads PGRX_PG_CONFIG_PATH for the headers to bind. Builds for
# different majors share target/ (cargo keeps one copy of each dependency per feature set) and
# write the same target/PROFILE/libsno.so, so copy it before building another major.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: scripts/build.sh MAJOR PG_CONFIG [PROFILE [FEATURES]]}
pg_config=${2:?usage: scripts/build.sh MAJOR PG_CONFIG [PROFILE [FEATURES]]}
profile=${3:-release}
features=${4:-pg$major}
PGRX_PG_CONFIG_PATH=$pg_config scripts/cargo.sh build --quiet --profile "$profile" \
    --no-default-features --features "$features" >&2
directory=$profile
[[ $profile != dev ]] || directory=debug
echo "$PWD/target/$directory/libsno.so"
