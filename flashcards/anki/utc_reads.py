"""Timestamps read in bulk: the export's hundred thousand review times, quickly.

`UTCDateTime` makes each value aware in two Python calls and a `datetime.replace` with a
keyword, which costs about ten times SQLite's parse itself; on a deck's whole log that was
the largest part of reading it. `utc(column)` reads a `UTCDateTime` column as the same aware
UTC datetimes in one call a value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Dialect, Table, type_coerce

from ..storage.schema import UTCDateTime


def _from_sqlite(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        # Stored naive (in UTC): the offset parsed along, no second step.
        return datetime.fromisoformat(value + "+00:00")
    except ValueError:
        # A text with an offset of its own, which UTCDateTime never writes.
        return datetime.fromisoformat(value).astimezone(UTC)


def _from_driver(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


class UTCDateTimeRead(UTCDateTime):
    """`UTCDateTime`, with its values read in one call each (written as it writes them)."""

    cache_ok = True

    def result_processor(
        self, dialect: Dialect, coltype: object
    ) -> Callable[[Any], datetime | None] | None:
        if dialect.name == "sqlite":
            return _from_sqlite
        if self.impl_instance.dialect_impl(dialect).result_processor(dialect, coltype):
            return super().result_processor(dialect, coltype)  # a driver's strings: as ever
        return _from_driver


def utc(column: ColumnElement[datetime]) -> ColumnElement[datetime]:
    """A `UTCDateTime` column read as `UTCDateTimeRead`, under its own name."""
    return type_coerce(column, UTCDateTimeRead()).label(column.key)


def columns(table: Table, names: Iterable[str]) -> list[ColumnElement[Any]]:
    """The named columns of `table` for a select, its timestamps read by `utc`."""
    return [
        utc(table.c[name]) if isinstance(table.c[name].type, UTCDateTime) else table.c[name]
        for name in names
    ]
