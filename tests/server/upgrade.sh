#!/usr/bin/env bash
# Upgrade path of the sno extension, against a throwaway PostgreSQL 15 cluster.
#
# Why: users who installed an earlier release get the new one through ALTER EXTENSION sno
# UPDATE, which only works if the sno--A--B.sql scripts chain every released version to the
# current default_version. For each earlier version that has an install script, this test
# installs it, updates, and checks that the result is the default version and still works.
#
# With a single release there is nothing to upgrade from; the test then still checks that
# CREATE EXTENSION and the no-op ALTER EXTENSION ... UPDATE succeed, so it is ready to catch
# a broken chain the day a second version ships.
#
# Needs: root (runs the server as the postgres OS user), sno installed into PostgreSQL 15.
# Usage: tests/server/upgrade.sh   (prints PASS/FAIL per check, then "N passed, M failed")
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

DIR=/tmp/sno-upgrade-test
EXT_DIR=$("$PG_BIN/pg_config" --sharedir)/extension
SAMPLE=brpk4q72xwf2m63l

default_version() {
    sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\(.*\)'.*/\1/p" \
        "$EXT_DIR/sno.control"
}

# Versions with an install script, sno--V.sql (a name with no second "--").
install_versions() {
    local f v
    for f in "$EXT_DIR"/sno--*.sql; do
        [ -e "$f" ] || continue
        v=${f##*/sno--}
        v=${v%.sql}
        case $v in *--*) ;; *) echo "$v" ;; esac
    done
}

# Upgrade scripts, sno--A--B.sql, printed as "A B".
upgrade_steps() {
    local f v
    for f in "$EXT_DIR"/sno--*--*.sql; do
        [ -e "$f" ] || continue
        v=${f##*/sno--}
        v=${v%.sql}
        echo "${v%%--*} ${v#*--}"
    done
}

# Lines joined with ", ", or "(none)".
one_line() {
    local joined
    joined=$(paste -sd, - | sed 's/,/, /g')
    echo "${joined:-(none)}"
}

installed_version() {
    psql_in "$1" -c "SELECT extversion FROM pg_extension WHERE extname = 'sno'"
}

# The extension still parses and prints an ID after whatever was done to it.
sample_works() {
    same "$(psql_in "$1" -c "SELECT '$SAMPLE'::sno::text")" "$SAMPLE"
}

# Does PostgreSQL see a chain of update scripts from $2 to $3?
has_update_path() {
    local path
    path=$(psql_in "$1" -v from="$2" -v to="$3" <<'SQL'
SELECT path FROM pg_extension_update_paths('sno') WHERE source = :'from' AND target = :'to';
SQL
    )
    [ -n "$path" ]
}

create_at_version() {
    psql_in "$1" -v ver="$2" <<'SQL'
CREATE EXTENSION sno VERSION :'ver';
SQL
}

update_extension() {
    psql_in "$1" -c "SET client_min_messages = warning" -c "ALTER EXTENSION sno UPDATE"
}

# One database per starting version, so each upgrade starts from a clean install.
test_upgrade_from() {
    local from=$1 to=$2 db="upgrade_from_${1//[^a-zA-Z0-9]/_}"
    pg_client createdb "$db"
    check "$from -> $to: update path exists" has_update_path "$db" "$from" "$to"
    check "$from: CREATE EXTENSION sno VERSION '$from'" create_at_version "$db" "$from"
    check "$from: installed as $from" same "$(installed_version "$db")" "$from"
    check "$from -> $to: ALTER EXTENSION sno UPDATE" update_extension "$db"
    check "$from -> $to: extversion is now $to" same "$(installed_version "$db")" "$to"
    check "$from -> $to: '$SAMPLE'::sno::text still works" sample_works "$db"
}

# Only one release: install it and run the update that has nothing to do.
test_current_only() {
    local current=$1 db=current
    pg_client createdb "$db"
    check "CREATE EXTENSION sno" psql_in "$db" -c "CREATE EXTENSION sno"
    check "installed as $current" same "$(installed_version "$db")" "$current"
    check "ALTER EXTENSION sno UPDATE (no-op)" update_extension "$db"
    check "extversion still $current" same "$(installed_version "$db")" "$current"
    check "'$SAMPLE'::sno::text works" sample_works "$db"
}

current=$(default_version)
if [ -z "$current" ]; then
    echo "FAIL: no default_version in $EXT_DIR/sno.control"
    exit 1
fi
echo "default_version: $current"
echo "install scripts: $(install_versions | one_line)"
echo "upgrade scripts: $(upgrade_steps | sed 's/ / -> /' | one_line)"

earlier=()
while read -r v; do
    [ "$v" = "$current" ] || earlier+=("$v")
done < <(install_versions)

start_cluster "$DIR" 5520
check "install script for default version $current exists" test -f "$EXT_DIR/sno--$current.sql"

if [ "${#earlier[@]}" -eq 0 ]; then
    echo "no earlier release to upgrade from (only $current is installed); checking the no-op update"
    test_current_only "$current"
else
    for v in "${earlier[@]}"; do
        test_upgrade_from "$v" "$current"
    done
fi

finish
