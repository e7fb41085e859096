#!/usr/bin/env bash
# Builds what the ORM test (t/060_orms.pl) runs, from tests/clients/orms and clients/, into
# OUT_DIR, so that the user running the servers needs neither the toolchains nor the checkout:
#   OUT_DIR/vectors.txt                 SPEC.md's reference vectors, for every program
#   OUT_DIR/venv, OUT_DIR/python/       a virtual environment with the pinned packages of
#                                       tests/clients/orms/python/requirements.txt (PyPI:
#                                       psycopg, asyncpg, SQLAlchemy, Django) and clients/python;
#                                       orm_python.py and its Django app
#   OUT_DIR/node/                       orm_node.js, npm ci of its package-lock.json (pg,
#                                       drizzle-orm), clients/node as node_modules/sno-pg
#   OUT_DIR/sno-diesel-tests            the Rust crate's diesel feature, with Diesel and libpq
# Needs: Debian's python3-venv, nodejs and npm, cargo, libpq-dev (Diesel's PostgreSQL
# connection links libpq), and PyPI, the npm registry and crates.io (or their caches: a second
# run downloads nothing). Usage: tests/build_orms.sh OUT_DIR
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
orms=$(cd "$here/clients/orms" && pwd)
repo=$(cd "$here/.." && pwd)
out=$1
mkdir -p "$out/python" "$out/node"
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

cp "$orms/vectors.txt" "$out/"

# Debian's python3 (not one of the caller's own, which the servers' user may not be able to
# run), and a copy of clients/python, since pip builds a package in its directory.
/usr/bin/python3 -m venv "$out/venv"
pip=("$out/venv/bin/pip" install --quiet --disable-pip-version-check)
"${pip[@]}" -r "$orms/python/requirements.txt"
cp -r "$repo/clients/python" "$staging/python"
"${pip[@]}" --no-deps "$staging/python"
cp "$orms/python/orm_python.py" "$out/python/"
cp -r "$orms/python/snoapp" "$out/python/"
find "$out/python" -name __pycache__ -prune -exec rm -rf {} +

# node_modules/sno-pg gets the files an npm install of clients/node would (its "files").
cp "$orms/node/package.json" "$orms/node/package-lock.json" "$orms/node/orm_node.js" "$out/node/"
(cd "$out/node" && npm ci --no-audit --no-fund --loglevel=error)
mkdir -p "$out/node/node_modules/sno-pg"
cp "$repo/clients/node/package.json" "$repo/clients/node/"*.js "$repo/clients/node/"*.d.ts "$repo/clients/node/README.md" \
    "$out/node/node_modules/sno-pg/"

# Copied from where cargo says it put it (the user's CARGO_TARGET_DIR, if set).
program=$("$repo/scripts/cargo.sh" build --quiet --locked \
    --manifest-path "$orms/diesel/Cargo.toml" --message-format json-render-diagnostics |
    grep -o '"executable":"[^"]*/sno-diesel-tests"' | cut -d'"' -f4)
cp "$program" "$out/"
