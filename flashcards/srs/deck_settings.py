"""Per-deck overrides of a person's scheduler settings, kept on their subscription; no Flask.

A NULL column means "use my own setting"; the queue and the scheduler already read them
through `state_rows.config_from` and the queue's plans.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.orm import Session

from ..errors import NotFound
from ..storage.models import Subscription
from .settings import validate_settings

DECK_FIELDS = ("desired_retention", "new_per_day", "reviews_per_day", "maximum_interval")


def deck_overrides(session: Session, user_id: int, deck_id: int) -> dict[str, object] | None:
    """The subscription's overrides (None values: not overridden); None if not subscribed."""
    sub = session.get(Subscription, (user_id, deck_id))
    if sub is None:
        return None
    return {name: getattr(sub, name) for name in DECK_FIELDS}


def set_deck_overrides(
    session: Session, user_id: int, deck_id: int, values: Mapping[str, object]
) -> None:
    """Validate (InvalidInput names the field) and store; None clears an override."""
    clean = validate_settings(values, allowed=DECK_FIELDS, nullable=True)
    sub = session.get(Subscription, (user_id, deck_id))
    if sub is None:
        raise NotFound("you are not subscribed to this deck")
    for name, value in clean.items():
        setattr(sub, name, value)
    session.flush()
