#!/usr/bin/env bash
# Dump/restore round trip for the sno type, against a throwaway PostgreSQL 15 cluster.
#
# Why: pg_dump writes sno values through the type's text output and pg_restore reads them back
# through its input function, and the restored btree is rebuilt from those values. A bug in
# either direction, or in the comparison support the index uses, would show up here as
# different rows, a corrupt index, or a primary key that lets duplicates in.
#
# Needs: root (runs the server as the postgres OS user), sno installed into PostgreSQL 15.
# Usage: tests/server/dump_restore.sh   (prints PASS/FAIL per check, then "N passed, M failed")
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"

DIR=/tmp/sno-dump-test
ROWS=100000

# 100,000 pseudo-random ids (so the btree gets real page splits, not an append-only load),
# plus the smallest and largest ids the text form can express.
create_source_db() {
    pg_client createdb src
    psql_in src <<SQL
CREATE EXTENSION sno;
CREATE EXTENSION amcheck;
CREATE TABLE t (id sno PRIMARY KEY, n int, other sno);
INSERT INTO t
SELECT substring(sha256(i::text::bytea) from 1 for 10)::sno,
       i,
       substring(sha256(('other' || i)::bytea) from 1 for 10)::sno
FROM generate_series(1, $ROWS) AS i;
INSERT INTO t VALUES ('2222222222222222', -1, 'xxxxxxxxxxxxxxxx'),
                     ('xxxxxxxxxxxxxxxx', -2, '2222222222222222');
CREATE INDEX t_other_btree ON t (other);
CREATE INDEX t_id_hash ON t USING hash (id);
ANALYZE t;
SQL
}

# One string standing for the whole table, in index order, through the text output function.
table_digest() {
    psql_in "$1" -c \
        "SELECT md5(string_agg(id::text || ':' || n || ':' || other::text, ',' ORDER BY id)) FROM t"
}

row_count() {
    psql_in "$1" -c "SELECT count(*) FROM t"
}

# The dump may or may not carry amcheck along; either way we need it to check the index.
index_is_valid() {
    local db=$1 index=$2
    psql_in "$db" -c "SET client_min_messages = warning" \
        -c "CREATE EXTENSION IF NOT EXISTS amcheck" \
        -c "SELECT bt_index_check('$index', true)" >/dev/null
}

# Inserting an id that is already there must fail with unique_violation (23505). psql keeps
# going after the error here so it can report the SQLSTATE it got.
duplicate_sqlstate() {
    psql_in "$1" -v ON_ERROR_STOP=0 \
        -c "INSERT INTO t SELECT id, 0, other FROM t WHERE id = '2222222222222222'" \
        -c '\echo :SQLSTATE' 2>/dev/null
}

# Look the extreme ids up through the restored hash index: it was rebuilt from restored values
# and must still find them. The primary key is dropped inside a rolled-back transaction so
# the planner has no other index to pick (hash indexes take no IN lists, so it is a bitmap
# scan over the hash index).
hash_lookup() {
    psql_in "$1" <<'SQL'
BEGIN;
ALTER TABLE t DROP CONSTRAINT t_pkey;
SET LOCAL enable_seqscan = off;
SELECT string_agg(n::text, ',' ORDER BY n) FROM t
WHERE id IN ('2222222222222222', 'xxxxxxxxxxxxxxxx');
ROLLBACK;
SQL
}

start_cluster "$DIR" 5520
create_source_db

src_digest=$(table_digest src)
src_count=$(row_count src)
check "source has $((ROWS + 2)) rows" same "$src_count" "$((ROWS + 2))"
check "source t_pkey passes bt_index_check" index_is_valid src t_pkey

# --- custom format: pg_dump -Fc, pg_restore into a fresh database ---------------------------
pg_client pg_dump -Fc -f "$DIR/src.dump" src
pg_client createdb dst
pg_client pg_restore --exit-on-error -d dst "$DIR/src.dump"

check "custom dump: same row count" same "$(row_count dst)" "$src_count"
check "custom dump: same rows (md5 of all rows)" same "$(table_digest dst)" "$src_digest"
check "custom dump: t_pkey passes bt_index_check(heapallindexed)" index_is_valid dst t_pkey
check "custom dump: t_other_btree passes bt_index_check" index_is_valid dst t_other_btree
check "custom dump: hash index finds the extreme ids" same "$(hash_lookup dst)" "-2,-1"
check "custom dump: primary key rejects a duplicate (23505)" \
    same "$(duplicate_sqlstate dst)" 23505

# --- plain format: pg_dump -Fp, replayed through psql --------------------------------------
pg_client pg_dump -Fp -f "$DIR/src.sql" src
pg_client createdb dst_plain
psql_in dst_plain -f "$DIR/src.sql" >/dev/null

check "plain dump: same row count" same "$(row_count dst_plain)" "$src_count"
check "plain dump: same rows (md5 of all rows)" same "$(table_digest dst_plain)" "$src_digest"
check "plain dump: t_pkey passes bt_index_check(heapallindexed)" index_is_valid dst_plain t_pkey

finish
