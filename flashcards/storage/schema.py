"""The declarative base every model derives from, and the column types it maps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import DateTime, Dialect, MetaData
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import TypeDecorator

# Ids are INTEGER columns (32-bit on PostgreSQL): a larger id names nothing, and sending it
# to the database fails with "integer out of range" instead of finding no row.
MAX_ID = 2**31 - 1

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("naive datetime given where an aware UTC datetime is required")
    return value.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in Python on every database.

    SQLite keeps no offset, so values are stored as naive UTC there and made aware again on
    the way out; PostgreSQL stores `timestamptz`.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], Any] | None:
        if dialect.name != "sqlite":
            if self.impl_instance.dialect_impl(dialect).bind_processor(dialect) is not None:
                return super().bind_processor(dialect)

            # The driver takes aware datetimes as they are: one call instead of
            # TypeDecorator's three per value (a hot-path answer binds eight).
            def aware(value: datetime | None) -> datetime | None:
                return None if value is None else as_utc(value)

            return aware

        # The text SQLAlchemy's SQLite DATETIME writes ("2026-11-30 01:46:22.434111"), in one
        # step instead of two: a hot-path answer binds eight of these.
        def process(value: datetime | None) -> str | None:
            if value is None:
                return None
            return as_utc(value).replace(tzinfo=None).isoformat(" ", "microseconds")

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UTCDateTime}
