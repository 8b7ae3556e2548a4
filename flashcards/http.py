"""Flask glue shared by the JSON API and the HTML views: the request's database session."""

from __future__ import annotations

from datetime import datetime

from flask import Flask, current_app, g, request
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from .db import make_engine, transaction, writer
from .teams import assignments

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def init_app(app: Flask) -> None:
    engine = make_engine(
        app.config["DATABASE_URL"], sqlite_synchronous=app.config["SQLITE_SYNCHRONOUS"]
    )
    app.extensions["flashcards.engine"] = engine
    app.extensions["flashcards.writer"] = writer(engine)
    app.teardown_appcontext(_close_session)


def engine() -> Engine:
    e: Engine = current_app.extensions["flashcards.engine"]
    return e


def writing_engine() -> Engine:
    """The engine whose transactions take SQLite's write lock at BEGIN."""
    e: Engine = current_app.extensions["flashcards.writer"]
    return e


def db() -> Session:
    """The request's session, opened on first use; the view commits, teardown closes."""
    session: Session | None = g.get("_db_session")
    if session is None:
        bind = writing_engine() if request.method in WRITE_METHODS else engine()
        session = Session(bind, expire_on_commit=False)
        g._db_session = session
    return session


def reader() -> Session:
    """A session for reads that takes no write lock, even during a write request.

    Authentication and the reads before an answer use it, so that on SQLite the write lock
    is held only while writing.
    """
    if request.method not in WRITE_METHODS:
        return db()
    session: Session | None = g.get("_db_reader")
    if session is None:
        session = Session(engine(), expire_on_commit=False)
        g._db_reader = session
    return session


def _close_session(_exc: BaseException | None) -> None:
    for name in ("_db_session", "_db_reader"):
        session: Session | None = g.pop(name, None)
        if session is not None:
            session.close()


def refresh_pacing(user_id: int, now: datetime) -> None:
    """Bring team pacing (the paced new-card allowance) up to date before showing the queue.

    It changes at most once a study day, so the common case writes nothing. A read-only
    request must not upgrade its transaction to a write on SQLite (a stale snapshot fails
    at once instead of waiting), so a change is written in a write transaction of its own.
    """
    session = db()
    if not assignments.refresh_pacing(session, user_id, now=now):
        return
    if request.method in WRITE_METHODS:
        return  # flushed into the request's own write transaction
    session.rollback()
    with transaction(engine()) as writing:
        assignments.refresh_pacing(writing, user_id, now=now)
