#!/usr/bin/env bash
# Builds Citus into this checkout's installation of each major named that a released Citus runs
# on (13.2.2 on 15, the last line with 15; 14.0.1 on 16 to 18; none on 19), for the Citus tests
# (tests/t/03*_citus*.pl), with ../shared/tools/citus-build.sh: about 2 minutes a major, nothing
# where that version is installed (a 13.2.2 left on 16 or 17 is replaced).
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
    # citus-build.sh takes 13.2.2 on 16 and 17 unless CITUS_VERSION says 14.0.1 (on 15 it
    # takes 13.2.2, on 18 14.0.1, whatever CITUS_VERSION says).
    version=14.0.1
    ((major >= 16)) || version=13.2.2
    CITUS_VERSION=$version nice bash "$CITUS_BUILD" "$(scripts/pg_config.sh "$major")"
done
