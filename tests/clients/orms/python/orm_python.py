"""sno through clients/python (the sno_postgres package) with psycopg 3, asyncpg, SQLAlchemy 2
(on both) and Django, as an application uses them.

Each ORM gets the same scenario: a model whose primary key the server makes (sno_generate),
the ID back from the insert, get by ID, a time window with sno_min, order, bulk insert, a
foreign key, a string where an ID is expected (it works when it is an ID, and a bad one is an
error before any query: never a wrong match), and the reference vectors of SPEC.md, which must
decode, come back and sort the same in Python and in SQL.

Run by tests/t/060_orms.pl (PGHOST, PGPORT, PGUSER set; argument: the vectors' file), with
the virtual environment tests/build_orms.sh made. Prints PASS/FAIL per check and
"N passed, M failed".
"""

import asyncio
import os
import shutil
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from uuid import UUID

import asyncpg
import psycopg
from sqlalchemy import ForeignKey, String, cast, func, insert, literal, select, text
from sqlalchemy.exc import IntegrityError, ProgrammingError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

import sno_postgres.asyncpg
import sno_postgres.psycopg
from sno_postgres import Sno
from sno_postgres.sqlalchemy import Sno as SnoColumn

PARTITION = 31  # the node's sno.partition
UTC = timezone.utc
MILLISECOND = timedelta(milliseconds=1)
JAN_2021 = datetime(2021, 1, 1, tzinfo=UTC)
JAN_2022 = datetime(2022, 1, 1, tzinfo=UTC)
JAN_2023 = datetime(2023, 1, 1, tzinfo=UTC)
# An instant inside a 4 ms unit, with microseconds: Sno.min must floor it as SQL's sno_min does.
INSIDE_A_UNIT = datetime(2021, 11, 12, 1, 43, 2, 123999, tzinfo=UTC)
BAD_TEXT = "brpk4q72xwf2m631"  # a '1' is not in the alphabet
BAD_TEXT_REASON = "character '1' at position 16 is not one of"

results = {"passed": 0, "failed": 0}


def check(name, got, expected):
    if got == expected:
        results["passed"] += 1
        print(f"PASS: {name}")
    else:
        results["failed"] += 1
        print(f"FAIL: {name}\n  expected: {expected!r}\n  got:      {got!r}")


def error_of(action):
    """What an action raised, as 'Type: message' (first line), or 'no error'."""
    try:
        action()
    except Exception as error:  # the checks compare the type and message
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return "no error"


def read_vectors(path):
    """(id, text, unix_ms, (tick_tock, meta, partition, sequence)) per line of the file."""
    vectors = []
    with open(path) as file:
        for line in file:
            if line.startswith("#") or not line.strip():
                continue
            hexa, text, ms, *parts = line.split()
            vectors.append((Sno(bytes.fromhex(hexa)), text, int(ms), tuple(map(int, parts))))
    return vectors


def old_ids():
    """IDs the application makes for chosen times: two in 2021, two in 2022, one in 2023."""
    return [
        Sno.from_parts(JAN_2021, meta=7, partition=500),
        Sno.from_parts(JAN_2022 - MILLISECOND, meta=7, partition=500),
        Sno.from_parts(JAN_2022, meta=7, partition=500),
        Sno.from_parts(JAN_2023 - MILLISECOND, meta=7, partition=500, sequence=9),
        Sno.from_parts(JAN_2023, meta=7, partition=500),
    ]


