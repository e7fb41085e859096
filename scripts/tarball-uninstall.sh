#!/bin/sh
# Removes the files of sno @VERSION@ for PostgreSQL @MAJOR@ that ./install.sh copied:
#
#     ./uninstall.sh [PG_CONFIG]    # default: the pg_config on PATH
#
# Only the files. First, in each database, DROP EXTENSION sno (docs/upgrading.md, "Removing
# sno", says what it takes with it), then take sno out of shared_preload_libraries and restart
# cleanly: a server that preloads sno does not start without its library. The state file
# (sno_generator.state) stays in the data directory.
set -eu
pg_config=${1:-pg_config}
if ! version=$("$pg_config" --version 2>/dev/null); then
    echo "uninstall.sh: cannot run $pg_config (give the path of the server's pg_config)" >&2
    exit 1
fi
lib_dir=$("$pg_config" --pkglibdir)
extension_dir=$("$pg_config" --sharedir)/extension
rm -f "$lib_dir/sno.so" "$extension_dir/sno.control" "$extension_dir"/sno--*.sql
echo "sno removed from $version ($lib_dir, $extension_dir)"
