"""The health check's round trip, on the connection that answers use."""

from __future__ import annotations

from sqlalchemy import literal, select

from .rawsql import Executor, Statement

_PING = Statement(select(literal(1).label("one")))


def ping(db: Executor) -> None:
    """One round trip: raises the driver's error when the database cannot be reached."""
    db.first(_PING, {})
