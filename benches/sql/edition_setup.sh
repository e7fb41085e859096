# shellcheck shell=bash
# What the SQL edition's benchmarks (edition_bench.sh, edition_instructions.sh) share, on a
# running cluster of scripts/cluster.sh: the edition installed as a service's user installs it
# (its plain SQL file, in one transaction) and configured with a partition of its own (7),
# native sno beside it, a sequence s for nextval(), and the plain-SQL UUIDv7 and ULID that a
# service without extensions offers instead (edition_peers.sql, with pgcrypto for the ULID's
# random bytes). Source it after cluster.sh; don't run it.
#
#   setup_edition_and_peers DIR    DIR: where the edition's files are written (the cluster's)

setup_edition_and_peers() {
    local dir=$1
    scripts/edition-scripts.sh "$dir/edition" >/dev/null
    chmod -R a+rX "$dir/edition"
    psql_in postgres -1 -f "$dir/edition/sno_sql.sql"
    psql_in postgres <<'SQL' >/dev/null
SELECT sno_sql.configure(7);
CREATE EXTENSION sno;
CREATE EXTENSION pgcrypto;
CREATE SEQUENCE s;
SQL
    psql_in postgres <benches/sql/edition_peers.sql >/dev/null
}
