#!/usr/bin/env bash
# Writes the SQL scripts of the unreleased version, assembled from sql/parts/, into an extension
# directory:
#
#     scripts/sql-scripts.sh DIRECTORY
#
# Each sql/NAME.parts lists, in order, the parts of one script (a name a line; # starts a
# comment). sql/sno.parts becomes the install script of the crate's version, sno--VERSION.sql;
# sql/sno--A--B.parts becomes the upgrade script sno--A--B.sql. The parts are edited, the
# scripts never: a block that the install and an upgrade script both hold is one part, so the
# two cannot drift apart. A released version's scripts are frozen files in sql/ instead
# (docs/contributing.md), and a manifest that would write one again is an error: its parts have
# moved on since the release, and an installation of that version must get the released bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
directory=${1:?usage: scripts/sql-scripts.sh DIRECTORY}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
mkdir -p "$directory"
for manifest in sql/*.parts; do
    name=$(basename "$manifest" .parts)
    [[ $name != sno ]] || name=sno--$version
    if [[ -e sql/$name.sql ]]; then
        echo "sql-scripts.sh: sql/$name.sql is released and frozen; delete $manifest" >&2
        exit 1
    fi
    parts=()
    while read -r part; do
        parts+=("sql/parts/$part")
    done < <(sed -e 's/#.*//' "$manifest" | awk 'NF { print $1 }')
    # A missing part fails here (set -e), before a partial script can be installed.
    cat "${parts[@]}" >"$directory/$name.sql.partial"
    chmod 644 "$directory/$name.sql.partial"
    mv "$directory/$name.sql.partial" "$directory/$name.sql"
done
