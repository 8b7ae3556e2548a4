"""One card's history for the person who studies it: every answer, oldest first, with the
state, interval and memory state it left. Shared by the browser's page and the API. No Flask."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..storage.models import ReviewLog
from .browse import STATES, StateName
from .cards import seen_card


@dataclass(frozen=True)
class Answer:
    reviewed_at: datetime
    rating: int  # 1 again, 2 hard, 3 good, 4 easy
    state: StateName  # after the answer
    interval_days: float  # from the answer to the due date it set
    stability: float
    difficulty: float


@dataclass(frozen=True)
class CardHistory:
    card_id: int
    deck_slug: str
    question: str
    locale: str
    answers: list[Answer] = field(default_factory=list)  # oldest first
    answer: str = ""  # the card's own, as the person studies it


def load_history(session: Session, user_id: int, card_id: int) -> CardHistory:
    """Every answer the person gave the card; CardNotFound for a card they may not see."""
    card = seen_card(session, user_id, card_id)
    names = {number: name for name, number in STATES.items()}
    rows = session.execute(
        select(
            ReviewLog.reviewed_at,
            ReviewLog.rating,
            ReviewLog.state,
            ReviewLog.due,
            ReviewLog.stability,
            ReviewLog.difficulty,
        )
        .where(ReviewLog.card_id == card_id, ReviewLog.user_id == user_id)
        .order_by(ReviewLog.reviewed_at, ReviewLog.id)
    )
    answers = [
        Answer(
            reviewed_at=r.reviewed_at,
            rating=r.rating,
            state=names.get(r.state, "review"),  # type: ignore[arg-type]
            interval_days=(r.due - r.reviewed_at).total_seconds() / 86400,
            stability=r.stability,
            difficulty=r.difficulty,
        )
        for r in rows
    ]
    return CardHistory(
        card.id, card.deck_slug, card.shown.front, card.locale, answers, answer=card.shown.back
    )
