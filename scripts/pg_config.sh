#!/usr/bin/env bash
# Prints the path of pg_config for a PostgreSQL major that sno is built and tested against:
#
#     scripts/pg_config.sh 18    # /var/cache/sno/postgresql/main-1a2b3c4d/18/bin/pg_config
#
# Every major is a relocatable build of the PostgreSQL project's release that
# scripts/get-postgresql.sh unpacks (15 to 18), or Debian's packages of 19's release candidate
# in a Debian unstable root (scripts/get-postgresql-19.sh: bin/ is a link into the root, and
# pg_config prints paths inside it), one installation per major and per checkout: the tests
# and the demo install sno into it and into nothing else, so that they never touch a PostgreSQL
# the machine runs (Debian's 15 included) and two checkouts on one machine never share one.
# The installations lie outside the checkout because the servers run as `postgres`, which
# cannot enter a checkout in root's home. SNO_POSTGRESQL_DIR moves them (default
# /var/cache/sno/postgresql). This script is the one place that knows where they are; the path
# is printed whether or not the major is installed yet.
set -euo pipefail

SUPPORTED_MAJORS=(15 16 17 18 19)
major=${1:-}
if [[ ! " ${SUPPORTED_MAJORS[*]} " == *" $major "* ]]; then
    echo "usage: $0 MAJOR, where MAJOR is one of ${SUPPORTED_MAJORS[*]} (got '$major')" >&2
    exit 2
fi
checkout=$(cd "$(dirname "$0")/.." && pwd -P)
key=$(basename "$checkout")-$(printf '%s' "$checkout" | sha256sum | cut -c1-8)
echo "${SNO_POSTGRESQL_DIR:-/var/cache/sno/postgresql}/$key/$major/bin/pg_config"
