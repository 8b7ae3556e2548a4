"""Test factories: plain functions taking a session, flushing but never committing.

They build rows the way the service does (accounts.create_user, subscriptions.subscribe,
study.answer) so that tests exercise real code paths; `make_deck` and `set_state` write rows
directly because deck files and arbitrary review states are not what those tests are about.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fsrs import Rating, State
from sqlalchemy import select
from sqlalchemy.orm import Session

from flashcards.people import accounts
from flashcards.srs import study, subscriptions
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    DeckText,
    FsrsParameterSet,
    ReviewState,
    SchedulerSettings,
    Subscription,
    User,
)

from .conftest import T0

PASSWORD = "correct horse"
_emails = itertools.count(1)


def make_user(
    session: Session,
    email: str | None = None,
    *,
    now: datetime = T0,
    timezone: str = "UTC",
    day_start_hour: int = 4,
    locale: str = "en",
    **scheduler: Any,
) -> int:
    """A user with default scheduler settings, overridden by `scheduler` (column names)."""
    address = email or f"user{next(_emails)}@example.com"
    user = accounts.create_user(
        session, address, PASSWORD, now=now, locale=locale, timezone=timezone
    )
    user.day_start_hour = day_start_hour
    settings = session.get(SchedulerSettings, user.id)
    assert settings is not None
    for name, value in scheduler.items():
        setattr(settings, name, value)
    session.flush()
    return user.id


def make_token(session: Session, user_id: int, *, now: datetime = T0) -> str:
    return accounts.issue_token(session, user_id, now=now)


def make_deck(
    session: Session,
    slug: str,
    cards: int = 5,
    *,
    owner_user_id: int | None = None,
    locales: Sequence[str] = ("en",),
    now: datetime = T0,
) -> Deck:
    """A deck whose cards have keys c01, c02... at positions 1, 2... in every locale."""
    deck = Deck(slug=slug, default_locale=locales[0], owner_user_id=owner_user_id, created_at=now)
    session.add(deck)
    session.flush()
    for locale in locales:
        session.add(DeckText(deck_id=deck.id, locale=locale, title=f"{slug} ({locale})"))
    for position in range(1, cards + 1):
        card = Card(deck_id=deck.id, key=f"c{position:02d}", position=position, created_at=now)
        session.add(card)
        session.flush()
        for locale in locales:
            session.add(
                CardText(
                    card_id=card.id,
                    locale=locale,
                    question=f"{slug} q{position} {locale}",
                    answer=f"{slug} a{position} {locale}",
                )
            )
    session.flush()
    return deck


def card_ids(session: Session, deck_id: int) -> list[int]:
    return list(
        session.scalars(select(Card.id).where(Card.deck_id == deck_id).order_by(Card.position))
    )


def subscribe(
    session: Session,
    user_id: int,
    deck: Deck,
    locale: str | None = None,
    *,
    now: datetime = T0,
    **overrides: Any,
) -> Subscription:
    sub = subscriptions.subscribe(session, user_id, deck, locale, now=now)
    for name, value in overrides.items():
        setattr(sub, name, value)
    session.flush()
    return sub


def answer(
    session: Session,
    user_id: int,
    card_id: int,
    rating: Rating | int | str,
    *,
    now: datetime,
    review_id: str | None = None,
    reviewed_at: datetime | None = None,
) -> study.AnswerResult:
    """Answer as the person would: studying the card's deck (subscribed, as the answer needs)."""
    studied = select(Subscription.deck_id).join(Card, Card.deck_id == Subscription.deck_id)
    if session.scalar(studied.where(Card.id == card_id, Subscription.user_id == user_id)) is None:
        deck = session.scalars(select(Deck).join(Card).where(Card.id == card_id)).one_or_none()
        if deck is not None:
            subscriptions.subscribe(session, user_id, deck, None, now=now)
    return study.answer(
        session,
        user_id,
        card_id,
        study.parse_rating(rating) if not isinstance(rating, Rating) else rating,
        review_id or str(uuid.uuid4()),
        now=now,
        reviewed_at=reviewed_at,
    )


def set_state(
    session: Session,
    user_id: int,
    card_id: int,
    *,
    state: State,
    due: datetime,
    introduced_at: datetime = T0,
    stability: float = 5.0,
    difficulty: float = 5.0,
    last_review: datetime | None = None,
    reps: int = 1,
) -> None:
    """Put a card straight into a given review state (for queue tests)."""
    deck_id = session.scalar(select(Card.deck_id).where(Card.id == card_id))
    assert deck_id is not None
    session.add(
        ReviewState(
            user_id=user_id,
            card_id=card_id,
            deck_id=deck_id,
            state=int(state),
            step=0 if state != State.Review else None,
            stability=stability,
            difficulty=difficulty,
            due=due,
            last_review=last_review or introduced_at,
            reps=reps,
            lapses=0,
            introduced_at=introduced_at,
            version=1,
        )
    )
    session.flush()


def user_day_start(session: Session, user_id: int) -> tuple[str, int]:
    row = session.execute(
        select(User.timezone, User.day_start_hour).where(User.id == user_id)
    ).one()
    return row.timezone, row.day_start_hour


def make_parameter_set(
    session: Session,
    user_id: int,
    parameters: Sequence[float],
    created_at: datetime,
    *,
    end_log_id: int | None = None,
) -> FsrsParameterSet:
    """An adopted FSRS parameter set with plausible scores (not the scheduler's parameters:
    set those on the person's SchedulerSettings where a test needs them in force)."""
    fitted = FsrsParameterSet(
        user_id=user_id,
        parameters=list(parameters),
        created_at=created_at,
        answers=500,
        cards=60,
        log_loss=0.3,
        rmse_bins=0.05,
        previous_log_loss=0.4,
        previous_rmse_bins=0.06,
        default_log_loss=0.4,
        default_rmse_bins=0.06,
        adopted=True,
        history_end_log_id=end_log_id,
    )
    session.add(fitted)
    return fitted
