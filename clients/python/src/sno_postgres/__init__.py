"""sno IDs in Python: the value type of the PostgreSQL extension's ``sno`` type.

An ID is 10 bytes, big-endian: 39 bits of 4 ms units since 2010-01-01 UTC and a tick-tock bit,
a metabyte, a 16-bit partition and a 16-bit sequence (SPEC.md in the repository). Its text form
is 16 characters of an ordered base32, so text order, byte order and time order agree.

>>> id = Sno("brpk4q72xwf2m63l")
>>> bytes(id).hex(), id.meta, id.partition, id.sequence
('4e6f2160a0ff9a0a1033', 255, 39434, 4147)
>>> Sno(bytes.fromhex("4e6f2160a0ff9a0a1033")) == id
True

The adapters for the libraries live in submodules, each importing its library only when used:
``sno_postgres.psycopg``, ``sno_postgres.asyncpg``, ``sno_postgres.sqlalchemy`` and
``sno_postgres.django``.

The SQL edition of sno (``sno_sql``, for managed services that load no extension library)
stores an ID in a ``sno_sql.sno`` column, a domain over ``uuid``: the 10 bytes and 6 zero bytes.
Drivers return it as a uuid; ``Sno.from_uuid`` and ``Sno.to_uuid`` convert, so an ID is the
same ``Sno`` in either form:

>>> Sno.from_uuid(UUID("4e6f2160-a0ff-9a0a-1033-000000000000"))
Sno('brpk4q72xwf2m63l')
>>> Sno("brpk4q72xwf2m63l").to_uuid()
UUID('4e6f2160-a0ff-9a0a-1033-000000000000')
"""

from datetime import datetime, timedelta, timezone
from functools import total_ordering
from typing import NamedTuple, Union
from uuid import UUID

__all__ = ["Sno", "SnoError", "Parts"]

ALPHABET = "23456789abcdefghijklmnopqrstuvwx"
_VALUES = {c: i for i, c in enumerate(ALPHABET)}
_VALUES.update({c.upper(): i for c, i in _VALUES.items() if c.isalpha()})

EPOCH = datetime(2010, 1, 1, tzinfo=timezone.utc)
EPOCH_UNIX_MS = 1_262_304_000_000
UNIT = timedelta(milliseconds=4)
MAX_UNITS = 2**39 - 1
# The SQL edition's uuid: the 10 bytes of the ID, then these 6.
EDITION_TAIL = bytes(6)


class SnoError(ValueError):
    """A value that is not a sno ID, or a part out of its range."""


class Parts(NamedTuple):
    """The parts of an ID, as ``sno_decode`` has them in SQL."""

    time: datetime
    tick_tock: int
    meta: int
    partition: int
    sequence: int


def _units(at: datetime) -> int:
    """The 4 ms unit containing ``at`` (floored, as SQL's sno_min does)."""
    if not isinstance(at, datetime):
        raise SnoError(f"a time must be a datetime, not {type(at).__name__}")
    if at.tzinfo is None:
        raise SnoError(f"a naive datetime ({at.isoformat()}) has no time zone: give it one")
    units = (at - EPOCH) // UNIT
    if not 0 <= units <= MAX_UNITS:
        raise SnoError(
            f"time {at.isoformat()} is outside 2010-01-01 .. 2079-09-07 15:47:35.548 UTC"
        )
    return units


def _check_range(name: str, value: int, bits: int) -> int:
    if not isinstance(value, int) or not 0 <= value < 2**bits:
        raise SnoError(f"{name} {value!r} is out of range 0..{2**bits - 1}")
    return value


