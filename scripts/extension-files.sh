#!/usr/bin/env bash
# Writes sno's control file and SQL scripts into an extension directory (`pg_config
# --sharedir`/extension, or a package's copy of it):
#
#     scripts/extension-files.sh DIRECTORY
#
# The control file gets the crate's version as default_version; sql/sno.sql becomes that
# version's install script, sno--VERSION.sql; the other sql/sno--*.sql files (earlier versions'
# install scripts, the upgrade scripts) are copied as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
directory=${1:?usage: scripts/extension-files.sh DIRECTORY}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
mkdir -p "$directory"
rm -f "$directory"/sno.control "$directory"/sno--*.sql
sed "s/@CARGO_VERSION@/$version/" sno.control >"$directory/sno.control"
install -m 644 sql/sno.sql "$directory/sno--$version.sql"
for script in sql/sno--*.sql; do
    install -m 644 "$script" "$directory/"
done
