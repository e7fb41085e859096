"""sno through Python's drivers (psycopg 3, asyncpg), as an application uses them.

Each driver is first used with its plain defaults, then with the smallest registration that
makes the rest work. Every ID the server makes or the client builds goes through the driver and
back; an ID built in the client from its 10 bytes must come back as the same 10 bytes.

Run by tests/t/017_clients.pl against a cluster with sno (PGHOST, PGPORT, PGUSER set).
Prints PASS/FAIL per check and "N passed, M failed".
"""

import asyncio
import os
import sys

import asyncpg
import psycopg
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

# The reference vector of the format: these 10 bytes are 'brpk4q72xwf2m63l'.
SAMPLE_BYTES = bytes.fromhex("4e6f2160a0ff9a0a1033")
SAMPLE_TEXT = "brpk4q72xwf2m63l"

results = {"passed": 0, "failed": 0}


def check(name, got, expected):
    if got == expected:
        results["passed"] += 1
        print(f"PASS: {name}")
    else:
        results["failed"] += 1
        print(f"FAIL: {name}\n  expected: {expected!r}\n  got:      {got!r}")


def fails_with(action, sqlstate):
    """The SQLSTATE an action fails with, or 'no error'."""
    try:
        action()
    except psycopg.Error as error:
        return error.sqlstate
    return "no error"


class Sno:
    """What an application might hold: the 10 bytes, e.g. from the Rust or Go package."""

    def __init__(self, raw: bytes):
        assert len(raw) == 10
        self.raw = raw

    def __eq__(self, other):
        return isinstance(other, Sno) and other.raw == self.raw


def psycopg_defaults(conn):
    cur = conn.cursor()
    cur.execute("CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)")
    # Text parameters: a str is sent untyped, so the server reads it as sno.
    cur.execute("INSERT INTO t VALUES (%s, 1)", [SAMPLE_TEXT])
    cur.execute("SELECT n FROM t WHERE id = %s", [SAMPLE_TEXT])
    check("psycopg defaults: str parameter in INSERT and WHERE", cur.fetchone(), (1,))
    # bytes are sent as bytea: assigned to a sno column on INSERT (the assignment cast) ...
    cur.execute("INSERT INTO t VALUES (%s, 2)", [bytes(10)])
    cur.execute("SELECT id::text FROM t WHERE n = 2")
    check("psycopg defaults: bytes parameter in INSERT", cur.fetchone(), ("2222222222222222",))
    # ... but compared with nothing: there is no implicit cast.
    check(
        "psycopg defaults: bytes parameter in WHERE fails (42883) without a registration",
        fails_with(lambda: conn.execute("SELECT 1 FROM t WHERE id = %s", [bytes(10)]), "42883"),
        "42883",
    )
    conn.rollback()
    cur.execute("SELECT %s::sno", [SAMPLE_TEXT], binary=True)
    check("psycopg defaults: a binary result is the 10 bytes", cur.fetchone(), (SAMPLE_BYTES,))
    cur.execute("SELECT %s::sno", [SAMPLE_TEXT])
    check("psycopg defaults: a text result is the 16 characters", cur.fetchone(), (SAMPLE_TEXT,))
    cur.execute("CREATE TEMP TABLE c (id sno)")
    with cur.copy("COPY c FROM STDIN") as copy:
        copy.write_row([SAMPLE_TEXT])
    cur.execute("SELECT id::text FROM c")
    check("psycopg defaults: COPY text", cur.fetchall(), [(SAMPLE_TEXT,)])
    conn.rollback()


def register_sno(conn):
    """The smallest registration: sno's type (so arrays resolve) and a dumper and loader for the
    10 bytes, in binary (so parameters take the %b placeholder)."""
    info = TypeInfo.fetch(conn, "sno")
    info.register(conn)

    class SnoDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            return obj.raw

    class SnoLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return Sno(bytes(data))

    conn.adapters.register_dumper(Sno, SnoDumper)
    conn.adapters.register_loader(info.oid, SnoLoader)


