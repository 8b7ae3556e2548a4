"""`flashcards decks ...`: deck files in and out of the database."""

from __future__ import annotations

from pathlib import Path

import click
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..decks.deckfile import (
    SLUG_RE,
    LocaleSource,
    load_decks,
    parse_locale_file,
    read_default_locale,
    read_text,
    render_locale_file,
)
from ..decks.locales import is_known_locale, unknown_locale_problem
from ..decks.quizfile import parse_quiz, quiz_to_locale, slugify
from ..decks.sync import sync_deck
from ..errors import DeckFileError
from ..storage.models import Card, Deck, DeckText
from . import context


def _cards(count: int) -> str:
    return f"{count} card" if count == 1 else f"{count} cards"


@click.group("decks")
def decks_group() -> None:
    """Deck files: import quizzes, sync `decks/` into the database, list decks."""


@decks_group.command("sync")
@click.argument("folder", default="decks", type=click.Path(path_type=Path))
def sync(folder: Path) -> None:
    """Load or update every deck under FOLDER in one transaction.

    Edited text is updated in place and review state kept; cards removed from a file are
    retired, never deleted. Any invalid file leaves the database unchanged.
    """
    sources = load_decks(folder)  # all files are parsed before anything is written
    if not sources:
        click.echo(f"No decks under {folder} (a deck is a folder with a deck.toml).")
        return
    now = context.now()
    with context.transaction() as session:
        reports = [sync_deck(session, source, now=now) for source in sources]
    for r in reports:
        status = "created" if r.created else ("updated" if r.changed else "unchanged")
        click.echo(
            f"{r.slug}: {status} (+{len(r.added)} added, {len(r.updated)} updated, "
            f"{len(r.retired)} retired, {len(r.restored)} restored)"
        )


@decks_group.command("list")
def list_decks() -> None:
    """Print every deck with its locales and card count."""
    with context.open_engine() as engine, Session(engine) as session:
        counts = dict(
            session.execute(
                select(Card.deck_id, func.count())
                .where(Card.retired_at.is_(None))
                .group_by(Card.deck_id)
            ).all()
        )
        rows = session.execute(
            select(Deck.id, Deck.slug, Deck.default_locale, DeckText.locale, DeckText.title)
            .join(DeckText)
            .order_by(Deck.slug, DeckText.locale)
        ).all()
    decks: dict[str, list[str]] = {}
    info: dict[str, tuple[int, str, str]] = {}
    for deck_id, slug, default, locale, title in rows:
        decks.setdefault(slug, []).append(locale)
        if locale == default:
            info[slug] = (counts.get(deck_id, 0), default, title)
    if not decks:
        click.echo("No decks. Add some with: flashcards decks sync decks")
    for slug, locales in decks.items():
        count, default, title = info.get(slug, (0, "", ""))
        click.echo(
            f"{slug}\t{_cards(count)}\tlocales: {', '.join(locales)} (default {default})\t{title}"
        )


@decks_group.command("import-quiz")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--locale", required=True, help="Language of the quiz, e.g. es or ko.")
@click.option("--deck", "slug", default=None, help="Deck slug (default: from the quiz title).")
@click.option("--decks-dir", default="decks", show_default=True, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing file for this locale.")
def import_quiz(file: Path, locale: str, slug: str | None, decks_dir: Path, force: bool) -> None:
    """Turn a quiz text (title, subtitle, numbered questions, answer marker) into a deck file.

    When the deck already has a file in another language, its card keys are reused question
    by question, so both languages become one card each.
    """
    if not is_known_locale(locale):
        raise click.BadParameter(unknown_locale_problem(locale), param_hint="--locale")
    if slug is not None and not SLUG_RE.match(slug):
        raise click.BadParameter(
            f"'{slug}' is not a deck slug (a-z, 0-9, '-' and '_')", param_hint="--deck"
        )
    quiz = parse_quiz(read_text(file), path=str(file))
    folder = decks_dir / (slug or slugify(quiz.title))
    target = folder / f"{locale}.deck"
    if target.exists() and not force:
        raise click.ClickException(f"{target} exists; use --force to overwrite it")
    keys = _existing_keys(folder, locale)
    source = quiz_to_locale(quiz, locale, keys, path=str(file))
    rendered = render_locale_file(source, f"Imported from {file.name}.")
    _check_round_trip(source, str(file))
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "deck.toml").exists():
        (folder / "deck.toml").write_text(f'default_locale = "{locale}"\n', encoding="utf-8")
    target.write_text(rendered, encoding="utf-8")
    click.echo(f"Wrote {target} ({_cards(len(source.cards))}).")


def _existing_keys(folder: Path, locale: str) -> list[str] | None:
    """The card keys of the deck's default-locale file, so that an imported translation (or
    a re-import) lands on the same cards; None for a new deck."""
    if not (folder / "deck.toml").exists():
        return None
    default = read_default_locale(folder)
    path = folder / f"{default}.deck"
    if not path.exists():
        return None
    try:
        source = parse_locale_file(read_text(path), locale=default, path=str(path))
    except DeckFileError:
        if default == locale:
            return None  # the broken file is the one being replaced (only with --force)
        raise
    return [card.key for card in source.cards]


def _check_round_trip(source: LocaleSource, path: str) -> None:
    """A quiz line that the deck format would read as something else (a question starting
    with '#' is a comment there) must be reported, not silently changed."""
    for card in source.cards:
        alone = LocaleSource(source.locale, "t", "", (card,))
        try:
            back = parse_locale_file(render_locale_file(alone), locale=source.locale).cards
        except DeckFileError as exc:
            raise DeckFileError(
                path, card.line, f"cannot be written as a deck card ({exc.problem})"
            ) from None
        if [(c.key, c.question, c.answer, c.explanation) for c in back] != [
            (card.key, card.question, card.answer, card.explanation)
        ]:
            raise DeckFileError(
                path, card.line, "cannot be written as a deck card (a line starts with '#')"
            )
    try:
        parse_locale_file(render_locale_file(source), locale=source.locale)
    except DeckFileError as exc:
        raise DeckFileError(path, 1, f"cannot be written as a deck file ({exc.problem})") from None


COMMANDS = [decks_group]
