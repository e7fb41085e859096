#!/usr/bin/env bash
# Prints the address of this machine's main Debian archive, from the stanza (or line) of its
# apt sources that names its own release; the security archive's address would not have the
# other suites. scripts/get-postgresql.sh and scripts/build-postgresql.sh fetch source packages
# of Debian unstable from it.
set -euo pipefail
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
mirror=
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    mirror=$(awk -v codename="$codename" '
        BEGIN { RS = "" }
        {
            uris = ""; named = 0
            n = split($0, lines, "\n")
            for (i = 1; i <= n; i++) {
                if (lines[i] ~ /^URIs:/) { split(lines[i], fields, /[ \t]+/); uris = fields[2] }
                if (lines[i] ~ /^Suites:/ && (lines[i] " ") ~ ("[ \t]" codename "[ \t]")) named = 1
            }
            if (named && uris != "") { print uris; exit }
        }' /etc/apt/sources.list.d/debian.sources)
fi
if [[ -z $mirror && -f /etc/apt/sources.list ]]; then
    mirror=$(sed -e 's/\[[^]]*\]//' /etc/apt/sources.list |
        awk -v codename="$codename" '$1 == "deb" && $3 == codename { print $2; exit }')
fi
if [[ -z $mirror ]]; then
    echo "no Debian mirror for $codename in /etc/apt/sources.list.d/debian.sources or" \
        "/etc/apt/sources.list" >&2
    exit 1
fi
echo "$mirror"
