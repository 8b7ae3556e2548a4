"""What every command needs: the app's configuration and its engine."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from flask import Flask
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from ..storage import engine as storage_engine
from ..storage.schema import utcnow


def app() -> Flask:
    from .. import create_app

    return create_app()


def engine() -> Engine:
    e: Engine = app().extensions["flashcards.engine"]
    return e


@contextmanager
def open_engine() -> Iterator[Engine]:
    """The configured engine, disposed when the command ends.

    A pooled PostgreSQL connection must not outlive the command.
    """
    e = engine()
    try:
        yield e
    finally:
        e.dispose()


@contextmanager
def transaction() -> Iterator[Session]:
    """One write transaction on the configured database, for a command's whole work."""
    with open_engine() as e, storage_engine.transaction(e) as session:
        yield session


def now() -> datetime:
    return utcnow()
