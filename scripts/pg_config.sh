#!/usr/bin/env bash
# Prints the path of pg_config for a PostgreSQL major that sno is built and tested against:
#
#     scripts/pg_config.sh 18    # /var/cache/sno/postgresql-18/bin/pg_config
#
# 15 is Debian 12's own. Debian 12 packages no other major, so scripts/setup.sh builds 17 and 18
# from Debian's source packages into a cache directory that survives between runs; this script
# is the one place that knows where. The path is printed whether or not it is installed yet.
set -euo pipefail

CACHE_DIR=/var/cache/sno

case "${1:-}" in
15) echo /usr/lib/postgresql/15/bin/pg_config ;;
17 | 18) echo "$CACHE_DIR/postgresql-$1/bin/pg_config" ;;
*)
    echo "usage: $0 MAJOR, where MAJOR is 15, 17 or 18 (got '${1:-}')" >&2
    exit 2
    ;;
esac
