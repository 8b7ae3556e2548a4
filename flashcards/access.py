"""Who may see what: the one place deck visibility is decided."""

from __future__ import annotations

from sqlalchemy import ColumnElement, or_

from .models import Deck


def visible_decks(user_id: int) -> ColumnElement[bool]:
    """Shipped decks (no owner) and the user's own decks."""
    return or_(Deck.owner_user_id.is_(None), Deck.owner_user_id == user_id)
