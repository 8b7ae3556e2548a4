"""Decks a person made for themselves, imported from an .apkg or made on the web: only they
see them, and only they edit and delete them. Editing goes through `card_editing`, as a
team deck's does, so their progress is kept."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..errors import DeckTitleTaken, InvalidInput, NotDeckOwner, NotFound
from ..people import media_folder
from ..srs.subscriptions import find_visible_deck, subscribe
from ..storage.models import Deck, DeckText
from ..teams.roles import clean_text
from . import card_editing, media_refs
from .card_pages import card_texts
from .deck_tree import SEPARATOR, anki_name, name_key, path_of
from .deckfile import MAX_TITLE, DeckSource, LocaleSource
from .locales import check_locale
from .sync import SyncReport, sync_deck

MAX_LOCALES = 10


def find_own_deck(session: Session, user_id: int, slug: str) -> Deck:
    """NotFound for a deck they cannot see; NotDeckOwner for a shipped or a team's deck."""
    deck = find_visible_deck(session, user_id, slug)
    if deck.owner_user_id != user_id:
        raise NotDeckOwner(
            "only a deck you made or imported yourself can be changed here; a team's deck "
            "by its leads"
        )
    return deck


def delete_own_deck(session: Session, user_id: int, slug: str) -> None:
    """Delete the deck with its cards, the person's progress and review history on it."""
    deck = find_own_deck(session, user_id, slug)
    # The cards, texts, subscription, states and logs go with it (ON DELETE CASCADE).
    session.execute(delete(Deck).where(Deck.id == deck.id))
    session.flush()
    session.expire_all()


def create_own_deck(
    session: Session,
    user_id: int,
    *,
    title: str,
    locales: list[str],
    now: datetime,
    from_device: bool = False,
) -> Deck:
    """A new, empty deck of the person's, in `locales` (the first is its default language),
    which they study at once; a title they have already is refused (`DeckTitleTaken`), but
    for a deck an Anki device made (`from_device`), whose name is the device's to choose.
    Two made at once may take the same slug: the caller retries."""
    title = _clean_title(title)
    if not from_device and any(
        name_key(text.title) == name_key(title) for text in _own_texts(session, user_id)
    ):
        raise DeckTitleTaken(f"you already have a deck titled '{title}'", field="title")
    if not locales:
        raise InvalidInput("a deck needs a language", field="locales")
    if len(locales) > MAX_LOCALES:
        raise InvalidInput(f"a deck has at most {MAX_LOCALES} languages", field="locales")
    codes = list(dict.fromkeys(check_locale(code, field="locales") for code in locales))
    slug = card_editing.unique_slug(session, f"user{user_id}-", title)
    source = DeckSource(slug, codes[0], {code: LocaleSource(code, title, "", ()) for code in codes})
    sync_deck(session, source, now=now, owner_user_id=user_id)
    deck = find_own_deck(session, user_id, slug)
    subscribe(session, user_id, deck, None, now=now)
    return deck


def rename_own_deck(
    session: Session,
    user_id: int,
    slug: str,
    *,
    title: str,
    locale: str | None = None,
    from_device: bool = False,
) -> Deck:
    """The deck's title in one of its languages (its default without one). "::" in it makes
    it a subdeck in Anki, as in a name imported from there; the person's own subdecks under
    it move with it ("Training::Notes" becomes "ML::Notes"), as Anki renames them, and a
    title they have already is refused (`DeckTitleTaken`). A name from an Anki device
    (`from_device`) is taken as it is: the device sends each subdeck's new name itself, and
    its names are its own to choose. Its slug, and so its address, stays."""
    deck = find_own_deck(session, user_id, slug)
    title = _clean_title(title)
    locale = locale or deck.default_locale
    texts = {t.deck_id: t for t in _own_texts(session, user_id, locale)}
    text = texts.get(deck.id)
    if text is None:
        raise InvalidInput(f"the deck has no text in '{locale}'", field="locale")
    old, new = path_of(text.title), path_of(title)
    renamed = {deck.id: title}
    if old != new and not from_device:
        for other in texts.values():
            path = path_of(other.title)
            if other.deck_id != deck.id and len(path) > len(old) and path[: len(old)] == old:
                renamed[other.deck_id] = _clean_title(SEPARATOR.join(new + path[len(old) :]))
        kept = {name_key(t.title) for d, t in texts.items() if d not in renamed}
        if any(name_key(t) in kept for t in renamed.values()):
            raise DeckTitleTaken(f"you already have a deck titled '{title}'", field="title")
    for deck_id, new_title in renamed.items():
        texts[deck_id].title = new_title
    return deck


