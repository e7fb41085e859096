"""psycopg 3: ``Sno`` values as parameters and results of the ``sno`` type, in binary and text.

    from sno_postgres.psycopg import register
    register(conn)                  # once per connection; register_async for an AsyncConnection
    conn.execute("INSERT INTO t (id) VALUES (%s)", [Sno("brpk4q72xwf2m63l")])
    conn.execute("SELECT id FROM t").fetchone()     # (Sno('brpk4q72xwf2m63l'),)

``register`` looks the type up by name (its OID differs between databases), registers it (so
``sno[]`` arrays work too), a dumper for ``Sno`` (binary: the 10 bytes; text: the 16
characters) and loaders that make every ``sno`` result a ``Sno``, in text and binary results.
A ``str`` parameter needs none of this: psycopg sends it untyped and the server reads it as sno.

The SQL edition (``sno_sql.sno``, a domain over ``uuid`` holding the 10 bytes and 6 zero bytes)
has its own registration, ``register_edition`` (``register_edition_async``):

    from sno_postgres.psycopg import register_edition
    register_edition(conn)          # or a cursor: only that cursor's results and parameters
    conn.execute("INSERT INTO t (id) VALUES (%s)", [Sno("brpk4q72xwf2m63l")])
    conn.execute("SELECT id FROM t").fetchone()     # (Sno('brpk4q72xwf2m63l'),)

A ``Sno`` parameter is then sent as a ``sno_sql.sno`` value and ``sno_sql.sno[]`` results are
lists of ``Sno``. A ``sno_sql.sno`` column, though, comes back with the OID of its base type,
``uuid`` (the server reports a domain's base type in results), so no loader can tell it from a
``uuid`` column: with ``load_uuids=True`` (the default) every ``uuid`` result of the connection
or cursor is read as a ``Sno``, and one that is not a sno (its last 6 bytes not zero, which is
every RFC 9562 uuid but the nil one, by its version digit) raises ``SnoError`` instead of
becoming a wrong ID. Where a connection also reads real uuids, register on a cursor, or pass
``load_uuids=False`` and convert with ``Sno.from_uuid`` per column.
"""

from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from . import EDITION_TAIL, Sno, _from_edition_bytes

__all__ = ["register", "register_async", "register_edition", "register_edition_async"]


def _missing(name: str) -> LookupError:
    return LookupError(f"type {name!r} not found: run CREATE EXTENSION sno in this database")


def register(conn, name: str = "sno") -> None:
    """Registers sno on a ``psycopg.Connection`` (or a cursor, for that cursor only)."""
    info = TypeInfo.fetch(getattr(conn, "connection", conn), name)
    if info is None:
        raise _missing(name)
    register_info(info, conn)


async def register_async(conn, name: str = "sno") -> None:
    """Registers sno on a ``psycopg.AsyncConnection``."""
    info = await TypeInfo.fetch(conn, name)
    if info is None:
        raise _missing(name)
    register_info(info, conn)


def register_info(info: TypeInfo, context) -> None:
    """Registers sno, already looked up as ``info``, on any adapters context (a connection, a
    cursor, or ``psycopg.adapters`` for every new connection of one database)."""
    info.register(context)

    class SnoBinaryDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            return bytes(obj)

    class SnoTextDumper(Dumper):
        oid = info.oid

        def dump(self, obj):
            return str(obj).encode()

    adapters = context.adapters
    adapters.register_dumper(Sno, SnoTextDumper)
    adapters.register_dumper(Sno, SnoBinaryDumper)
    adapters.register_loader(info.oid, SnoTextLoader)
    adapters.register_loader(info.oid, SnoBinaryLoader)


class SnoTextLoader(Loader):
    def load(self, data):
        return Sno(bytes(data).decode())


class SnoBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data):
        return Sno(bytes(data))


# The SQL edition: sno_sql.sno, a domain over uuid.

EDITION_TYPE = "sno_sql.sno"


def _missing_edition() -> LookupError:
    return LookupError(
        f"type {EDITION_TYPE!r} not found: install sno's SQL edition in this database first"
    )


def register_edition(conn, load_uuids: bool = True) -> None:
    """Registers the SQL edition's ``sno_sql.sno`` on a ``psycopg.Connection`` or a cursor (for
    that cursor only): ``Sno`` parameters, ``sno_sql.sno[]`` results and, with ``load_uuids``,
    every ``uuid`` result as ``Sno`` (see the module's text)."""
    info = TypeInfo.fetch(getattr(conn, "connection", conn), EDITION_TYPE)
    if info is None:
        raise _missing_edition()
    register_edition_info(info, conn, load_uuids)


async def register_edition_async(conn, load_uuids: bool = True) -> None:
    """Registers the SQL edition's ``sno_sql.sno`` on a ``psycopg.AsyncConnection``."""
    info = await TypeInfo.fetch(conn, EDITION_TYPE)
    if info is None:
        raise _missing_edition()
    register_edition_info(info, conn, load_uuids)


def register_edition_info(info: TypeInfo, context, load_uuids: bool = True) -> None:
    """Registers ``sno_sql.sno``, already looked up as ``info``, on any adapters context."""
    # Registered under its qualified name ("sno_sql.sno", for COPY's set_types too), not the
    # bare "sno" TypeInfo.fetch gives it, which is native sno's.
    info.name = EDITION_TYPE
    info.register(context)

    class SnoEditionBinaryDumper(Dumper):
        format = Format.BINARY
        oid = info.oid

        def dump(self, obj):
            return bytes(obj) + EDITION_TAIL

    class SnoEditionTextDumper(Dumper):
        oid = info.oid

        def dump(self, obj):
            return str(obj.to_uuid()).encode()

    adapters = context.adapters
    adapters.register_dumper(Sno, SnoEditionTextDumper)
    adapters.register_dumper(Sno, SnoEditionBinaryDumper)
    # The domain's own OID appears in its arrays' elements and in COPY's set_types; its wire
    # forms are uuid's.
    oids = [info.oid]
    if load_uuids:
        oids.append(adapters.types["uuid"].oid)
    for oid in oids:
        adapters.register_loader(oid, SnoEditionTextLoader)
        adapters.register_loader(oid, SnoEditionBinaryLoader)


class SnoEditionTextLoader(Loader):
    def load(self, data):
        return Sno.from_uuid(bytes(data).decode())


class SnoEditionBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data):
        return Sno(_from_edition_bytes(bytes(data)))
