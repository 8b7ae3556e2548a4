"""`flashcards db ...`: migrations."""

from __future__ import annotations

import click

from ..storage import migrate
from . import context


@click.group("db")
def db_group() -> None:
    """Create or change the database schema (Alembic migrations)."""


@db_group.command("upgrade")
@click.argument("revision", default="head")
def upgrade(revision: str) -> None:
    """Apply migrations up to REVISION (default: head)."""
    with context.open_engine() as engine:
        migrate.upgrade(engine, revision)
    click.echo(f"Database at {engine.url.render_as_string()} is at {revision}.")


@db_group.command("downgrade")
@click.argument("revision")
def downgrade(revision: str) -> None:
    """Undo migrations down to REVISION ('base' removes everything)."""
    with context.open_engine() as engine:
        migrate.downgrade(engine, revision)
    click.echo(f"Database downgraded to {revision}.")


@db_group.command("revision")
@click.option("-m", "--message", required=True, help="What the migration changes.")
def revision(message: str) -> None:
    """Write a new migration from the difference between the models and the database."""
    with context.open_engine() as engine:
        migrate.revision(engine, message)


COMMANDS = [db_group]
