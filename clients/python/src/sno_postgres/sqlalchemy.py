"""SQLAlchemy 2: the column type ``Sno`` (values are ``sno_postgres.Sno``).

    from sqlalchemy import func
    from sno_postgres.sqlalchemy import Sno

    class Item(Base):
        __tablename__ = "items"
        id: Mapped[sno_postgres.Sno] = mapped_column(
            Sno, primary_key=True, server_default=func.sno_generate(1))

Parameters go as the 16 characters, untyped, so the server reads them as ``sno``; a ``str``
given for a ``Sno`` column is checked in Python first (a bad one raises ``SnoError``, wrapped
in SQLAlchemy's ``StatementError``, before anything is sent). Results become ``Sno`` from the
text or binary form, and from values a registered driver codec already made. Works with the
psycopg (3) and asyncpg dialects with no registration.
"""

from sqlalchemy.types import UserDefinedType

from . import Sno as SnoValue

__all__ = ["Sno", "SnoType"]


def _to_value(value):
    return None if value is None else SnoValue(value)


class SnoType(UserDefinedType):
    """The ``sno`` column type."""

    cache_ok = True

    def get_col_spec(self, **kw):
        return "sno"

    @property
    def python_type(self):
        return SnoValue

    def bind_processor(self, dialect):
        def process(value):
            return None if value is None else str(SnoValue(value))

        return process

    def literal_processor(self, dialect):
        def process(value):
            return f"'{SnoValue(value)}'"

        return process

    def result_processor(self, dialect, coltype):
        return _to_value


Sno = SnoType
