"""Core tables of our models, for bulk reads and writes without per-row ORM overhead."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Column, Dialect, Table, insert
from sqlalchemy.orm import Session

from ..storage.schema import Base, UTCDateTime

# PostgreSQL's types as SQLAlchemy writes them, and psycopg's names for them, for a binary
# COPY: seven times faster than one as text here, 100,000 rows in 0.4 s.
BINARY_TYPES = {
    "SMALLINT": "int2", "INTEGER": "int4", "BIGINT": "int8", "FLOAT": "float8",
    "DOUBLE PRECISION": "float8", "TEXT": "text", "VARCHAR": "varchar", "BOOLEAN": "bool",
    "DATE": "date", "TIMESTAMP WITH TIME ZONE": "timestamptz", "JSON": "json",
}  # fmt: skip


# SQLite's page cache while an import writes, in KiB (its default is 2 MiB): an import's
# writes to the review log's indexes are scattered over far more pages than that, which it
# would otherwise spill to the WAL and read back within the transaction.
IMPORT_PAGE_CACHE_KIB = 256 * 1024


@contextmanager
def large_page_cache(session: Session) -> Iterator[None]:
    """On SQLite, a page cache of IMPORT_PAGE_CACHE_KIB for the connection, for the block.
    It is one pragma on the driver's connection, restored even when the block fails."""
    connection = session.connection()
    if connection.dialect.name != "sqlite":
        yield
        return
    driver: Any = connection.connection.driver_connection
    (before,) = driver.execute("PRAGMA cache_size").fetchone()
    driver.execute(f"PRAGMA cache_size = {-IMPORT_PAGE_CACHE_KIB}")
    try:
        yield
    finally:
        driver.execute(f"PRAGMA cache_size = {int(before)}")


def table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


def insert_rows(
    session: Session, model: type[Base], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Rows (tuples of `columns`' values) inserted in the session's transaction, in one
    statement: an `executemany` on SQLite, a binary COPY on PostgreSQL (a Core insert there
    when a column's type is not one of BINARY_TYPES).

    An import writes 100,000 review log rows. Through Core, SQLAlchemy processes each row's
    parameters one by one (a third of an import's time), and psycopg's `executemany` sends one
    INSERT a row. Here each value still goes through its column's own bind processor, so what
    is stored is what Core would store; only the per-row bookkeeping is skipped.
    """
    target = table(model)
    chosen = [target.c[name] for name in columns]
    # Python-side defaults are Core's to apply: a column that has one must be given.
    missing = [c.name for c in target.columns if c.name not in columns and c.default is not None]
    if missing:
        raise ValueError(f"insert_rows into {target.name} needs {', '.join(missing)}")
    connection = session.connection()
    dialect = connection.dialect
    if dialect.name == "postgresql":
        types = [BINARY_TYPES.get(_base_name(c, dialect)) for c in chosen]
        if not all(types):
            # No COPY but in binary: as text, psycopg would write a JSON list as an array.
            dicts = [dict(zip(columns, row, strict=True)) for row in rows]
            if dicts:
                session.execute(insert(target), dicts)
            return
    # Every UTCDateTime column binds a value alike: one memory serves them all.
    times: dict[datetime, Any] = {}
    processors = [
        (i, _remembered(process, times) if isinstance(c.type, UTCDateTime) else process)
        for i, c in enumerate(chosen)
        if (process := c.type.bind_processor(dialect)) is not None
    ]
    if processors:
        values: Iterable[Sequence[Any]] = (_processed(row, processors) for row in rows)
    else:
        values = rows
    preparer = dialect.identifier_preparer
    names = ", ".join(preparer.quote(c.name) for c in chosen)
    into = preparer.format_table(target)
    if dialect.name == "postgresql":
        driver: Any = connection.connection.driver_connection
        statement = f"COPY {into} ({names}) FROM STDIN (FORMAT BINARY)"
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            copy.set_types(types)
            for row in values:
                copy.write_row(row)
        return
    batch = list(values)
    if batch:
        marks = ", ".join("?" * len(chosen))
        connection.exec_driver_sql(f"INSERT INTO {into} ({names}) VALUES ({marks})", batch)


def _base_name(column: Column[Any], dialect: Dialect) -> str:
    """The column's SQL type without its length: `VARCHAR(36)` is `VARCHAR`."""
    return str(column.type.compile(dialect=dialect)).split("(")[0].strip()


def _remembered(process: Callable[[Any], Any], done: dict[Any, Any]) -> Callable[[Any], Any]:
    """`process`, computed once per value: a replayed answer's times come back as the next
    answer's "before" times, and a card's first answer's time is in each of its rows."""

    def remembered(value: Any) -> Any:
        found = done.get(value)
        if found is None:
            found = done[value] = process(value)
        return found

    return remembered


def _processed(row: Sequence[Any], processors: list[tuple[int, Any]]) -> tuple[Any, ...]:
    out = list(row)
    for i, process in processors:
        value = out[i]
        if value is not None:
            out[i] = process(value)
    return tuple(out)
