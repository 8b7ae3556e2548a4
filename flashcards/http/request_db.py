"""The request's database, for the web pages and the API: its session, which only reads
unless the code that owns the transaction declares a write, and the hot paths' connection.

A request reads by default: on SQLite its transactions begin deferred, take no write lock
and block no writer. A view that writes says so where it owns the transaction, with
`@writes` (the whole view), `begin_writing()` (from a point on: after a slow check that
only reads, or a rate limit's own reservation) or `with write_transaction()` (a short write
inside a request that otherwise reads). From then on the request's session begins its
transactions with SQLite's write lock (`storage.engine.writer`), so a read that turns into
a write never fails on a snapshot another writer outdated.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec, TypeVar

from flask import Flask, current_app, g
from sqlalchemy import Engine, event
from sqlalchemy.orm import Session

from ..hot_sql.kept_connections import KeptConnections
from ..hot_sql.rawsql import DirectConnection
from ..storage.engine import make_engine, writer

P = ParamSpec("P")
R = TypeVar("R")
# Connections one worker thread may hold at once: the hot paths' kept connection and the
# request's session, and a rate limit's reservation (its own short transaction) beside them.
CONNECTIONS_PER_THREAD = 3


def init_app(app: Flask) -> None:
    threads = int(app.config.get("THREADS", 1))
    engine = make_engine(
        app.config["DATABASE_URL"],
        sqlite_synchronous=app.config["SQLITE_SYNCHRONOUS"],
        # Sized from the worker's threads (`serve --threads`), so that no thread waits for a
        # connection another holds: the pool keeps two per thread and opens a third on need.
        pool_size=max(5, 2 * threads),
        max_overflow=max(10, (CONNECTIONS_PER_THREAD - 2) * threads),
    )
    app.extensions["flashcards.engine"] = engine
    app.extensions["flashcards.writer"] = writer(engine)
    kept = app.extensions["flashcards.direct"] = KeptConnections(engine)
    # Kept connections are checked out of the pool: close them when the pool goes, or the app.
    event.listen(engine, "engine_disposed", lambda _engine: kept.close_all())
    weakref.finalize(app, kept.close_all)
    app.teardown_appcontext(close_request_db)


def engine() -> Engine:
    e: Engine = current_app.extensions["flashcards.engine"]
    return e


def writing_engine() -> Engine:
    """The engine whose transactions take SQLite's write lock at BEGIN."""
    e: Engine = current_app.extensions["flashcards.writer"]
    return e


def db() -> Session:
    """The request's session, opened on first use; it reads unless the request declared a
    write (see the module's docstring). The view commits; teardown closes it."""
    session: Session | None = g.get("db_session")
    if session is None:
        bind = writing_engine() if g.get("db_writes", False) else engine()
        session = g.db_session = Session(bind, expire_on_commit=False)
    return session


def is_writing() -> bool:
    return bool(g.get("db_writes", False))


def begin_writing() -> Session:
    """From here on the request writes: its session's transactions take SQLite's write lock.

    A read already open is ended first (it wrote nothing), so that the next statement begins
    a write transaction. The caller commits what it means to keep; what it leaves
    uncommitted is rolled back when the request ends. Returns the request's session.
    """
    if is_writing():
        return db()
    g.db_writes = True
    session: Session | None = g.get("db_session")
    if session is None:
        return db()
    session.rollback()
    session.bind = writing_engine()
    return session


def writes(view: Callable[P, R]) -> Callable[P, R]:
    """Declares that a view writes: its whole request is one write unit of work (see
    `begin_writing`). Put it right under the route, above checks that read (sign-in)."""

    @wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        begin_writing()
        return view(*args, **kwargs)

    return wrapped


@contextmanager
def write_transaction() -> Iterator[Session]:
    """A short write inside a request that reads: the request's session, writing for the
    block, committed at its end (rolled back on an error), reading again after it.

    Inside a request already writing it joins that unit of work: nothing is committed here,
    the view's own commit keeps it.
    """
    if is_writing():
        yield db()
        return
    session = begin_writing()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        g.db_writes = False
        session.bind = engine()


def direct() -> DirectConnection:
    """The thread's DBAPI connection for the hot paths (see `rawsql`), kept between requests.

    Outside its `write()` blocks it holds no transaction, so it can sit beside `db()`.
    """
    connection: DirectConnection | None = g.get("db_direct")
    if connection is None:
        kept: KeptConnections = current_app.extensions["flashcards.direct"]
        connection = g.db_direct = kept.acquire()
    return connection


def close_request_db(_exc: BaseException | None) -> None:
    session: Session | None = g.pop("db_session", None)
    if session is not None:
        session.close()
    g.pop("db_writes", None)
    connection: DirectConnection | None = g.pop("db_direct", None)
    if connection is not None:
        current_app.extensions["flashcards.direct"].release(connection)