def _own_texts(session: Session, user_id: int, locale: str | None = None) -> list[DeckText]:
    """The titles of the person's own decks (in `locale`, if given)."""
    query = (
        select(DeckText)
        .join(Deck, Deck.id == DeckText.deck_id)
        .where(Deck.owner_user_id == user_id)
    )
    if locale is not None:
        query = query.where(DeckText.locale == locale)
    return list(session.scalars(query))


def _clean_title(title: str) -> str:
    """The title as Anki would name the deck (`deck_tree.anki_name`)."""
    if "\x00" in title:
        raise InvalidInput("a NUL character is not text", field="title")
    name = anki_name(clean_text(title, field="title", max_length=MAX_TITLE))
    if not name:
        raise InvalidInput("a title needs a name, not only '::'", field="title")
    return name


def add_card(
    session: Session,
    user_id: int,
    slug: str,
    *,
    question: str,
    answer: str,
    explanation: str,
    tags: list[str] | None,
    now: datetime,
) -> list[str]:
    """A new card in the deck's default language, or a Cloze text's cards
    (`card_editing.add_cards`); their keys."""
    deck = find_own_deck(session, user_id, slug)
    return card_editing.add_cards(
        session, deck, question=question, answer=answer, explanation=explanation, tags=tags,
        now=now,
    )  # fmt: skip


def cloze_text(session: Session, user_id: int, slug: str, key: str) -> card_editing.ClozeText:
    """The Cloze text a card of the person's deck was made from
    (`card_editing.find_cloze_text`)."""
    return card_editing.find_cloze_text(session, find_own_deck(session, user_id, slug), key)


def edit_cloze(
    session: Session,
    user_id: int,
    slug: str,
    key: str,
    *,
    text: str,
    extra: str,
    tags: list[str] | None = None,
    now: datetime,
) -> card_editing.ClozeSaved:
    """The Cloze text of a card and its siblings changed as a whole (`card_editing.edit_cloze`)."""
    deck = find_own_deck(session, user_id, slug)
    return card_editing.edit_cloze(session, deck, key, text=text, extra=extra, tags=tags, now=now)


def edit_card(
    session: Session,
    user_id: int,
    slug: str,
    key: str,
    *,
    locale: str | None,
    question: str | None,
    answer: str | None,
    explanation: str | None,
    tags: list[str] | None,
    now: datetime,
) -> SyncReport:
    """Change a card's text in one language (its default without one), and its tags; what
    is not given stays. NotFound for a card the deck does not have."""
    deck = find_own_deck(session, user_id, slug)
    return card_editing.set_card(
        session,
        deck,
        key,
        locale=locale or deck.default_locale,
        question=question,
        answer=answer,
        explanation=explanation,
        tags=tags,
        now=now,
        create=False,
    )


def add_media(
    session: Session,
    user_id: int,
    slug: str,
    key: str,
    *,
    locale: str,
    side: str,
    name: str,
    data: bytes,
    quota_mb: int,
    now: datetime,
) -> str:
    """A picture or sound added to the end of the card's question or answer (`side`) in one
    language: the file into the person's media folder (`media_folder.add_file`), its token
    (`media_refs`) on a line of its own. The name the file has there. `InvalidMediaName` for
    a name the folder refuses, `NotShownMediaType` for a file the pages would not show,
    `MediaQuotaExceeded`, NotFound for no such card."""
    if side not in ("question", "answer"):
        raise InvalidInput("add a file to the question or the answer", field="side")
    kind = media_refs.shown_kind(name)
    deck = find_own_deck(session, user_id, slug)
    card = card_texts(session, deck.id, key)
    text = card.texts.get(locale) if card is not None else None
    if text is None:
        raise NotFound(f"no card '{key}' in this deck in '{locale}'")
    stored = media_folder.add_file(session, user_id, name, data, quota_mb=quota_mb, now=now)
    current = text.question if side == "question" else text.answer
    added = f"{current}\n{media_refs.token(kind, stored)}".strip()
    edit_card(
        session, user_id, slug, key, locale=locale, question=added if side == "question" else None,
        answer=added if side == "answer" else None, explanation=None, tags=None, now=now,
    )  # fmt: skip
    return stored


def retire_card(session: Session, user_id: int, slug: str, key: str, *, now: datetime) -> None:
    card_editing.retire_card(session, find_own_deck(session, user_id, slug), key, now=now)
