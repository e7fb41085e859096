#!/usr/bin/env bash
# Builds the extension library for one PostgreSQL major and prints the built file's path:
#
#     scripts/build.sh [--deny-warnings] MAJOR PG_CONFIG [PROFILE [FEATURES]]
#
# PROFILE is release (the default) or dev. --deny-warnings fails the build when the compiler or
# cargo warns (scripts/package.sh: every release build of every major; see below).
#
# Without cargo-pgrx: pgrx reads PGRX_PG_CONFIG_PATH for the headers to bind. Builds for
# different majors share cargo's target directory (cargo keeps one copy of each dependency per
# feature set) and write the same PROFILE/libsno.so in it, so copy it before building another
# major. The path printed is the one cargo reports, so the user's CARGO_TARGET_DIR (or
# build.target-dir) is where the library is looked for.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/build.sh [--deny-warnings] MAJOR PG_CONFIG [PROFILE [FEATURES]]"
deny_warnings=false
if [[ ${1:-} == --deny-warnings ]]; then
    deny_warnings=true
    shift
fi
major=${1:?$usage}
pg_config=${2:?$usage}
profile=${3:-release}
features=${4:-pg$major}

# Cargo's JSON messages (stdout) name the files it built, wherever its target directory is; its
# diagnostics stay human-readable on stderr (json-render-diagnostics), and go through a file so
# that they can be searched for warnings. In colour when stderr is a terminal, as cargo would.
diagnostics=$(mktemp "${TMPDIR:-/tmp}/sno-build.XXXXXX")
trap 'rm -f "$diagnostics"' EXIT
color=${CARGO_TERM_COLOR:-auto}
[[ $color != auto ]] || { [[ -t 2 ]] && color=always || color=never; }
status=0
messages=$(PGRX_PG_CONFIG_PATH=$pg_config scripts/cargo.sh build --quiet --profile "$profile" \
    --no-default-features --features "$features" --color "$color" \
    --message-format json-render-diagnostics 2>"$diagnostics") || status=$?
cat "$diagnostics" >&2
((status == 0)) || exit "$status"

# Warnings fail the build here, by reading what cargo printed, rather than by RUSTFLAGS=-Dwarnings:
# RUSTFLAGS is part of every crate's fingerprint, so -Dwarnings would build pgrx and every other
# dependency again in a target directory of its own, or rebuild them each time a build with other
# flags came between. Reading the output changes nothing that cargo builds, and it sees the
# warnings of a build that cargo found up to date too: cargo replays a crate's cached warnings
# when it does not compile it again. (Cargo 1.97's build.warnings = "deny", CARGO_BUILD_WARNINGS,
# does this inside cargo, for the local crate's lints only; the machines here have 1.95.)
if $deny_warnings && sed 's/\x1b\[[0-9;]*m//g' "$diagnostics" | grep -q '^warning'; then
    echo "scripts/build.sh: the build for PostgreSQL $major warned (above); --deny-warnings fails it" >&2
    exit 1
fi

library=$(grep '"reason":"compiler-artifact"' <<<"$messages" |
    grep -o '"[^"]*/libsno\.so"' | tr -d '"' | tail -n 1)
if [[ -z $library || ! -f $library ]]; then
    echo "scripts/build.sh: cargo reported no libsno.so" >&2
    exit 1
fi
echo "$library"
