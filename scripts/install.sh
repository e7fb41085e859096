#!/usr/bin/env bash
# Builds sno for one PostgreSQL major and installs it into that major's installation of this
# checkout (scripts/pg_config.sh), or into another PostgreSQL given by its pg_config:
#
#     scripts/install.sh MAJOR [--test] [--pg-config PATH]
#
# --test makes a test build (it has sno.test_clock_offset_ms, which moves the generator's clock:
# tests only, never a server that keeps data). Installing is copying: the library into
# `pg_config --pkglibdir`, the control file (with the crate's version) and the SQL scripts into
# `pg_config --sharedir`/extension (scripts/extension-files.sh: this version's scripts assembled
# from sql/parts/, released versions' frozen ones from sql/). The old
# library is removed first, so the new one gets a new inode: a server running with the old one
# loaded (the demo, say) keeps its mapping instead of crashing on the overwritten file.
#
# No cargo-pgrx: pgrx builds with PGRX_PG_CONFIG_PATH pointing at the pg_config, and sno's SQL
# is written by hand. Run as root, after scripts/setup.sh (or scripts/get-postgresql.sh MAJOR).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
    echo "usage: scripts/install.sh MAJOR [--test] [--pg-config PATH]" >&2
    exit 2
}
major=${1:-}
[[ $major =~ ^[0-9]+$ ]] || usage
shift
profile=release
features=pg$major
pg_config=
while (($#)); do
    case $1 in
    --test) profile=dev features=pg$major,test-clock ;;
    --pg-config) pg_config=${2:?usage} && shift ;;
    *) usage ;;
    esac
    shift
done
[[ -n $pg_config ]] || pg_config=$(scripts/pg_config.sh "$major")
# "PostgreSQL 18.6", or a release not yet out: "PostgreSQL 19rc1" (19beta1, 19devel).
if ! "$pg_config" --version 2>/dev/null | grep -Eq "^PostgreSQL $major(\.|beta|rc|devel)"; then
    echo "install.sh: $pg_config is not PostgreSQL $major" >&2
    exit 1
fi

library=$(scripts/build.sh "$major" "$pg_config" "$profile" "$features")
lib_dir=$("$pg_config" --pkglibdir)
extension_dir=$("$pg_config" --sharedir)/extension
rm -f "$lib_dir/sno.so"
install -m 755 "$library" "$lib_dir/sno.so"
scripts/extension-files.sh "$extension_dir"
