#!/usr/bin/env bash
# Builds sno's release packages; the path of each is printed on a line of its own, last:
#
#     scripts/package.sh tarball [MAJOR...]   # target/dist/sno-VERSION-pgNN-linux-ARCH.tar.gz
#     scripts/package.sh deb                  # target/debian/postgresql-15-sno_VERSION-1_ARCH.deb
#
# tarball: for each major (default: 15 to 19), the library, the control and SQL files, and an
#   install step that takes a pg_config: installing on a server needs no Rust. Built against
#   this checkout's installation of that major (scripts/pg_config.sh); the library loads into
#   any minor release of the major.
# deb: for Debian 12's own PostgreSQL 15, laid out as Debian's extension packages are (the library
#   in /usr/lib/postgresql/15/lib, the control and SQL files in /usr/share/postgresql/15/extension,
#   the license and README under /usr/share/doc/postgresql-15-sno), with a Depends on
#   postgresql-15. Its library is the 15 tarball's: PostgreSQL keeps a major's ABI across its
#   minor releases, so one build serves 15.x of every origin (the tests load it into Debian's).
#
# Builds of the same commit give the same file lists and versions. The library is built with
# the checkout's and cargo's paths mapped to fixed ones, and every file and archive carries the
# commit's time (SOURCE_DATE_EPOCH), so that builds in different places differ as little as the
# compiler allows. Run as root, after scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
# Paths that would otherwise end up in the library (panic locations, debug info).
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$PWD=/build/sno \
--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/build/cargo"

# Every file and directory under $1 with the commit's time and plain permissions.
normalize_tree() {
    find "$1" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +
    find "$1" -type d -exec chmod 0755 {} +
    find "$1" -type f -exec chmod 0644 {} +
}

# The release build users make, which scripts/test.sh builds for every major through here: a
# warning in it fails the package (scripts/build.sh --deny-warnings), since clippy's build with
# the test features does not compile every major's code paths.
release_library() { # MAJOR PG_CONFIG DESTINATION
    local library
    library=$(scripts/build.sh --deny-warnings "$1" "$2" release)
    install -D -m 644 "$library" "$3"
    strip --strip-debug "$3"
}

build_tarball() {
    local major=$1 pg_config name root
    pg_config=$(scripts/pg_config.sh "$major")
    name=sno-$version-pg$major-linux-$(uname -m)
    root=target/dist/$name
    echo "==> building $name.tar.gz" >&2
    rm -rf "$root"
    release_library "$major" "$pg_config" "$root/lib/sno.so"
    scripts/extension-files.sh "$root/extension"
    cp -r LICENSE README.md CHANGELOG.md "$root/"
    mkdir -p "$root/docs"
    cp docs/*.md "$root/docs/"
    for script in install uninstall; do
        sed "s/@MAJOR@/$major/g; s/@VERSION@/$version/g" "scripts/tarball-$script.sh" \
            >"$root/$script.sh"
    done
    normalize_tree "$root"
    chmod 0755 "$root/install.sh" "$root/uninstall.sh"
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
        -C target/dist -cf - "$name" | gzip -9n >"target/dist/$name.tar.gz"
    echo "target/dist/$name.tar.gz"
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

build_deb() {
    local major=15 name root architecture
    local lib_dir=/usr/lib/postgresql/$major/lib extension_dir=/usr/share/postgresql/$major/extension
    architecture=$(dpkg --print-architecture)
    name=postgresql-$major-sno
    root=target/debian/$name
    echo "==> building $name $version for $architecture" >&2
    rm -rf "$root"
    local tarball_root=target/dist/sno-$version-pg$major-linux-$(uname -m)
    build_tarball "$major" >/dev/null # cargo builds nothing when the tarball's build is current
    install -D -m 644 "$tarball_root/lib/sno.so" "$root$lib_dir/sno.so"
    scripts/extension-files.sh "$root$extension_dir"
    local doc=$root/usr/share/doc/$name
    mkdir -p "$doc" "$root/DEBIAN"
    cp LICENSE "$doc/copyright"
    gzip -9n <README.md >"$doc/README.md.gz"
    gzip -9n <CHANGELOG.md >"$doc/changelog.gz"
    mkdir -p "$doc/docs"
    for page in docs/*.md; do
        gzip -9n <"$page" >"$doc/docs/$(basename "$page").gz"
    done
    cat >"$root/DEBIAN/control" <<CONTROL
Package: $name
Version: $version-1
Architecture: $architecture
Maintainer: sno developers <sno@localhost>
Depends: postgresql-$major, $(library_depends "$root$lib_dir/sno.so")
Section: database
Priority: optional
Description: compact, sortable, unique 10-byte IDs for PostgreSQL $major
 sno adds a native 10-byte ID type (the format of the sno Go package), a server-wide
 generator in shared memory that never repeats an ID across restarts, crashes and
 clock steps, and functions to decode and build IDs. Preload it with
 shared_preload_libraries = 'sno', then CREATE EXTENSION sno.
CONTROL
    normalize_tree "$root"
    local deb=target/debian/${name}_$version-1_$architecture.deb
    dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
    echo "$deb"
}

case ${1:-} in
tarball)
    shift
    majors=("$@")
    ((${#majors[@]})) || majors=(15 16 17 18 19)
    mkdir -p target/dist
    for major in "${majors[@]}"; do
        build_tarball "$major"
    done
    ;;
deb) build_deb ;;
*)
    echo "usage: scripts/package.sh tarball [MAJOR...] | deb" >&2
    exit 2
    ;;
esac
