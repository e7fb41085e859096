#!/usr/bin/env bash
# Installs PostgreSQL 19 where scripts/pg_config.sh says, unless it is there already; run by
# scripts/get-postgresql.sh 19, as root:
#
#     scripts/get-postgresql-19.sh PREFIX     # PREFIX: pg_config.sh's path less /bin/pg_config
#
# 19 is not released yet, and no registry carries a relocatable build of it: the only binaries
# are Debian's packages of the release candidate (PINNED, in `experimental`), built for Debian
# unstable and its glibc (2.43; Debian 12 has 2.36). So they go into a Debian unstable root of
# their own (debootstrap, minbase), PREFIX/root, installed there by its own apt from the
# machine's Debian archive (scripts/debian-mirror.sh; apt checks them against Debian's signed
# index). The root's programs then run from the host, as the other majors' do, because they are
# told where their glibc is: each ELF program of the installation gets the root's dynamic
# loader as its interpreter and the root's library directories as its RPATH (patchelf). Nothing
# else is needed: the programs find their share, lib and include directories from their own
# path, inside the root (`pg_config --sharedir` prints a path in it), initdb and pg_ctl run the
# root's postgres beside them, and a library built on Debian 12 loads into that server (a newer
# glibc runs what an older one built). PREFIX/bin is a link to the root's bin directory, so that
# PREFIX has the layout of the other majors' installations.
#
# Why not wrapper scripts that run each program through the root's loader (`ld-linux-x86-64.so.2
# --library-path ... PROGRAM`): initdb and pg_ctl start postgres by its path beside their own,
# which is then the real program, run by the host's loader against the root's libraries, and
# fails; and with the loader's --argv0 naming the wrapper instead, postgres takes the wrapper's
# directory for its own and looks for its share directory at the path it was built with
# (/usr/share/postgresql/19), which is not there. Why not chroot: the servers' data directories,
# sockets and the tests' Perl live on the host, which the root would have to mount.
#
# About 1.4 GB (the server headers' package depends on clang and LLVM), 3 minutes from nothing
# on two busy cores (162 s and 208 s measured; the downloads and dpkg, little CPU); nothing,
# when the pinned version is there.
# Everything stays under PREFIX: debootstrap and apt mount nothing that outlives them (what a
# killed run left mounted is unmounted before the root is removed), the root's services are
# never started (policy-rc.d) and its packages create no cluster. The host gets only
# debootstrap itself, like the other test dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022 # the `postgres` user runs what is installed

# The packages of the release candidate; when 19.0 reaches unstable, this and SUITE change.
PINNED=19~rc1-1
SUITE=experimental

prefix=${1:?usage: scripts/get-postgresql-19.sh PREFIX}
root=$prefix/root
ready=$prefix/installed # written last, with PINNED: a half-made root is made again
if [[ -f $ready && $(<"$ready") == "$PINNED" && -x $prefix/bin/postgres ]]; then
    exit 0
fi

loader=$root/lib64/ld-linux-x86-64.so.2
library_path=$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu

# A run killed inside debootstrap may leave the root's /proc, /sys or /dev mounted: unmount
# them (deepest first), and remove nothing across a mount point anyway (--one-file-system).
remove_root() {
    local mounts
    mounts=$(awk -v root="$root" 'index($2, root "/") == 1 { print $2 }' /proc/self/mounts |
        sort -r)
    [[ -z $mounts ]] || xargs -r -d '\n' umount -l <<<"$mounts"
    rm -rf --one-file-system "$prefix"
}

in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive "$@"; }

if ! command -v debootstrap >/dev/null; then
    echo "==> installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        debootstrap >/dev/null
fi

echo "==> PostgreSQL $PINNED (Debian $SUITE) in a Debian unstable root, $root"
start=$SECONDS
remove_root
mkdir -p "$prefix"
mirror=$(scripts/debian-mirror.sh)
debootstrap --variant=minbase sid "$root" "$mirror" >"$prefix/debootstrap.log" 2>&1 ||
    { cat "$prefix/debootstrap.log" >&2; exit 1; }
echo "deb $mirror $SUITE main" >"$root/etc/apt/sources.list.d/$SUITE.list"
# No service starts in the root, and PostgreSQL's packages create no cluster of their own.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
mkdir -p "$root/etc/postgresql-common"
echo 'create_main_cluster = false' >"$root/etc/postgresql-common/createcluster.conf"
# postgresql-common's postinst runs systemd-tmpfiles, which fails without /proc; the root needs
# none of the directories it makes (the tests put sockets and data in their own), and mounting
# /proc is what could outlive a killed run. apt runs dpkg with a PATH of its own (DPkg::Path),
# which has to name /usr/local/sbin.
printf '#!/bin/sh\n# no /proc in this root: see scripts/get-postgresql-19.sh\nexit 0\n' \
    >"$root/usr/local/sbin/systemd-tmpfiles"
chmod 755 "$root/usr/sbin/policy-rc.d" "$root/usr/local/sbin/systemd-tmpfiles"
# The archive's Release files of unstable and experimental may be past their Valid-Until
# date. Each package is taken from experimental by name: `-t experimental` would take every
# dependency from there too, and a newer perl there conflicts with unstable's.
apt_options=(-qq -o Acquire::Check-Valid-Until=false
    -o DPkg::Path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
in_root apt-get "${apt_options[@]}" update
in_root apt-get "${apt_options[@]}" -y --no-install-recommends install \
    "postgresql-19/$SUITE" "postgresql-server-dev-19/$SUITE" "postgresql-client-19/$SUITE" \
    "libpq5/$SUITE" "libpq-dev/$SUITE" patchelf >"$prefix/apt.log" 2>&1 ||
    { cat "$prefix/apt.log" >&2; exit 1; }
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
installed=$(in_root dpkg-query -W -f='${Version}' postgresql-19)
[[ $installed == "$PINNED" ]] ||
    { echo "$0: $SUITE has postgresql-19 $installed, not $PINNED" >&2; exit 1; }
in_root apt-get -qq clean

# patchelf is the root's own, run through the root's loader like everything there.
pgdir=$root/usr/lib/postgresql/19
for program in "$pgdir"/bin/* "$pgdir"/lib/pgxs/src/test/regress/pg_regress; do
    [[ $(head -c 4 "$program" | tr -d '\0') == $'\x7fELF' ]] || continue
    "$loader" --library-path "$library_path" "$root/usr/bin/patchelf" \
        --set-interpreter "$loader" --force-rpath --set-rpath "$library_path" "$program"
done
ln -sfn root/usr/lib/postgresql/19/bin "$prefix/bin"
"$prefix/bin/pg_config" --version >/dev/null
echo "$PINNED" >"$ready"
echo "    ($((SECONDS - start)) s)"
