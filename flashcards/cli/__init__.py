"""The `flashcards` command: one entry point for the database, decks, users, packages and serving.

Each group lives in its own module; errors from the domain become one-line messages.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import click
from sqlalchemy.exc import SQLAlchemyError

from ..errors import FlashcardsError


class FlashcardsGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except FlashcardsError as exc:
            raise click.ClickException(exc.detail) from None
        except SQLAlchemyError as exc:
            cause = getattr(exc, "orig", None) or exc
            raise click.ClickException(
                f"database error: {str(cause).splitlines()[0]} "
                "(is the database reachable and migrated? try: flashcards db upgrade)"
            ) from None
        except OSError as exc:
            # A file that cannot be read or written (a full disk, a missing folder).
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None


@click.group(cls=FlashcardsGroup)
def main() -> None:
    """Flashcards: multilingual spaced repetition with FSRS."""


def _register() -> None:
    # Every module of this package that defines COMMANDS contributes them: adding a command
    # group is adding a module.
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            main.add_command(command)


_register()
