#!/usr/bin/env bash
# Builds pg_tle 1.5.2 (Apache-2.0, aws/pg_tle; release source in ../shared/vendor/) into this
# checkout's installation of each major named, for the tests of sno's SQL-only edition, which
# installs through pgtle.install_extension as on hosts that take only trusted-language
# extensions (Amazon RDS and Aurora, Supabase). 15 to 18 with ../shared/tools/pg_tle-build.sh;
# 19 here, because 1.5.2 predates it (see build_19). Seconds a major; nothing where 1.5.2 is
# installed already. A server using it needs shared_preload_libraries = 'pg_tle' (the library
# installs hooks at start) and CREATE EXTENSION pg_tle in each database. Run as root.
#
# Usage: scripts/build-pg_tle.sh MAJOR...
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022 # the `postgres` user runs what is installed

VERSION=1.5.2
PG_TLE_BUILD=../shared/tools/pg_tle-build.sh
TARBALL=../shared/vendor/pg_tle-$VERSION.tar.gz

# The check pg_tle-build.sh makes: its library, and the last upgrade script of this version.
installed() {
    local pg_config=$1
    [[ -f $("$pg_config" --pkglibdir)/pg_tle.so &&
        -f $("$pg_config" --sharedir)/extension/pg_tle--1.5.0--$VERSION.sql ]]
}

# 1.5.2 does not compile against 19, whose API changed; pg_tle's master has the fix (aws/pg_tle
# #306, after 1.5.2, not released yet). The same changes, made in the temporary copy only:
#   - FuncnameGetCandidates takes an int *fgc_flags that it always writes;
#   - log_min_messages is an array indexed by backend type;
#   - CreateSchemaCommand takes a ParseState * (carrying the query text) for the text;
#   - get_database_name, get_database_oid, tuplestore_putvalues and the wait events come from
#     headers that pgstat.h and its kin no longer include.
# And two of the toolchain: Debian built 19 with a GCC (14 or later) whose
# -Wmissing-variable-declarations Debian 12's GCC 12 refuses, so CFLAGS drops it; and pgxs would
# compile LLVM bitcode with /usr/bin/clang-21, which is in the Debian root, not here (the bitcode
# only serves JIT inlining), so with_llvm=no. What does not build is skipped with a line saying
# why, so that the other majors still get theirs.
build_19() {
    local pg_config=$1 src
    for p in flex libkrb5-dev make gcc; do # what pg_tle-build.sh installs
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || {
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq flex libkrb5-dev make gcc >/dev/null
            break
        }
    done
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    tar -xzf "$TARBALL" -C "$work"
    src=$work/pg_tle-$VERSION
    sed -i 's|false /\* include_out_arguments \*/, missing_ok)$|false, missing_ok, \&(int){0})|' \
        "$src/include/compatibility.h"
    sed -i -e 's|if (log_min_messages < WARNING)|if (log_min_messages[MyBackendType] < WARNING)|' \
        -e 's|CreateSchemaCommand(csstmt, "\((generated CREATE SCHEMA command)\)",|CreateSchemaCommand(({ ParseState *pstate19 = make_parsestate(NULL); pstate19->p_sourcetext = "\1"; pstate19; }), csstmt,|' \
        "$src/src/tleextension.c"
    printf '#include "%s"\n' catalog/pg_database.h parser/parse_node.h utils/lsyscache.h \
        utils/tuplestore.h utils/wait_event.h >>"$src/include/compatibility.h"
    if ! grep -q 'missing_ok, &(int){0})$' "$src/include/compatibility.h" ||
        (($(grep -c 'log_min_messages\[MyBackendType\]\|pstate19->p_sourcetext' "$src/src/tleextension.c") != 2)); then
        echo "build-pg_tle.sh: skipping 19: pg_tle $VERSION's source is not what the changes for 19 expect" >&2
        return 0
    fi
    if ! nice make -C "$src" -s -j2 PG_CONFIG="$pg_config" with_llvm=no \
        CFLAGS="$("$pg_config" --cflags | sed 's/ -Wmissing-variable-declarations//')" \
        >"$work/make.log" 2>&1; then
        echo "build-pg_tle.sh: skipping 19: pg_tle $VERSION does not build on it: $(grep -m1 'error' "$work/make.log")" >&2
        return 0
    fi
    make -C "$src" -s PG_CONFIG="$pg_config" with_llvm=no install >/dev/null
    echo "pg_tle $VERSION installed for $("$pg_config" --version)"
}

for major in "$@"; do
    pg_config=$(scripts/pg_config.sh "$major")
    if installed "$pg_config"; then
        continue
    fi
    if ((major == 19)); then
        [[ -f $TARBALL ]] || { echo "build-pg_tle.sh: no $TARBALL beside the checkout" >&2; exit 1; }
        build_19 "$pg_config"
    else
        [[ -f $PG_TLE_BUILD ]] || { echo "build-pg_tle.sh: no $PG_TLE_BUILD beside the checkout" >&2; exit 1; }
        nice bash "$PG_TLE_BUILD" "$pg_config"
    fi
done