@total_ordering
class Sno:
    """A sno ID: immutable, hashable, ordered as its bytes (time, then tick-tock, meta,
    partition, sequence).

    ``Sno(value)`` takes the 16-character text (upper case too), 10 bytes (``bytes``,
    ``bytearray``, ``memoryview``) or another ``Sno``; anything else raises ``SnoError`` (a
    ``ValueError``) that says what was wrong. ``str(id)`` is the text, ``bytes(id)`` the bytes.
    """

    __slots__ = ("_raw",)
    SIZE = 10

    def __init__(self, value: Union["Sno", str, bytes, bytearray, memoryview]):
        if isinstance(value, Sno):
            raw = value._raw
        elif isinstance(value, str):
            raw = _decode(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            raw = bytes(value)
            if len(raw) != Sno.SIZE:
                raise SnoError(f"a sno is {Sno.SIZE} bytes, not {len(raw)}")
        else:
            raise SnoError(f"a sno is made from str or bytes, not {type(value).__name__}")
        object.__setattr__(self, "_raw", raw)

    def __setattr__(self, name, value):
        raise AttributeError("Sno is immutable")

    @classmethod
    def parse(cls, text: str) -> "Sno":
        """The ID of a 16-character text."""
        if not isinstance(text, str):
            raise SnoError(f"a sno's text is a str, not {type(text).__name__}")
        return cls(text)

    @classmethod
    def from_bytes(cls, raw: Union[bytes, bytearray, memoryview]) -> "Sno":
        """The ID of its 10 bytes."""
        if not isinstance(raw, (bytes, bytearray, memoryview)):
            raise SnoError(f"a sno's bytes are bytes, not {type(raw).__name__}")
        return cls(raw)

    @classmethod
    def from_uuid(cls, value: Union[UUID, str]) -> "Sno":
        """The ID of a value of the SQL edition's ``sno_sql.sno`` type, as drivers return it: a
        ``uuid.UUID`` (psycopg, asyncpg) or its text. Its first 10 bytes are the ID; a uuid
        whose last 6 bytes are not zero is not an edition value and raises ``SnoError``."""
        if isinstance(value, UUID):
            raw = value.bytes
        elif isinstance(value, str):
            try:
                raw = UUID(value).bytes
            except ValueError:
                raise SnoError(f"invalid uuid {value!r}: not the text of a uuid") from None
        else:
            raise SnoError(f"a sno_sql.sno value is a uuid.UUID or str, not {type(value).__name__}")
        return cls(_from_edition_bytes(raw))

    def to_uuid(self) -> UUID:
        """The ID as a value of the SQL edition's ``sno_sql.sno`` type: a ``uuid.UUID`` of the
        10 bytes and 6 zero bytes, what to send for a ``sno_sql.sno`` parameter."""
        return UUID(bytes=self._raw + EDITION_TAIL)

    @classmethod
    def from_parts(
        cls, at: datetime, meta: int = 0, partition: int = 0, sequence: int = 0, tick_tock: int = 0
    ) -> "Sno":
        """The ID of these parts, as SQL's ``sno_from_parts``."""
        time = _units(at) << 1 | _check_range("tick_tock", tick_tock, 1)
        raw = (
            time.to_bytes(5, "big")
            + bytes([_check_range("meta", meta, 8)])
            + _check_range("partition", partition, 16).to_bytes(2, "big")
            + _check_range("sequence", sequence, 16).to_bytes(2, "big")
        )
        return cls(raw)

    @classmethod
    def min(cls, at: datetime) -> "Sno":
        """The smallest ID of the 4 ms unit containing ``at``: SQL's ``sno_min``."""
        return cls((_units(at) << 1).to_bytes(5, "big") + bytes(5))

    @classmethod
    def max(cls, at: datetime) -> "Sno":
        """The largest ID of the 4 ms unit containing ``at``: SQL's ``sno_max``."""
        return cls((_units(at) << 1 | 1).to_bytes(5, "big") + b"\xff" * 5)

    def __bytes__(self) -> bytes:
        return self._raw

    def __str__(self) -> str:
        number = int.from_bytes(self._raw, "big")
        return "".join(ALPHABET[(number >> (75 - 5 * i)) & 31] for i in range(16))

    def __repr__(self) -> str:
        return f"Sno('{self}')"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sno):
            return NotImplemented
        return self._raw == other._raw

    def __lt__(self, other) -> bool:
        if not isinstance(other, Sno):
            return NotImplemented
        return self._raw < other._raw

    def __hash__(self) -> int:
        return hash(self._raw)

    def __reduce__(self):
        return (Sno, (self._raw,))

    @property
    def unix_ms(self) -> int:
        """The start of the ID's 4 ms unit, in Unix milliseconds."""
        return EPOCH_UNIX_MS + 4 * (int.from_bytes(self._raw[:5], "big") >> 1)

    @property
    def time(self) -> datetime:
        """The start of the ID's 4 ms unit, in UTC: SQL's ``sno_time``."""
        return EPOCH + UNIT * (int.from_bytes(self._raw[:5], "big") >> 1)

    @property
    def tick_tock(self) -> int:
        return self._raw[4] & 1

    @property
    def meta(self) -> int:
        return self._raw[5]

    @property
    def partition(self) -> int:
        return int.from_bytes(self._raw[6:8], "big")

    @property
    def sequence(self) -> int:
        return int.from_bytes(self._raw[8:10], "big")

    def parts(self) -> Parts:
        """All parts, as SQL's ``sno_decode``."""
        return Parts(self.time, self.tick_tock, self.meta, self.partition, self.sequence)


def _from_edition_bytes(raw: bytes) -> bytes:
    """The ID of the 16 bytes of a sno_sql.sno value, checked: the last 6 must be zero."""
    if len(raw) != 16:
        raise SnoError(f"a sno_sql.sno value is a uuid, 16 bytes, not {len(raw)}")
    if raw[Sno.SIZE:] != EDITION_TAIL:
        raise SnoError(
            f"uuid {UUID(bytes=raw)} is not a sno (sno_sql.sno): its last 6 bytes must be zero, "
            f"not {raw[Sno.SIZE:].hex()}"
        )
    return raw[: Sno.SIZE]


def _decode(text: str) -> bytes:
    if len(text) != 16:
        raise SnoError(f"invalid sno {text!r}: {len(text)} characters, expected 16")
    number = 0
    for position, char in enumerate(text, 1):
        value = _VALUES.get(char)
        if value is None:
            raise SnoError(
                f"invalid sno {text!r}: character {char!r} at position {position} is not one of "
                f"{ALPHABET}"
            )
        number = number << 5 | value
    return number.to_bytes(Sno.SIZE, "big")


Sno.NIL = Sno(bytes(Sno.SIZE))
Sno.MAX = Sno(b"\xff" * Sno.SIZE)