def value_type(vectors):
    """The Sno type alone: the reference vectors, the text rules, the time rules."""
    check(
        "Sno: the reference vectors decode in Python as in Go",
        [(str(i), i.unix_ms, (i.tick_tock, i.meta, i.partition, i.sequence))
         for i, *_ in vectors],
        [(text, ms, parts) for _, text, ms, parts in vectors],
    )
    check("Sno: text in, same ID", [Sno(text) for _, text, _, _ in vectors],
          [i for i, *_ in vectors])
    check("Sno: upper case is read", Sno("BRPK4Q72XWF2M63L"), Sno("brpk4q72xwf2m63l"))
    check("Sno: ordering is byte order is text order",
          sorted(i for i, *_ in vectors), sorted((i for i, *_ in vectors), key=str))
    check("Sno: a bad character is an error", error_of(lambda: Sno(BAD_TEXT)),
          f"SnoError: invalid sno '{BAD_TEXT}': character '1' at position 16 is not one of "
          "23456789abcdefghijklmnopqrstuvwx")
    check("Sno: 15 characters are an error", error_of(lambda: Sno("brpk4q72xwf2m63")),
          "SnoError: invalid sno 'brpk4q72xwf2m63': 15 characters, expected 16")
    check("Sno: 9 bytes are an error", error_of(lambda: Sno(bytes(9))),
          "SnoError: a sno is 10 bytes, not 9")
    check("Sno: a time before 2010 is an error",
          error_of(lambda: Sno.min(datetime(2009, 12, 31, 23, 59, 59, 999999, tzinfo=UTC))),
          "SnoError: time 2009-12-31T23:59:59.999999+00:00 is outside 2010-01-01 .. "
          "2079-09-07 15:47:35.548 UTC")
    last_unit = datetime(2079, 9, 7, 15, 47, 35, 548000, tzinfo=UTC)
    check("Sno: the last 4 ms unit is the max time vector's",
          (str(Sno.min(last_unit)), error_of(lambda: Sno.min(last_unit + 4 * MILLISECOND))),
          ("xxxxxxxw22222222", "SnoError: time 2079-09-07T15:47:35.552000+00:00 is outside "
           "2010-01-01 .. 2079-09-07 15:47:35.548 UTC"))
    check("Sno: a part out of range is an error",
          [error_of(lambda: Sno.from_parts(JAN_2021, **{name: value}))
           for name, value in [("meta", 256), ("partition", -1), ("sequence", 65536),
                               ("tick_tock", 2)]],
          ["SnoError: meta 256 is out of range 0..255",
           "SnoError: partition -1 is out of range 0..65535",
           "SnoError: sequence 65536 is out of range 0..65535",
           "SnoError: tick_tock 2 is out of range 0..1"])
    check("Sno: a naive datetime is an error", error_of(lambda: Sno.min(datetime(2022, 1, 1))),
          "SnoError: a naive datetime (2022-01-01T00:00:00) has no time zone: give it one")
    check("Sno: never equal to its text", Sno("brpk4q72xwf2m63l") == "brpk4q72xwf2m63l", False)
    edition_value_type(vectors)


