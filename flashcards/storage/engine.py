"""The engine for a database URL, with SQLite's pragmas and its write lock taken at BEGIN
for the transactions that write; and what an unreachable database looks like."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session

from .sqlite_writers import (
    SQLITE_AUTOCHECKPOINT_PAGES,
    close_writer_gate,
    enter_writer_gate,
    leave_writer_gate,
    writer_gate_path,
)

# SQLite's result codes that say "not now" (another writer past the timeout, the file out of
# reach or the disk full), unlike SQLITE_ERROR (a missing table, bad SQL): a bug, not a wait.
SQLITE_UNAVAILABLE = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_CANTOPEN",
    "SQLITE_IOERR",
    "SQLITE_FULL",
)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database is out of reach or too busy right now (refused or
    dropped connection, a restart, SQLite's lock held past the timeout): worth a retry."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    if not isinstance(exc, OperationalError):
        return False
    # psycopg's OperationalErrors are all of this kind; a missing table is a ProgrammingError.
    name = getattr(exc.orig, "sqlite_errorname", None)
    return name is None or name.startswith(SQLITE_UNAVAILABLE)


def make_engine(url: str, *, sqlite_synchronous: str = "NORMAL", **kwargs: Any) -> Engine:
    if not is_sqlite(url):
        # Recycling instead of a ping before every checkout: the ping is a round trip on
        # every request. After a database restart the first request of a process finds its
        # connection gone: it gets a 503 with Retry-After, and the whole pool is renewed.
        kwargs.setdefault("pool_recycle", 1800)
        # psycopg prepares statements of its own after five runs, and once it has some, a
        # ROLLBACK makes it send DEALLOCATE ALL, which would also drop the statements `libpq`
        # prepared for the hot paths. Those are the ones worth preparing; the rest is not hot.
        kwargs["connect_args"] = {"prepare_threshold": None, **kwargs.get("connect_args", {})}
        return create_engine(url, **kwargs)

    # Pooled: closing the last connection to a WAL database checkpoints and removes the WAL,
    # so a connection per request would pay for that (and the pragmas) every time. Idle
    # pooled connections hold no lock: pysqlite's own transaction handling is off.
    engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)
    gate = writer_gate_path(url)

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, record: Any) -> None:
        # Kept on the connection for the direct executor (rawsql), which has no engine events.
        record.info["writer_gate"] = gate
        # Take transaction control from pysqlite so that BEGIN is ours to issue (see on_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute(f"PRAGMA synchronous={sqlite_synchronous}")
        cursor.execute(f"PRAGMA wal_autocheckpoint={SQLITE_AUTOCHECKPOINT_PAGES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(conn: Any) -> None:
        # A write transaction takes the write lock up front: a deferred transaction that reads
        # and then writes fails with SQLITE_BUSY instead of waiting when another writer won.
        immediate = conn.get_execution_options().get("sqlite_immediate", False)
        if immediate and gate is not None:
            enter_writer_gate(conn.connection.info, gate)
        # Straight to the driver: this runs twice per answer, and the statement machinery
        # (events, result objects) would cost more than the BEGIN itself.
        conn.connection.driver_connection.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")

    @event.listens_for(engine, "checkin")
    def on_checkin(_dbapi_connection: Any, record: Any) -> None:
        leave_writer_gate(record.info)

    @event.listens_for(engine, "close")
    def on_close(_dbapi_connection: Any, record: Any) -> None:
        close_writer_gate(record.info)

    return engine


def writer(engine: Engine) -> Engine:
    """The engine to bind a session to when the transaction will write: on SQLite its BEGIN
    takes the write lock (after queueing for it), elsewhere it is the engine itself."""
    return engine.execution_options(sqlite_immediate=True)


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """One write transaction: commit on success, roll back on any error."""
    with Session(writer(engine), expire_on_commit=False) as session, session.begin():
        yield session
