"""The due queue: which card a person sees next, and how many remain today.

Rules (as Anki's): learning and relearning cards due by now come first; then review cards
due before the end of the person's study day, up to the daily review limit; then new cards
in deck order, up to the daily new limit minus those already introduced today. When nothing
else is left, learning cards due within the next 20 minutes are shown early (learn-ahead).
Limits are per deck: a subscription may override the person's defaults.
Every lookup is a range scan on an index that starts with the user id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, and_, case, exists, func, select
from sqlalchemy.orm import Session

from .days import day_bounds
from .models import Card, CardText, Deck, ReviewLog, SchedulerSettings, Subscription, User
from .scheduling import CardState, SchedulerConfig
from .study import STATE_COLUMNS, config_from, rs, state_from_row

LEARN_AHEAD = timedelta(minutes=20)
LEARNING_STATES = (1, 3)
REVIEW_STATE = 2
rl = cast(Table, ReviewLog.__table__)


@dataclass(frozen=True)
class QueueCounts:
    new: int = 0
    learning: int = 0
    review: int = 0

    @property
    def total(self) -> int:
        return self.new + self.learning + self.review


@dataclass(frozen=True)
class NextCard:
    card_id: int
    deck_id: int
    deck_slug: str
    key: str
    locale: str
    question: str
    answer: str
    explanation: str
    kind: str  # "new", "learning" or "review"
    state: CardState | None
    config: SchedulerConfig


@dataclass(frozen=True)
class _DeckPlan:
    deck_id: int
    slug: str
    locale: str
    default_locale: str
    config: SchedulerConfig
    new_left: int
    reviews_left: int


def next_card(
    session: Session, user_id: int, *, now: datetime, deck_id: int | None = None
) -> tuple[NextCard | None, QueueCounts]:
    plans, day_end = _plans(session, user_id, now, deck_id)
    if not plans:
        return None, QueueCounts()
    deck_ids = list(plans)
    live = and_(
        rs.c.user_id == user_id,
        rs.c.deck_id.in_(deck_ids),
        exists().where(Card.id == rs.c.card_id, Card.retired_at.is_(None)),
    )

    learning_due = rs.c.state.in_(LEARNING_STATES) & (rs.c.due <= now + LEARN_AHEAD)
    review_due = (rs.c.state == REVIEW_STATE) & (rs.c.due < day_end)
    due_counts = {
        row.deck_id: row
        for row in session.execute(
            select(
                rs.c.deck_id,
                func.sum(case((learning_due, 1), else_=0)).label("learning"),
                func.sum(case((review_due, 1), else_=0)).label("review"),
            )
            .where(live, rs.c.due < max(day_end, now + LEARN_AHEAD))
            .group_by(rs.c.deck_id)
        )
    }
    new_cards = {d: _new_card_ids(session, user_id, d, plans[d].new_left) for d in deck_ids}

    learning = sum(int(r.learning or 0) for r in due_counts.values())
    review = sum(min(int(r.review or 0), plans[d].reviews_left) for d, r in due_counts.items())
    counts = QueueCounts(
        new=sum(len(ids) for ids in new_cards.values()), learning=learning, review=review
    )

    state_cols = [rs.c.card_id, rs.c.deck_id, *(rs.c[n] for n in STATE_COLUMNS)]
    first_learning = session.execute(
        select(*state_cols)
        .where(live, rs.c.state.in_(LEARNING_STATES), rs.c.due <= now + LEARN_AHEAD)
        .order_by(rs.c.due)
        .limit(1)
    ).first()
    if first_learning is not None and first_learning.due <= now:
        return _with_text(session, first_learning, "learning", plans), counts

    review_decks = [d for d in deck_ids if plans[d].reviews_left > 0]
    if review_decks:
        first_review = session.execute(
            select(*state_cols)
            .where(
                live, rs.c.deck_id.in_(review_decks), rs.c.state == REVIEW_STATE, rs.c.due < day_end
            )
            .order_by(rs.c.due)
            .limit(1)
        ).first()
        if first_review is not None:
            return _with_text(session, first_review, "review", plans), counts

    for d in deck_ids:
        if new_cards[d]:
            return _with_text(session, _NewRow(new_cards[d][0], d), "new", plans), counts

    if first_learning is not None:
        return _with_text(session, first_learning, "learning", plans), counts
    return None, counts


@dataclass(frozen=True)
class _NewRow:
    card_id: int
    deck_id: int
    state: None = None


def _plans(
    session: Session, user_id: int, now: datetime, deck_id: int | None
) -> tuple[dict[int, _DeckPlan], datetime]:
    """Each subscribed deck's locale, settings and what is left of today's limits."""
    settings = session.get(SchedulerSettings, user_id)
    user = session.execute(
        select(User.timezone, User.day_start_hour).where(User.id == user_id)
    ).one()
    day_start, day_end = day_bounds(now, user.timezone, user.day_start_hour)
    query = (
        select(Subscription, Deck.slug, Deck.default_locale)
        .join(Deck, Deck.id == Subscription.deck_id)
        .where(Subscription.user_id == user_id)
        .order_by(Subscription.created_at, Deck.slug)
    )
    if deck_id is not None:
        query = query.where(Subscription.deck_id == deck_id)
    subs = session.execute(query).all()
    if not subs or settings is None:
        return {}, day_end
    ids = [sub.deck_id for sub, _slug, _default in subs]
    introduced: dict[int, int] = dict(
        session.execute(
            select(rs.c.deck_id, func.count())
            .where(rs.c.user_id == user_id, rs.c.introduced_at >= day_start, rs.c.deck_id.in_(ids))
            .group_by(rs.c.deck_id)
        ).all()
    )
    reviewed: dict[int, int] = dict(
        session.execute(
            select(rl.c.deck_id, func.count())
            .where(
                rl.c.user_id == user_id,
                rl.c.reviewed_at >= day_start,
                rl.c.state_before == REVIEW_STATE,
                rl.c.deck_id.in_(ids),
            )
            .group_by(rl.c.deck_id)
        ).all()
    )
    plans: dict[int, _DeckPlan] = {}
    for sub, slug, default_locale in subs:
        new_limit = sub.new_per_day if sub.new_per_day is not None else settings.new_per_day
        review_limit = (
            sub.reviews_per_day if sub.reviews_per_day is not None else settings.reviews_per_day
        )
        plans[sub.deck_id] = _DeckPlan(
            deck_id=sub.deck_id,
            slug=slug,
            locale=sub.locale,
            default_locale=default_locale,
            config=config_from(settings, sub),
            new_left=max(0, new_limit - introduced.get(sub.deck_id, 0)),
            reviews_left=max(0, review_limit - reviewed.get(sub.deck_id, 0)),
        )
    return plans, day_end


def _new_card_ids(session: Session, user_id: int, deck_id: int, limit: int) -> list[int]:
    if limit <= 0:
        return []
    seen = exists().where(rs.c.user_id == user_id, rs.c.card_id == Card.id)
    return list(
        session.scalars(
            select(Card.id)
            .where(Card.deck_id == deck_id, Card.retired_at.is_(None), ~seen)
            .order_by(Card.position)
            .limit(limit)
        )
    )


def _with_text(session: Session, row: Any, kind: str, plans: dict[int, _DeckPlan]) -> NextCard:
    plan = plans[row.deck_id]
    texts = {
        t.locale: t
        for t in session.execute(
            select(CardText.locale, CardText.question, CardText.answer, CardText.explanation).where(
                CardText.card_id == row.card_id,
                CardText.locale.in_({plan.locale, plan.default_locale}),
            )
        )
    }
    text = texts.get(plan.locale) or texts[plan.default_locale]
    key = session.scalar(select(Card.key).where(Card.id == row.card_id))
    return NextCard(
        card_id=row.card_id,
        deck_id=row.deck_id,
        deck_slug=plan.slug,
        key=key or "",
        locale=text.locale,
        question=text.question,
        answer=text.answer,
        explanation=text.explanation,
        kind=kind,
        state=state_from_row(row),
        config=plan.config,
    )
