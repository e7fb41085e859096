#!/usr/bin/env bash
# Writes sno's control file and SQL scripts into an extension directory (`pg_config
# --sharedir`/extension, or a package's copy of it):
#
#     scripts/extension-files.sh DIRECTORY
#
# The control file gets the crate's version as default_version; the scripts of that unreleased
# version (its install script, sno--VERSION.sql, and the upgrade scripts to it) are assembled
# from sql/parts/ by scripts/sql-scripts.sh; the sql/sno--*.sql files (released versions'
# install and upgrade scripts, frozen) are copied as they are. (The SQL edition, sno_sql, is not
# put there: on a server that has its control file, pg_tle refuses to install sno_sql; its
# files are scripts/edition-scripts.sh's, docs/managed.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
directory=${1:?usage: scripts/extension-files.sh DIRECTORY}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
mkdir -p "$directory"
rm -f "$directory"/sno.control "$directory"/sno--*.sql
sed "s/@CARGO_VERSION@/$version/" sno.control >"$directory/sno.control"
scripts/sql-scripts.sh "$directory"
for script in sql/sno--*.sql; do
    install -m 644 "$script" "$directory/"
done