def psycopg_registered(conn):
    register_sno(conn)
    cur = conn.cursor(binary=True)
    cur.execute("CREATE TEMP TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)")
    cur.execute("INSERT INTO t (id, n) VALUES (%b, 1)", [Sno(SAMPLE_BYTES)])
    cur.execute("SELECT id, n FROM t WHERE id = %b", [Sno(SAMPLE_BYTES)])
    check("psycopg registered: an ID from its 10 bytes, in INSERT and WHERE", cur.fetchone(),
          (Sno(SAMPLE_BYTES), 1))
    cur.execute("INSERT INTO t (n) VALUES (2) RETURNING id")
    (made,) = cur.fetchone()
    cur.execute("SELECT id = %b, sno_meta(%b) FROM t WHERE n = 2", [made, made])
    check("psycopg registered: a server-made ID round-trips", cur.fetchone(), (True, 1))
    cur.execute("SELECT %b::sno[]", [[Sno(SAMPLE_BYTES), Sno(bytes(10))]])
    check("psycopg registered: an array of sno in and out", cur.fetchone(),
          ([Sno(SAMPLE_BYTES), Sno(bytes(10))],))
    cur.execute("CREATE TEMP TABLE c (id sno, n int)")
    with cur.copy("COPY c FROM STDIN (FORMAT binary)") as copy:
        copy.set_types(["sno", "int4"])
        copy.write_row([Sno(SAMPLE_BYTES), 7])
    with cur.copy("COPY c TO STDOUT (FORMAT binary)") as copy:
        copy.set_types(["sno", "int4"])
        rows = list(copy.rows())
    check("psycopg registered: binary COPY in and out", rows, [(Sno(SAMPLE_BYTES), 7)])
    conn.rollback()


async def asyncpg_checks():
    conn = await asyncpg.connect(database="postgres")
    try:
        await conn.execute("CREATE TEMP TABLE t (id sno PRIMARY KEY, n int)")
        # Defaults: asyncpg has no codec for sno and uses its text form.
        await conn.execute("INSERT INTO t VALUES ($1, 1)", SAMPLE_TEXT)
        row = await conn.fetchrow("SELECT id, n FROM t WHERE id = $1", SAMPLE_TEXT)
        check("asyncpg defaults: text in, text out", tuple(row), (SAMPLE_TEXT, 1))
        try:
            await conn.copy_records_to_table("t", records=[(SAMPLE_TEXT, 2)])
            copied = "no error"
        except Exception as error:  # asyncpg refuses to COPY a type with only a text codec
            copied = f"{type(error).__name__}: {error}"
        check("asyncpg defaults: copy_records_to_table needs a binary codec", copied,
              "InternalClientError: no binary format encoder for type sno (OID "
              + str(await conn.fetchval("SELECT 'sno'::regtype::oid")) + ")")
        # The registration: the 10 bytes as sno's binary form.
        await conn.set_type_codec("sno", schema="public", format="binary",
                                  encoder=lambda raw: raw, decoder=lambda raw: raw)
        await conn.execute("INSERT INTO t VALUES ($1, 3)", bytes(10))
        row = await conn.fetchrow("SELECT id, id::text AS text FROM t WHERE id = $1", bytes(10))
        check("asyncpg registered: bytes in, bytes out", tuple(row), (bytes(10), "2222222222222222"))
        one = bytes(9) + b"\x01"
        await conn.copy_records_to_table("t", records=[(one, 4)])
        row = await conn.fetchrow("SELECT id::text FROM t WHERE n = 4")
        check("asyncpg registered: copy_records_to_table", tuple(row), ("2222222222222223",))
        arr = await conn.fetchval("SELECT ARRAY[$1::sno, $2::sno]", SAMPLE_BYTES, bytes(10))
        check("asyncpg registered: an array of sno", arr, [SAMPLE_BYTES, bytes(10)])
    finally:
        await conn.close()


def main():
    with psycopg.connect(dbname="postgres") as conn:
        psycopg_defaults(conn)
    with psycopg.connect(dbname="postgres") as conn:
        psycopg_registered(conn)
    asyncio.run(asyncpg_checks())
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
