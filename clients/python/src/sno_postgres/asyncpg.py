"""asyncpg: ``Sno`` values as parameters and results of the ``sno`` type, in binary.

    from sno_postgres.asyncpg import register
    await register(conn)            # once per connection: Pool(init=register) for a pool
    await conn.execute("INSERT INTO t (id) VALUES ($1)", Sno("brpk4q72xwf2m63l"))
    await conn.fetchval("SELECT id FROM t")          # Sno('brpk4q72xwf2m63l')

The codec is the 10 bytes both ways, so ``copy_records_to_table`` and ``sno[]`` arrays work. As
a parameter it takes a ``Sno``, its text (checked in Python: a bad one raises ``SnoError``
before the query is sent) or its 10 bytes.
"""

from . import Sno

__all__ = ["register"]


def _encode(value) -> bytes:
    return bytes(Sno(value))


async def register(conn, name: str = "sno") -> None:
    """Registers the codec on an ``asyncpg.Connection``, in the schema the type is in."""
    schema = await conn.fetchval(
        "SELECT n.nspname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
        " WHERE t.oid = to_regtype($1)",
        name,
    )
    if schema is None:
        raise LookupError(f"type {name!r} not found: run CREATE EXTENSION sno in this database")
    await conn.set_type_codec(
        name, schema=schema, format="binary", encoder=_encode, decoder=Sno.from_bytes
    )