def edition_value_type(vectors):
    """Sno.from_uuid and Sno.to_uuid: the SQL edition's uuid form of an ID."""
    check("Sno: to_uuid is the 10 bytes and 6 zero bytes; from_uuid reads it back",
          [(i.to_uuid().bytes, Sno.from_uuid(i.to_uuid()), Sno.from_uuid(str(i.to_uuid())))
           for i, *_ in vectors],
          [(bytes(i) + bytes(6), i, i) for i, *_ in vectors])
    check("Sno: the edition's example uuid is the reference vector",
          Sno.from_uuid(UUID("4E6F2160-A0FF-9A0A-1033-000000000000")), Sno("brpk4q72xwf2m63l"))
    check("Sno: uuid order is Sno order",
          sorted(i.to_uuid() for i, *_ in vectors), [i.to_uuid() for i in sorted(
              i for i, *_ in vectors)])
    check("Sno: from_uuid refuses a uuid that is not a sno",
          [error_of(lambda: Sno.from_uuid(value)) for value in [
              UUID("4e6f2160-a0ff-9a0a-1033-000000000001"),
              "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "brpk4q72xwf2m63l", bytes(16)]],
          ["SnoError: uuid 4e6f2160-a0ff-9a0a-1033-000000000001 is not a sno (sno_sql.sno): "
           "its last 6 bytes must be zero, not 000000000001",
           "SnoError: uuid a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 is not a sno (sno_sql.sno): "
           "its last 6 bytes must be zero, not 6bb9bd380a11",
           "SnoError: invalid uuid 'brpk4q72xwf2m63l': not the text of a uuid",
           "SnoError: a sno_sql.sno value is a uuid.UUID or str, not bytes"])


def sql_decoded(rows):
    """Rows of (k, text, time, tick_tock, meta, partition, sequence) from SQL, as the vectors."""
    return [(text, round(time.timestamp() * 1000), tuple(parts))
            for _, text, time, *parts in rows]


DECODE_SQL = ("SELECT k, id::text, (sno_decode(id)).* FROM {table} ORDER BY k")
SQL_ORDER_SQL = "SELECT k FROM {table} ORDER BY id, k"


def agree_with_sql(label, vectors, back, decoded_rows, sql_order):
    """The vectors as they came back through a library, and as SQL decoded and sorted them."""
    ids = [i for i, *_ in vectors]
    check(f"{label}: reference vectors back unchanged", back, ids)
    check(f"{label}: reference vectors decoded in SQL as in Go", sql_decoded(decoded_rows),
          [(text, ms, parts) for _, text, ms, parts in vectors])
    check(f"{label}: ORDER BY id in SQL is Python's order", sql_order,
          [k for _, k in sorted((i, k) for k, i in enumerate(back))])


# psycopg 3 and asyncpg, through the package's adapters.

def psycopg_adapter(vectors):
    with psycopg.connect(dbname="postgres") as conn:
        check("psycopg: before register, a sno result is a str",
              conn.execute("SELECT 'brpk4q72xwf2m63l'::sno").fetchone(), ("brpk4q72xwf2m63l",))
        sno_postgres.psycopg.register(conn)
        conn.execute("CREATE TEMP TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)")
        (made,) = conn.execute("INSERT INTO t (n) VALUES (1) RETURNING id").fetchone()
        check("psycopg: a server-made ID is a Sno", (type(made), made.meta, made.partition),
              (Sno, 1, PARTITION))
        sample = Sno("brpk4q72xwf2m63l")
        conn.execute("INSERT INTO t VALUES (%s, 2), (%b, 3)", [sample, Sno.NIL])
        check("psycopg: Sno parameters, text (%s) and binary (%b)",
              conn.execute("SELECT n FROM t WHERE id = %s OR id = %b ORDER BY n",
                           [sample, Sno.NIL]).fetchall(), [(2,), (3,)])
        cur = conn.cursor(binary=True)
        check("psycopg: binary results are Sno",
              cur.execute("SELECT id FROM t WHERE n = 2").fetchone(), (sample,))
        check("psycopg: arrays of sno",
              conn.execute("SELECT %s::sno[]", [[sample, Sno.NIL]]).fetchone(),
              ([sample, Sno.NIL],))
        with cur.copy("COPY t (id, n) FROM STDIN (FORMAT binary)") as copy:
            copy.set_types(["sno", "int4"])
            copy.write_row([Sno.MAX, 4])
        check("psycopg: binary COPY of Sno", conn.execute(
            "SELECT id::text FROM t WHERE n = 4").fetchone(), ("xxxxxxxxxxxxxxxx",))
        check("psycopg: Sno.min is sno_min", conn.execute(
            "SELECT sno_min(%s), sno_max(%s)", [INSIDE_A_UNIT, INSIDE_A_UNIT]).fetchone(),
            (Sno.min(INSIDE_A_UNIT), Sno.max(INSIDE_A_UNIT)))
        conn.execute("CREATE TEMP TABLE v (k int PRIMARY KEY, id sno)")
        with conn.cursor().copy("COPY v FROM STDIN (FORMAT binary)") as copy:
            copy.set_types(["int4", "sno"])
            for k, (i, *_) in enumerate(vectors):
                copy.write_row([k, i])
        agree_with_sql(
            "psycopg", vectors,
            [i for (i,) in conn.execute("SELECT id FROM v ORDER BY k")],
            conn.execute(DECODE_SQL.format(table="v")).fetchall(),
            [k for (k,) in conn.execute(SQL_ORDER_SQL.format(table="v"))])


async def asyncpg_adapter(vectors):
    conn = await asyncpg.connect(database="postgres")
    try:
        await sno_postgres.asyncpg.register(conn)
        await conn.execute("CREATE TEMP TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)")
        made = await conn.fetchval("INSERT INTO t (n) VALUES (1) RETURNING id")
        check("asyncpg: a server-made ID is a Sno", (type(made), made.meta, made.partition),
              (Sno, 1, PARTITION))
        sample = Sno("brpk4q72xwf2m63l")
        await conn.execute("INSERT INTO t VALUES ($1, 2), ($2, 3)", sample, bytes(10))
        check("asyncpg: a Sno, its text or its bytes as the parameter",
              [await conn.fetchval("SELECT n FROM t WHERE id = $1", v)
               for v in (sample, str(sample), bytes(sample))], [2, 2, 2])
        try:
            await conn.fetchval("SELECT n FROM t WHERE id = $1", BAD_TEXT)
            refused = "no error"
        except Exception as error:
            refused = type(error).__name__ + (": " + BAD_TEXT_REASON
                                              if BAD_TEXT_REASON in str(error) else str(error))
        check("asyncpg: a bad text parameter is an error before the query",
              refused, "DataError: " + BAD_TEXT_REASON)
        await conn.copy_records_to_table("t", records=[(Sno.MAX, 4)])
        check("asyncpg: copy_records_to_table with Sno",
              await conn.fetchval("SELECT id::text FROM t WHERE n = 4"), "xxxxxxxxxxxxxxxx")
        check("asyncpg: arrays of sno",
              await conn.fetchval("SELECT $1::sno[]", [sample, Sno.NIL]), [sample, Sno.NIL])
        await conn.execute("CREATE TEMP TABLE v (k int PRIMARY KEY, id sno)")
        await conn.executemany("INSERT INTO v VALUES ($1, $2)",
                               [(k, i) for k, (i, *_) in enumerate(vectors)])
        agree_with_sql(
            "asyncpg", vectors,
            [r[0] for r in await conn.fetch("SELECT id FROM v ORDER BY k")],
            [tuple(r) for r in await conn.fetch(DECODE_SQL.format(table="v"))],
            [r[0] for r in await conn.fetch(SQL_ORDER_SQL.format(table="v"))])
    finally:
        await conn.close()


# The SQL edition (sno_sql.sno, a domain over uuid), installed beside the extension in the
# database "postgres" by t/060_orms.pl and configured with partition 7.

EDITION_PARTITION = 7
NATIVE_OF_EDITION_SQL = ("SELECT k, id, sno_sql.to_text(id), sno_sql.to_bytea(id)::sno::text,"
                         " sno_sql.to_bytea(id) FROM ev ORDER BY k")


def edition_psycopg(vectors):
    with psycopg.connect(dbname="postgres") as conn:
        (plain,) = conn.execute("SELECT sno_sql.from_text('brpk4q72xwf2m63l')").fetchone()
        check("edition, psycopg: unregistered, a sno_sql.sno result is a UUID for Sno.from_uuid",
              (plain, Sno.from_uuid(plain)),
              (UUID("4e6f2160-a0ff-9a0a-1033-000000000000"), Sno("brpk4q72xwf2m63l")))
        # Native sno registered on the connection, the edition on one cursor: both side by side.
        sno_postgres.psycopg.register(conn)
        cur = conn.cursor()
        sno_postgres.psycopg.register_edition(cur)
        ids = [i for i, *_ in vectors]
        check("edition, psycopg: sno_sql.from_text reads the vectors as Python does",
              [cur.execute("SELECT sno_sql.from_text(%s)", [text]).fetchone()[0]
               for _, text, _, _ in vectors], ids)
        made = [i for (i,) in cur.execute(
            "SELECT sno_sql.generate(3) FROM generate_series(1, 20)").fetchall()]
        check("edition, psycopg: sno_sql.generate's IDs come back as Sno, meta 3, partition 7",
              sorted({(type(i), i.meta, i.partition) for i in made}, key=str),
              [(Sno, 3, EDITION_PARTITION)])
        check("edition, psycopg: ... distinct and increasing", made, sorted(set(made)))
        cur.execute("CREATE TEMP TABLE ev (k int PRIMARY KEY, id sno_sql.sno NOT NULL)")
        cur.executemany("INSERT INTO ev VALUES (%s, %s)", list(enumerate(ids)))
        cur.executemany("INSERT INTO ev VALUES (%s, %b)",
                        [(len(ids) + k, i) for k, i in enumerate(made)])
        every = ids + made
        rows = cur.execute(NATIVE_OF_EDITION_SQL).fetchall()
        check("edition, psycopg: Sno parameters (%s, %b) stored and read back as the same Sno",
              [i for _, i, *_ in rows], every)
        check("edition, psycopg: the stored IDs are native sno's same IDs (text and bytes)",
              [(text, native, raw) for _, _, text, native, raw in rows],
              [(str(i), str(i), bytes(i)) for i in every])
        check("edition, psycopg: side by side, native sno and sno_sql.sno load as equal Sno",
              [a == b for a, b in cur.execute(
                  "SELECT id, sno_sql.to_bytea(id)::sno FROM ev ORDER BY k")], [True] * len(every))
        check("edition, psycopg: ORDER BY id is Python's order",
              [k for (k,) in cur.execute("SELECT k FROM ev ORDER BY id, k")],
              [k for _, k in sorted((i, k) for k, i in enumerate(every))])
        check("edition, psycopg: WHERE with a Sno, and = ANY of a list of Sno",
              cur.execute("SELECT array_agg(k ORDER BY k) FROM ev WHERE id = %s OR id = ANY(%s)",
                          [made[0], [ids[10], made[-1]]]).fetchone(),
              ([10, len(ids), len(every) - 1],))
        check("edition, psycopg: sno_sql.sno[] results in text and binary",
              [c.execute("SELECT array_agg(id ORDER BY k) FROM ev").fetchone()[0]
               for c in (cur, _edition_cursor(conn, binary=True))], [every, every])
        with cur.copy("COPY ev (k, id) FROM STDIN (FORMAT binary)") as copy:
            copy.set_types(["int4", "sno_sql.sno"])
            copy.write_row([1000, Sno("2222222222223xxx")])
        with cur.copy("COPY (SELECT k, id FROM ev WHERE k = 1000) TO STDOUT (FORMAT binary)") \
                as copy:
            copy.set_types(["int4", "sno_sql.sno"])
            copied = list(copy.rows())
        check("edition, psycopg: binary COPY in and out with Sno",
              (copied, cur.execute("SELECT sno_sql.to_text(id) FROM ev WHERE k = 1000").fetchone()),
              ([(1000, Sno("2222222222223xxx"))], ("2222222222223xxx",)))
        check("edition, psycopg: a real uuid read where uuids are Sno is a SnoError",
              error_of(lambda: cur.execute(
                  "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid").fetchone()),
              "SnoError: uuid a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 is not a sno (sno_sql.sno): "
              "its last 6 bytes must be zero, not 6bb9bd380a11")
        check("edition, psycopg: ... and a UUID on the connection, which has no edition loaders",
              conn.execute("SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid").fetchone(),
              (UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),))
        check("edition, psycopg: a sno's text compared with the column is refused (22P02)",
              [sqlstate_of(conn, "SELECT 1 FROM ev WHERE id = 'brpk4q72xwf2m63l'"),
               sqlstate_of(conn, "SELECT 1 FROM ev WHERE id = %s", ["brpk4q72xwf2m63l"])],
              ["22P02", "22P02"])
        conn.rollback()


def sqlstate_of(conn, query, params=None):
    """The SQLSTATE a query fails with (in a savepoint), or 'no error'."""
    try:
        with conn.transaction():
            conn.execute(query, params)
    except psycopg.Error as error:
        return error.sqlstate
    return "no error"


def _edition_cursor(conn, binary=False):
    cur = conn.cursor(binary=binary)
    sno_postgres.psycopg.register_edition(cur, load_uuids=False)
    return cur


async def edition_asyncpg():
    conn = await asyncpg.connect(database="postgres")
    try:
        value = await conn.fetchval("SELECT sno_sql.from_text('brpk4q72xwf2m63l')")
        check("edition, asyncpg: Sno.from_uuid reads its UUID, to_uuid is the parameter",
              (Sno.from_uuid(value), await conn.fetchval(
                  "SELECT sno_sql.to_text($1)", Sno("brpk4q72xwf2m63l").to_uuid())),
              (Sno("brpk4q72xwf2m63l"), "brpk4q72xwf2m63l"))
    finally:
        await conn.close()


def fresh_database(name):
    """A new database with sno, for an ORM that creates its own tables."""
    with psycopg.connect(dbname="postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    with psycopg.connect(dbname=name, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION sno")


# SQLAlchemy 2: the same checks through a sync Session, for the psycopg and asyncpg dialects.

def sqlalchemy_models():
    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = "items"
        id: Mapped[Sno] = mapped_column(SnoColumn, primary_key=True,
                                        server_default=func.sno_generate(1))
        n: Mapped[int]

    class Child(Base):
        __tablename__ = "children"
        id: Mapped[Sno] = mapped_column(SnoColumn, primary_key=True,
                                        server_default=func.sno_generate(2))
        item_id: Mapped[Sno] = mapped_column(ForeignKey("items.id"))
        item: Mapped[Item] = relationship()

    class Vector(Base):
        __tablename__ = "vectors"
        k: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
        id: Mapped[Sno] = mapped_column(SnoColumn)

    return Base, Item, Child, Vector


def sqlalchemy_checks(session, label, models, vectors):
    _, Item, Child, Vector = models
    sqlalchemy_keys_and_strings(session, label, Item)
    item = sqlalchemy_bulk_and_order(session, label, Item)
    sqlalchemy_time_window(session, label, Item)
    sqlalchemy_foreign_key(session, label, Item, Child, item)
    session.add_all([Vector(k=k, id=i) for k, (i, *_) in enumerate(vectors)])
    session.flush()
    session.expunge_all()
    agree_with_sql(
        label, vectors,
        session.scalars(select(Vector.id).order_by(Vector.k)).all(),
        session.execute(text(DECODE_SQL.format(table="vectors"))).all(),
        session.scalars(text(SQL_ORDER_SQL.format(table="vectors"))).all())
    session.rollback()


def sqlalchemy_keys_and_strings(session, label, Item):
    """The server's key back from a flush; lookups by ID, by its text, by a bad text."""
    item = Item(n=1)
    session.add(item)
    session.flush()
    made = item.id
    check(f"{label}: insert with the server default returns the ID as a Sno",
          (type(made), made.meta, made.partition), (Sno, 1, PARTITION))
    check(f"{label}: ... the ID the server stored",
          str(made), session.scalar(text("SELECT id::text FROM items WHERE n = 1")))
    session.expunge_all()
    check(f"{label}: get by ID", session.get(Item, made).n, 1)
    session.expunge_all()
    check(f"{label}: get by the ID's text", session.get(Item, str(made)).n, 1)
    bad = error_of(lambda: session.get(Item, BAD_TEXT))
    check(f"{label}: get by a bad text is an error before the query",
          (bad.split(":")[0], BAD_TEXT_REASON in bad), ("StatementError", True))
    check(f"{label}: a str compared with the column is read as an ID",
          session.scalars(select(Item.n).where(Item.id == str(made))).all(), [1])
    check(f"{label}: a str as a literal or cast of the Sno type (the workaround below)",
          session.scalars(select(Item.n).where(Item.id == literal(str(made), SnoColumn),
                                               Item.id == cast(str(made), SnoColumn))).all(), [1])
    # A string typed as String is sent as varchar by SQLAlchemy's PostgreSQL dialects: the
    # server refuses the comparison (there is no sno = varchar operator), never matches wrongly.
    # It aborts the transaction: the rollback drops the item.
    try:
        session.execute(select(Item.n).where(Item.id == literal(str(made), String))).all()
        as_varchar = "no error"
    except ProgrammingError as error:
        as_varchar = error.orig.sqlstate
    session.rollback()
    check(f"{label}: a String-typed literal is refused (42883), not matched", as_varchar, "42883")


def sqlalchemy_bulk_and_order(session, label, Item):
    """Items 1..8 through the unit of work and a bulk INSERT; returns item 1."""
    item = Item(n=1)
    session.add(item)
    bulk = [Item(n=n) for n in range(2, 7)]
    session.add_all(bulk)
    session.flush()
    ids = [i.id for i in bulk]
    check(f"{label}: bulk insert through the unit of work gets 5 IDs, in insert order",
          (len(set(ids)), sorted(ids)), (5, ids))
    core = session.scalars(insert(Item).returning(Item.id), [{"n": 7}, {"n": 8}]).all()
    check(f"{label}: bulk INSERT .. RETURNING gets 2 more, later ones",
          (len(core), sorted(core), core[0] > ids[-1]), (2, core, True))
    check(f"{label}: ORDER BY id is the insert order",
          session.scalars(select(Item.n).order_by(Item.id)).all(), [1, 2, 3, 4, 5, 6, 7, 8])
    loaded = session.scalars(select(Item.id).order_by(Item.id.desc())).all()
    check(f"{label}: ... and Python's order of the loaded IDs", sorted(loaded, reverse=True),
          loaded)
    return item


def sqlalchemy_time_window(session, label, Item):
    old = old_ids()
    session.add_all([Item(id=i, n=2020 + k) for k, i in enumerate(old)])
    session.flush()
    window = session.scalars(
        select(Item.id)
        .where(Item.id >= func.sno_min(JAN_2022, type_=SnoColumn),
               Item.id < func.sno_min(JAN_2023, type_=SnoColumn))
        .order_by(Item.id)).all()
    check(f"{label}: a time window with sno_min", window, old[2:4])
    window = session.scalars(
        select(Item.id).where(Item.id >= Sno.min(JAN_2022), Item.id < Sno.min(JAN_2023))
        .order_by(Item.id)).all()
    check(f"{label}: the same window with Sno.min", window, old[2:4])
    check(f"{label}: sno_min in SQL is Sno.min",
          session.scalar(select(func.sno_min(INSIDE_A_UNIT, type_=SnoColumn))),
          Sno.min(INSIDE_A_UNIT))


def sqlalchemy_foreign_key(session, label, Item, Child, item):
    child = Child(item=item)
    session.add(child)
    session.flush()
    session.expunge_all()
    joined = session.execute(select(Child.id, Item.id, Item.n).join(Child.item)).one()
    check(f"{label}: a foreign key to a sno key, joined", tuple(joined), (child.id, item.id, 1))
    check(f"{label}: ... the child's ID has meta 2", child.id.meta, 2)
    check(f"{label}: the foreign key by the parent's text",
          session.scalars(select(Child.id).where(Child.item_id == str(item.id))).all(),
          [child.id])
    session.commit()
    session.add(Child(item_id=Sno.from_parts(JAN_2021, 9, 9, 9)))
    try:
        session.flush()
        fk = "no error"
    except IntegrityError as error:
        fk = error.orig.sqlstate
    session.rollback()
    check(f"{label}: a child of no item is a foreign key violation (23503)", fk, "23503")


def sqlalchemy_url(driver, database):
    return (f"postgresql+{driver}://{os.environ['PGUSER']}@/{database}"
            f"?host={os.environ['PGHOST']}&port={os.environ['PGPORT']}")


def sqlalchemy_psycopg(vectors):
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    fresh_database("orm_sqlalchemy")
    models = sqlalchemy_models()
    engine = create_engine(sqlalchemy_url("psycopg", "orm_sqlalchemy"))
    models[0].metadata.create_all(engine)
    with engine.connect() as conn:
        check("SQLAlchemy: create_all makes sno columns with the server default",
              conn.exec_driver_sql(
                  "SELECT format_type(atttypid, atttypmod), pg_get_expr(adbin, adrelid)"
                  " FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum"
                  " WHERE attrelid = 'children'::regclass AND attnum > 0 ORDER BY attnum").all(),
              [("sno", "sno_generate(2)"), ("sno", None)])
    with Session(engine) as session:
        sqlalchemy_checks(session, "SQLAlchemy+psycopg", models, vectors)
    models[0].metadata.drop_all(engine)
    engine.dispose()


async def sqlalchemy_asyncpg(vectors):
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    models = sqlalchemy_models()
    engine = create_async_engine(sqlalchemy_url("asyncpg", "orm_sqlalchemy"))
    async with engine.begin() as conn:
        await conn.run_sync(models[0].metadata.create_all)
    async with AsyncSession(engine) as session:
        await session.run_sync(sqlalchemy_checks, "SQLAlchemy+asyncpg", models, vectors)
    await engine.dispose()


# Django: the models of snoapp, with migrations made and applied here.

def django_setup():
    import django
    from django.conf import settings

    app_dir = tempfile.mkdtemp(prefix="sno-django-")
    shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "snoapp"),
                    os.path.join(app_dir, "snoapp"))
    sys.path.insert(0, app_dir)
    fresh_database("orm_django")
    database = {"ENGINE": "django.db.backends.postgresql", "NAME": "orm_django",
                "HOST": os.environ["PGHOST"], "PORT": os.environ["PGPORT"],
                "USER": os.environ["PGUSER"]}
    # The same database through psycopg's server-side binding (parameters sent apart from the
    # SQL, as asyncpg does): Django's other way of using psycopg 3.
    settings.configure(
        INSTALLED_APPS=["snoapp"],
        DATABASES={"default": database, "server_side": {
            **database, "OPTIONS": {"server_side_binding": True}}},
        USE_TZ=True,
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()
    return app_dir


def django_migrations(app_dir):
    from django.core.management import call_command
    from django.db import connection

    call_command("makemigrations", "snoapp", verbosity=0)
    with open(os.path.join(app_dir, "snoapp", "migrations", "0001_initial.py")) as file:
        migration = file.read()
    check("Django: makemigrations writes the field and its server default",
          ("sno_postgres.django.SnoField(" in migration,
           "db_default=sno_postgres.django.SnoGenerate(1)" in migration), (True, True))
    call_command("migrate", "snoapp", verbosity=0)
    with connection.cursor() as cur:
        cur.execute(
            "SELECT attrelid::regclass::text, attname, format_type(atttypid, atttypmod),"
            " pg_get_expr(adbin, adrelid) FROM pg_attribute"
            " LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum"
            " WHERE attrelid IN ('snoapp_item'::regclass, 'snoapp_child'::regclass)"
            " AND atttypid = 'sno'::regtype ORDER BY 1, 2")
        check("Django: migrate makes sno columns, keys with sno_generate defaults",
              cur.fetchall(), [("snoapp_child", "id", "sno", "sno_generate(2)"),
                               ("snoapp_child", "item_id", "sno", None),
                               ("snoapp_item", "id", "sno", "sno_generate(1)")])


def django_checks(vectors):
    from snoapp.models import Child, Item, Vector

    item = django_keys_and_strings(Item)
    django_bulk_and_order(Item)
    django_time_window(Item)
    django_foreign_key(Child, item)
    django_text_forms(Item, item)
    django_vectors(Vector, vectors)


def django_keys_and_strings(Item):
    """The server's key back from create(); lookups by ID, its text, its bytes, a bad text."""
    from django.db import connection

    item = Item.objects.create(n=1)
    made = item.id
    check("Django: create with the server default gets the ID as a Sno",
          (type(made), made.meta, made.partition), (Sno, 1, PARTITION))
    with connection.cursor() as cur:
        cur.execute("SELECT id::text FROM snoapp_item WHERE n = 1")
        check("Django: ... the ID the server stored", cur.fetchone(), (str(made),))
    check("Django: get by ID", Item.objects.get(pk=made).n, 1)
    check("Django: get by the ID's text", Item.objects.get(pk=str(made)).n, 1)
    check("Django: get by the ID's bytes", Item.objects.get(pk=bytes(made)).n, 1)
    server_side = Item.objects.using("server_side")
    check("Django: ... the same with server-side binding (create, get, id__in by text)",
          (server_side.create(n=0).id.meta, server_side.get(pk=str(made)).n,
           server_side.filter(id__in=[str(made)]).count()), (1, 1, 1))
    server_side.filter(n=0).delete()
    bad = error_of(lambda: Item.objects.get(pk=BAD_TEXT))
    check("Django: get by a bad text is a ValidationError before the query",
          (bad.split(":")[0], BAD_TEXT_REASON in bad), ("ValidationError", True))
    return item


def django_bulk_and_order(Item):
    from sno_postgres.django import generate_ids

    # Django 5.2 takes a db_default primary key for a set one: bulk_create inserts the server's
    # IDs but leaves the objects without them. The workaround: generate_ids first.
    unset = Item.objects.bulk_create([Item(n=n) for n in range(2, 4)])
    check("Django: bulk_create leaves server-made keys off the objects (Django's limitation)",
          [type(i.id).__name__ for i in unset], ["DatabaseDefault", "DatabaseDefault"])
    Item.objects.filter(n__in=[2, 3]).delete()
    bulk = [Item(n=n) for n in range(2, 7)]
    for obj, new_id in zip(bulk, generate_ids(1, len(bulk))):
        obj.id = new_id
    Item.objects.bulk_create(bulk)
    ids = [i.id for i in bulk]
    check("Django: bulk_create with generate_ids: 5 server IDs, in insert order",
          (len(set(ids)), sorted(ids), [i.meta for i in ids]), (5, ids, [1] * 5))
    check("Django: ... stored as given",
          list(Item.objects.filter(n__gte=2).order_by("n").values_list("id", flat=True)), ids)
    check("Django: order_by('id') is the insert order",
          list(Item.objects.order_by("id").values_list("n", flat=True)), [1, 2, 3, 4, 5, 6])
    loaded = list(Item.objects.order_by("-id").values_list("id", flat=True))
    check("Django: ... and Python's order of the loaded IDs", sorted(loaded, reverse=True), loaded)


def django_time_window(Item):
    from django.db.models import Value

    from sno_postgres.django import SnoMin

    old = old_ids()
    Item.objects.bulk_create([Item(id=i, n=2020 + k) for k, i in enumerate(old)])
    window = Item.objects.filter(id__gte=SnoMin(Value(JAN_2022)), id__lt=SnoMin(Value(JAN_2023)))
    check("Django: a time window with SnoMin (sno_min)",
          list(window.order_by("id").values_list("id", flat=True)), old[2:4])
    window = Item.objects.filter(id__gte=Sno.min(JAN_2022), id__lt=Sno.min(JAN_2023))
    check("Django: the same window with Sno.min",
          list(window.order_by("id").values_list("id", flat=True)), old[2:4])
    check("Django: id__in with texts and a Sno",
          sorted(Item.objects.filter(id__in=[str(old[0]), old[4]]).values_list("n", flat=True)),
          [2020, 2024])


def django_foreign_key(Child, item):
    child = Child.objects.create(item=item)
    child.refresh_from_db()
    check("Django: a foreign key to a sno key", (child.item_id, child.id.meta), (item.id, 2))
    check("Django: ... followed with select_related",
          Child.objects.select_related("item").get(pk=child.pk).item.n, 1)
    check("Django: ... filtered by the parent's text",
          list(Child.objects.filter(item=str(item.id)).values_list("id", flat=True)), [child.id])
    fk = error_of(lambda: Child.objects.create(item_id=Sno.from_parts(JAN_2021, 9, 9, 9)))
    check("Django: a child of no item is an IntegrityError", fk.split(":")[0], "IntegrityError")


def django_text_forms(Item, item):
    """What the admin, forms and serializers see: the 16 characters."""
    from django.core import serializers

    field = Item._meta.pk
    text = str(item.id)
    check("Django: the admin's text form is the 16 characters",
          (field.value_to_string(item), field.formfield().clean(text)), (text, text))
    check("Django: serializers write the text",
          serializers.serialize("json", [item]).count(f'"pk": "{text}"'), 1)
    check("Django: a bad text in a form is a ValidationError",
          error_of(lambda: field.clean(BAD_TEXT, item)).split(":")[0], "ValidationError")


def django_vectors(Vector, vectors):
    from django.db import connection

    Vector.objects.bulk_create([Vector(k=k, id=i) for k, (i, *_) in enumerate(vectors)])
    with connection.cursor() as cur:
        cur.execute(DECODE_SQL.format(table="snoapp_vector"))
        decoded = cur.fetchall()
        cur.execute(SQL_ORDER_SQL.format(table="snoapp_vector"))
        sql_order = [k for (k,) in cur.fetchall()]
    agree_with_sql("Django", vectors,
                   list(Vector.objects.order_by("k").values_list("id", flat=True)),
                   decoded, sql_order)


def main():
    vectors = read_vectors(sys.argv[1])
    value_type(vectors)
    psycopg_adapter(vectors)
    asyncio.run(asyncpg_adapter(vectors))
    edition_psycopg(vectors)
    asyncio.run(edition_asyncpg())
    sqlalchemy_psycopg(vectors)
    asyncio.run(sqlalchemy_asyncpg(vectors))
    app_dir = django_setup()
    try:
        django_migrations(app_dir)
        django_checks(vectors)
    finally:
        shutil.rmtree(app_dir)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
