"""psycopg 3: ``Sno`` values as parameters and results of the ``sno`` type, in binary and text.

    from sno_postgres.psycopg import register
    register(conn)                  # once per connection; register_async for an AsyncConnection
    conn.execute("INSERT INTO t (id) VALUES (%s)", [Sno("brpk4q72xwf2m63l")])
    conn.execute("SELECT id FROM t").fetchone()     # (Sno('brpk4q72xwf2m63l'),)

``register`` looks the type up by name (its OID differs between databases), registers it (so
``sno[]`` arrays work too), a dumper for ``Sno`` (binary: the 10 bytes; text: the 16
characters) and loaders that make every ``sno`` result a ``Sno``, in text and binary results.
A ``str`` parameter needs none of this: psycopg sends it untyped and the server reads it as sno.
"""

from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from . import Sno

__all__ = ["register", "register_async"]


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
