"""A device's renames of the person's own decks (`applyChanges`), taken as a rename on the
web (`own_decks.rename_own_deck`) in the language they study the deck in. No Flask.

Only their own decks: a shipped or a team's deck is everyone's, and a person often files
decks under parents of their own in Anki ("Work::…"), which is no reason to rename the
team's deck for its members; such a name stays on the device, as Anki's own does for a
shared deck.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy.orm import Session

from ..anki.export import anki_deck_name
from ..decks import own_decks
from ..errors import FlashcardsError
from ..storage.models import Deck, DeckText, Subscription
from . import ids, snapshot


def rename(
    session: Session, user_id: int, decks: Iterable[dict[str, Any]], sent: set[int]
) -> list[int]:
    """Each deck of the person's own that the device renamed gets the name as its title; the
    Anki ids of those renamed. `sent`: the decks this sync sends the device, changed here
    since its last sync: ours is kept, and goes again next time (as a note's text)."""
    renamed: list[int] = []
    again: list[tuple[int, int]] = []
    for entry in decks:
        anki_id, name = entry["id"], entry.get("name")
        deck_id = ids.deck_of(anki_id)
        deck = None if deck_id is None else session.get(Deck, deck_id)
        if deck is None or deck.owner_user_id != user_id or not isinstance(name, str):
            continue
        text = _shown_text(session, user_id, deck)
        if text is None or name == anki_deck_name(text.title, deck.slug):
            continue
        if anki_id in sent:
            again.append((snapshot.DECK, anki_id))
            continue
        try:
            own_decks.rename_own_deck(
                session, user_id, deck.slug, title=name, locale=text.locale, from_device=True
            )
        except FlashcardsError:
            again.append((snapshot.DECK, anki_id))  # a name the web refuses: ours goes back
            continue
        renamed.append(anki_id)
    snapshot.forget(session, user_id, again)
    return renamed


def _shown_text(session: Session, user_id: int, deck: Deck) -> DeckText | None:
    """The title a sync gives the deck: in the language they study it in, else its own."""
    subscription = session.get(Subscription, (user_id, deck.id))
    if subscription is None:
        return None  # not theirs on the device
    return session.get(DeckText, (deck.id, subscription.locale)) or session.get(
        DeckText, (deck.id, deck.default_locale)
    )
