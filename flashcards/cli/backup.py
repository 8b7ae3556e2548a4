"""`flashcards backup FILE` and `flashcards restore FILE`."""

from __future__ import annotations

from pathlib import Path

import click

from ..storage import backup as backups
from . import context


@click.command("backup")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def backup(file: Path, force: bool) -> None:
    """Write every table of the database to FILE (gzip'd JSON lines with a SHA-256)."""
    if file.exists() and not force:
        raise click.ClickException(f"{file} exists; use --force to overwrite it")
    with context.open_engine() as engine:
        counts = backups.backup(engine, file)
    click.echo(f"Backed up {sum(counts.values())} rows from {len(counts)} tables to {file}.")


@click.command("restore")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def restore(file: Path) -> None:
    """Load FILE into an empty, migrated database (run `flashcards db upgrade` first)."""
    with context.open_engine() as engine:
        counts = backups.restore(engine, file)
    click.echo(f"Restored {sum(counts.values())} rows into {len(counts)} tables from {file}.")


COMMANDS = [backup, restore]
