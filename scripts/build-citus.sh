#!/usr/bin/env bash
# Builds Citus into this checkout's installation of each major named that a released Citus runs
# on (13.2.2 on 15 to 17, 14.0.1 on 18; none on 19), for the Citus tests (tests/t/03*_citus*.pl),
# with ../shared/tools/citus-build.sh: about 2 minutes a major, nothing where it is installed.
# AGPL: built only for the tests, never shipped. scripts/setup.sh --tests runs it; scripts/test.sh
# runs it in the background instead. Run as root.
#
# Usage: scripts/build-citus.sh MAJOR...
set -euo pipefail
cd "$(dirname "$0")/.."
CITUS_BUILD=../shared/tools/citus-build.sh
for major in "$@"; do
    ((major <= 18)) || continue
    if [[ ! -f $CITUS_BUILD ]]; then
        echo "build-citus.sh: no $CITUS_BUILD beside the checkout: cannot build Citus" >&2
        exit 1
    fi
    nice bash "$CITUS_BUILD" "$(scripts/pg_config.sh "$major")"
done
