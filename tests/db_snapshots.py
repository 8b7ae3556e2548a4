"""A slow set-up that many tests share, built once per kind of database in a process.

A simulated learner's months of answers go through `study.answer` one by one, so that their
log is the one the service writes: on PostgreSQL, thousands of round trips for each test that
needs them. `built_once` runs such a set-up through the service the first time; a later test
that starts from the same database (every table's row count the same) gets the rows it left,
and the sequences' positions, copied in instead, and the set-up's return value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, delete, func, insert, select, text

from flashcards.storage.schema import Base

T = TypeVar("T")


@dataclass(frozen=True)
class Snapshot:
    before: dict[str, int]  # each table's row count the set-up started from
    rows: dict[str, list[dict[str, Any]]]
    sequences: list[tuple[str, int | None, bool]]  # PostgreSQL's: name, last value, called
    result: Any


_BUILT: dict[tuple[str, Hashable], Snapshot] = {}


def built_once(engine: Engine, key: Hashable, build: Callable[[], T]) -> T:
    """`build()`'s result, and the rows it writes: made by `build` the first time in this
    process for this kind of database, copied in later from a database in the same state."""
    found = _BUILT.get((engine.dialect.name, key))
    with engine.connect() as conn:
        before = _counts(conn)
    if found is not None and found.before == before:
        with engine.begin() as conn:
            _restore(conn, found)
        return found.result  # type: ignore[no-any-return]
    result = build()
    with engine.connect() as conn:
        _BUILT[(engine.dialect.name, key)] = Snapshot(
            before,
            {t.name: [dict(r) for r in conn.execute(select(t)).mappings()] for t in _tables()},
            _sequences(conn),
            result,
        )
    return result


def _tables() -> list[Any]:
    return list(Base.metadata.sorted_tables)  # parents first


def _counts(conn: Connection) -> dict[str, int]:
    return {t.name: conn.scalar(select(func.count()).select_from(t)) or 0 for t in _tables()}


def _sequences(conn: Connection) -> list[tuple[str, int | None, bool]]:
    if conn.dialect.name != "postgresql":
        return []  # SQLite takes its next ids from the rows (and sqlite_sequence) as inserted
    return [
        (name, last, last is not None)
        for name, last in conn.execute(
            text(
                "SELECT sequencename, last_value FROM pg_sequences"
                " WHERE schemaname = current_schema()"
            )
        )
    ]


def _restore(conn: Connection, snapshot: Snapshot) -> None:
    for table in reversed(_tables()):  # children first
        conn.execute(delete(table))
    for table in _tables():
        if snapshot.rows[table.name]:
            conn.execute(insert(table), snapshot.rows[table.name])
    for name, last, called in snapshot.sequences:
        conn.execute(
            text("SELECT setval(CAST(:name AS regclass), :value, :called)"),
            {"name": f'"{name}"', "value": last if last is not None else 1, "called": called},
        )
