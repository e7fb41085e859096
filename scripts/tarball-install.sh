#!/bin/sh
# Installs sno @VERSION@ for PostgreSQL @MAJOR@ from this directory:
#
#     ./install.sh [PG_CONFIG]    # default: the pg_config on PATH
#
# Copies lib/sno.so into `pg_config --pkglibdir` and extension/* into `pg_config
# --sharedir`/extension (run it as a user who may write there, root for a packaged
# PostgreSQL). Then add sno to shared_preload_libraries, restart, and CREATE EXTENSION sno.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pg_config=${1:-pg_config}
if ! version=$("$pg_config" --version 2>/dev/null); then
    echo "install.sh: cannot run $pg_config (give the path of the server's pg_config)" >&2
    exit 1
fi
case $version in
# A release, or one not yet out ("PostgreSQL 19rc1": 19beta1, 19devel).
"PostgreSQL @MAJOR@."* | "PostgreSQL @MAJOR@"[a-z]*) ;;
*)
    echo "install.sh: this is sno for PostgreSQL @MAJOR@; $pg_config is $version" >&2
    exit 1
    ;;
esac
lib_dir=$("$pg_config" --pkglibdir)
extension_dir=$("$pg_config" --sharedir)/extension
# A new file, not one written over: a running server keeps the old library mapped safely.
rm -f "$lib_dir/sno.so"
cp "$here/lib/sno.so" "$lib_dir/sno.so"
chmod 755 "$lib_dir/sno.so"
rm -f "$extension_dir"/sno--*.sql
cp "$here"/extension/sno.control "$here"/extension/sno--*.sql "$extension_dir/"
chmod 644 "$extension_dir/sno.control" "$extension_dir"/sno--*.sql
echo "sno @VERSION@ installed into $version ($lib_dir, $extension_dir)"
