"""Decks a person imported for themselves: only they see them, and only they delete them."""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.orm import Session

from ..errors import NotDeckOwner
from ..srs.subscriptions import find_visible_deck
from ..storage.models import Deck


def find_own_deck(session: Session, user_id: int, slug: str) -> Deck:
    """NotFound for a deck they cannot see; NotDeckOwner for a shipped or a team's deck."""
    deck = find_visible_deck(session, user_id, slug)
    if deck.owner_user_id != user_id:
        raise NotDeckOwner(
            "only a deck you imported yourself can be deleted; a team's deck by its leads"
        )
    return deck


def delete_own_deck(session: Session, user_id: int, slug: str) -> None:
    """Delete the deck with its cards, the person's progress and review history on it."""
    deck = find_own_deck(session, user_id, slug)
    # The cards, texts, subscription, states and logs go with it (ON DELETE CASCADE).
    session.execute(delete(Deck).where(Deck.id == deck.id))
    session.flush()
    session.expire_all()
