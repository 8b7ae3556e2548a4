"""Core tables of our models, for bulk reads and writes without per-row ORM overhead."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.orm import Session

from ..storage.schema import Base, UTCDateTime


def table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


def insert_rows(
    session: Session, model: type[Base], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """Rows (tuples of `columns`' values) inserted in the session's transaction, in one
    statement: an `executemany` on SQLite, a COPY on PostgreSQL.

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
    processors = [
        (i, _remembered(process) if isinstance(c.type, UTCDateTime) else process)
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
        with driver.cursor() as cursor, cursor.copy(f"COPY {into} ({names}) FROM STDIN") as copy:
            for row in values:
                copy.write_row(row)
        return
    batch = list(values)
    if batch:
        marks = ", ".join("?" * len(chosen))
        connection.exec_driver_sql(f"INSERT INTO {into} ({names}) VALUES ({marks})", batch)


def _remembered(process: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`process`, computed once per value: a replayed answer's times come back as the next
    answer's "before" times, and a card's first answer's time is in each of its rows."""
    done: dict[Any, Any] = {}

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
