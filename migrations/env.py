"""Alembic environment: the URL and connection come from the app's own configuration."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from flashcards.storage.engine import make_engine
from flashcards.storage.models import User  # noqa: F401  (registers every model on Base.metadata)
from flashcards.storage.schema import Base

config = context.config
target_metadata = Base.metadata


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run(connection)
else:
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as conn:
        run(conn)
    engine.dispose()
