"""What every command needs: the app's configuration and its engine."""

from __future__ import annotations

from datetime import datetime

from flask import Flask
from sqlalchemy import Engine

from ..db import utcnow


def app() -> Flask:
    from .. import create_app

    return create_app()


def engine() -> Engine:
    e: Engine = app().extensions["flashcards.engine"]
    return e


def now() -> datetime:
    return utcnow()
