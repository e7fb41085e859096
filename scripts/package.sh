#!/usr/bin/env bash
# Builds a Debian package of sno for each PostgreSQL major given (default: 15):
#   target/debian/postgresql-NN-sno_<version>_<arch>.deb
# laid out as Debian's own extension packages are: the library in pg_config --pkglibdir, the
# control and SQL files in pg_config --sharedir/extension, the license and README under
# /usr/share/doc/postgresql-NN-sno, and a Depends on the matching postgresql-NN server package.
# A server with the package needs no Rust toolchain.
#
# Builds of the same commit give the same file list and versions. The library is built with
# the checkout's and cargo's paths mapped to fixed ones, and every file and the archive carry
# the commit's time (SOURCE_DATE_EPOCH), so that builds in different places differ as little as
# the compiler allows.
#
# Usage: scripts/package.sh [MAJOR...]   (run as root, after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

OUT_DIR=target/debian
PACKAGE_REVISION=1
majors=("$@")
((${#majors[@]})) || majors=(15)

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
architecture=$(dpkg --print-architecture)
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
# Paths that would otherwise end up in the library (panic locations, debug info).
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$PWD=/build/sno \
--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/build/cargo"

pg_config_of() {
    local pg_config=/usr/lib/postgresql/$1/bin/pg_config
    if [[ ! -x $pg_config ]]; then
        echo "no PostgreSQL $1 here ($pg_config)" >&2
        return 1
    fi
    echo "$pg_config"
}

# The shared libraries sno.so links, as Debian package dependencies.
library_depends() {
    local library=$1 package packages=()
    for needed in $(objdump -p "$library" | awk '/NEEDED/ { print $2 }'); do
        package=$(dpkg -S "*/$needed" 2>/dev/null | head -n 1 | cut -d: -f1)
        [[ -n $package ]] && packages+=("$package")
    done
    printf '%s\n' "${packages[@]}" | sort -u | paste -sd, | sed 's/,/, /g'
}

build_package() {
    local major=$1 pg_config name root
    pg_config=$(pg_config_of "$major")
    name=postgresql-$major-sno
    root=$OUT_DIR/$name
    echo "==> building $name $version for $architecture"
    rm -rf "$root"
    cargo pgrx package --pg-config "$pg_config" --no-default-features --features "pg$major" \
        --out-dir "$root" >/dev/null

    local doc=$root/usr/share/doc/$name
    mkdir -p "$doc" "$root/DEBIAN"
    cp LICENSE "$doc/copyright"
    gzip -9n <README.md >"$doc/README.md.gz"
    gzip -9n <CHANGELOG.md >"$doc/changelog.gz"

    local library
    library=$(find "$root" -name sno.so)
    strip --strip-debug "$library"
    cat >"$root/DEBIAN/control" <<CONTROL
Package: $name
Version: $version-$PACKAGE_REVISION
Architecture: $architecture
Maintainer: sno developers <sno@localhost>
Depends: postgresql-$major, $(library_depends "$library")
Section: database
Priority: optional
Description: compact, sortable, unique 10-byte IDs for PostgreSQL $major
 sno adds a native 10-byte ID type (the format of the sno Go package), a server-wide
 generator in shared memory that never repeats an ID across restarts, crashes and
 clock steps, and functions to decode and build IDs. Preload it with
 shared_preload_libraries = 'sno', then CREATE EXTENSION sno.
CONTROL
    find "$root" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +
    find "$root" -type d -exec chmod 0755 {} +
    find "$root" -type f -exec chmod 0644 {} +
    local deb=$OUT_DIR/${name}_$version-${PACKAGE_REVISION}_$architecture.deb
    dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
    echo "$deb"
}

mkdir -p "$OUT_DIR"
for major in "${majors[@]}"; do
    build_package "$major"
done
