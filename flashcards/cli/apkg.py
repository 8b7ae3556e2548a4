"""`flashcards apkg ...`: Anki packages out of and into the database."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..anki import import_package
from ..anki.importer import DEFAULT_MAX_BYTES, DEFAULT_MAX_NOTES
from ..anki_sync.adopted_export import export_any_deck
from ..errors import NotFound
from ..srs.subscriptions import subscribe
from ..storage.engine import transaction
from ..storage.models import Deck, User
from . import context

# Below this many notes a bar would only flicker.
PROGRESS_THRESHOLD = 500


def _user_id(session: Session, email: str | None) -> int | None:
    if email is None:
        return None
    user_id = session.scalar(select(User.id).where(User.email == email.strip().lower()))
    if user_id is None:
        raise NotFound(f"no user with the email {email}")
    return user_id


class _Progress:
    """A click progress bar that appears only once the work turns out to be large."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total < PROGRESS_THRESHOLD:
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)


@contextmanager
def _progress(label: str) -> Iterator[_Progress]:
    progress = _Progress(label)
    try:
        yield progress
    finally:
        if progress.bar is not None:
            progress.bar.__exit__(None, None, None)


@click.group("apkg")
def apkg_group() -> None:
    """Anki packages: export a deck (optionally with progress), import an .apkg."""


@apkg_group.command("export")
@click.argument("deck")
@click.option("--locale", default=None, help="Export one language (default: the deck's).")
@click.option("--all-locales", is_flag=True, help="Every language, one subdeck each.")
@click.option("--user", "email", default=None, help="Whose progress to include (an email).")
@click.option("--with-scheduling", is_flag=True, help="Include the user's review state and log.")
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
    help="The .apkg file to write.",
)  # fmt: skip
def export_cmd(
    deck: str,
    locale: str | None,
    all_locales: bool,
    email: str | None,
    with_scheduling: bool,
    output: Path,
) -> None:
    """Write DECK (its slug) as an Anki package that Anki imports with File > Import."""
    if locale and all_locales:
        raise click.UsageError("use either --locale or --all-locales")
    if with_scheduling and email is None:
        raise click.UsageError("--with-scheduling needs --user EMAIL")
    with (
        context.open_engine() as engine,
        transaction(engine) as session,
        _progress("Exporting") as progress,
    ):
        found = session.scalar(select(Deck).where(Deck.slug == deck))
        if found is None:
            raise NotFound(f"no deck '{deck}' (see: flashcards decks list)")
        locales = None if all_locales else [locale or found.default_locale]
        package = export_any_deck(
            session,
            found.id,
            locales=locales,
            user_id=_user_id(session, email),
            with_scheduling=with_scheduling,
            now=context.now(),
            progress=progress,
        )
    try:
        output.write_bytes(package.data)
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror}") from None
    extra = f", {package.reviews} reviews" if with_scheduling else ""
    click.echo(f"Wrote {output} ({package.notes} notes{extra}).")


@apkg_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--deck", "slug", default=None, help="Slug of the new deck (default: from its name).")
@click.option("--user", "email", default=None, help="Owner of the new deck (default: shared).")
@click.option("--locale", default=None, help="Language of the notes (default: the owner's).")
@click.option("--with-scheduling", is_flag=True, help="Keep Anki's progress, for --user.")
@click.option("--max-notes", default=DEFAULT_MAX_NOTES, show_default=True, type=click.IntRange(1))
@click.option(
    "--max-mib", default=DEFAULT_MAX_BYTES >> 20, show_default=True, type=click.IntRange(1)
)
def import_cmd(
    file: Path,
    slug: str | None,
    email: str | None,
    locale: str | None,
    with_scheduling: bool,
    max_notes: int,
    max_mib: int,
) -> None:
    """Create a deck from an Anki package (.apkg, old or new format), in one transaction:
    without --slug, one for each of its Anki decks (subdecks keep their names)."""
    if with_scheduling and email is None:
        raise click.UsageError("--with-scheduling needs --user EMAIL")
    with (
        context.open_engine() as engine,
        transaction(engine) as session,
        _progress("Importing") as progress,
    ):
        owner = _user_id(session, email)
        # A person's deck keeps its images and sounds, in their media folder.
        quota = int(context.app().config["MEDIA_QUOTA_MB"]) if owner is not None else None
        report = import_package(
            session,
            file,
            owner_user_id=owner,
            slug=slug,
            locale=locale,
            with_scheduling=with_scheduling,
            now=context.now(),
            max_notes=max_notes,
            max_bytes=max_mib << 20,
            progress=progress,
            media_quota_mb=quota,
        )
        if owner is not None:
            # The owner imported it to study it: their deck list shows it straight away.
            for imported in report.decks:
                deck = session.get(Deck, imported.deck_id)
                if deck is not None:
                    subscribe(session, owner, deck, None, now=context.now())
    reviews = f", {report.review_logs} reviews" if with_scheduling else ""
    slugs = ", ".join(f"'{d.slug}'" for d in report.decks[:5])
    if len(report.decks) > 5:
        slugs += f" and {len(report.decks) - 5} more"
    into = "the new deck" if len(report.decks) == 1 else f"{len(report.decks)} new decks:"
    click.echo(
        f"Imported {report.cards} cards ({report.texts} texts{reviews}) into {into} {slugs}."
    )
    for message in report.messages:
        click.echo(f"Note: {message}")


COMMANDS = [apkg_group]
