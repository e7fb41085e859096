#!/usr/bin/env bash
# cargo, as every script of sno runs it:
#
#     scripts/cargo.sh SUBCOMMAND [ARGS...]      # e.g. scripts/cargo.sh build --release
#
# The one place that handles the Rust version. pgrx 0.19 (the pgrx of every major, 19 included)
# declares rust-version 1.96, as a policy of following the newest stable Rust (pgrx's PR #2296),
# not for a feature it uses: sno and every dependency it pins build on Rust 1.95, the version
# in sno's own Cargo.toml, which is what the machines here have. Cargo refuses to compile a
# package whose rust-version is newer than rustc, and in cargo 1.95 only a command-line flag,
# --ignore-rust-version, lifts that: no setting in .cargo/config.toml and no environment
# variable does ([resolver] incompatible-rust-versions and CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS
# only choose which versions Cargo.lock gets), and an [alias] cannot shadow `cargo build`. So
# the subcommands that compile get the flag here, once rustc is checked against sno's own
# rust-version, a check that the flag would otherwise skip too. With Rust 1.96 or later the flag
# changes nothing. It is not part of what cargo fingerprints: a build through this script and
# the same `cargo build --ignore-rust-version` by hand share their artifacts.
#
# Only builds with a pgNN feature compile pgrx (the core's tests, the benchmarks and the client
# programs do not), but every script goes through here, so that none needs to know which.
set -euo pipefail
subcommand=${1:?usage: scripts/cargo.sh SUBCOMMAND [ARGS...]}
shift
case $subcommand in
build | check | clippy | test | bench | run | doc | rustc | install)
    manifest=$(dirname "$0")/../Cargo.toml
    required=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$manifest" | head -n 1)
    rustc=$(${RUSTC:-rustc} --version | awk '{ print $2 }')
    if [[ $(printf '%s\n' "$required" "${rustc%%-*}" | sort -V | head -n 1) != "$required" ]]; then
        echo "scripts/cargo.sh: sno needs Rust $required or later; ${RUSTC:-rustc} is $rustc" >&2
        exit 1
    fi
    exec cargo "$subcommand" --ignore-rust-version "$@"
    ;;
*) exec cargo "$subcommand" "$@" ;;
esac
