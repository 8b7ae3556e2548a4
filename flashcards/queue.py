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

from sqlalchemy import (
    Table,
    bindparam,
    case,
    exists,
    func,
    literal,
    literal_column,
    select,
    union_all,
)
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

from .days import day_bounds
from .models import Card, CardText, Deck, ReviewLog, SchedulerSettings, Subscription, User
from .rawsql import Executor, Statement, executor
from .scheduling import CardState, SchedulerConfig
from .state_rows import STATE_COLUMNS, config_from, rs, state_from_row

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


_USER: BindParameter[int] = bindparam("user_id")
_LIVE_CARD = exists().where(Card.id == rs.c.card_id, Card.retired_at.is_(None))
_STATE_COLUMNS = (rs.c.card_id, rs.c.deck_id, *(rs.c[n] for n in STATE_COLUMNS))
_SUB = cast(Table, Subscription.__table__)
_SETTINGS = cast(Table, SchedulerSettings.__table__)

# Built and compiled once (rawsql): constructing statements costs more than running them.
_PLANS_SELECT = (
    select(
        _SUB,
        Deck.slug,
        Deck.default_locale,
        User.timezone,
        User.day_start_hour,
        _SETTINGS.c.desired_retention.label("user_desired_retention"),
        _SETTINGS.c.learning_steps.label("user_learning_steps"),
        _SETTINGS.c.relearning_steps.label("user_relearning_steps"),
        _SETTINGS.c.maximum_interval.label("user_maximum_interval"),
        _SETTINGS.c.new_per_day.label("user_new_per_day"),
        _SETTINGS.c.reviews_per_day.label("user_reviews_per_day"),
        _SETTINGS.c.parameters,
    )
    .join(Deck, Deck.id == _SUB.c.deck_id)
    .join(User, User.id == _SUB.c.user_id)
    .join(_SETTINGS, _SETTINGS.c.user_id == _SUB.c.user_id)
    .where(_SUB.c.user_id == _USER)
    .order_by(_SUB.c.created_at, Deck.slug)
)
_PLANS = Statement(_PLANS_SELECT)
_PLANS_OF_DECK = Statement(_PLANS_SELECT.where(_SUB.c.deck_id == bindparam("deck_id")))
# Today's new cards and today's review answers per deck, in one round trip.
# Grouped by `deck_id + 0`: given a plain `deck_id`, SQLite groups along the index on
# (user_id, deck_id, due) and reads every state the person has, not the range the filter
# names (measured: 22 µs against 2 µs at 100 states).
_STATE_DECK = rs.c.deck_id + literal_column("0")
_DONE_TODAY = Statement(
    union_all(
        select(
            literal("introduced").label("kind"),
            _STATE_DECK.label("deck_id"),
            func.count().label("n"),
        )
        .where(rs.c.user_id == _USER, rs.c.introduced_at >= bindparam("day_start"))
        .group_by(_STATE_DECK),
        select(literal("reviewed"), rl.c.deck_id, func.count())
        .where(
            rl.c.user_id == _USER,
            rl.c.reviewed_at >= bindparam("day_start"),
            rl.c.state_before == REVIEW_STATE,
        )
        .group_by(rl.c.deck_id),
    )
)
_LEARNING_DUE = rs.c.state.in_(LEARNING_STATES) & (rs.c.due <= bindparam("learn_ahead_until"))
_REVIEW_DUE = (rs.c.state == REVIEW_STATE) & (rs.c.due < bindparam("day_end"))
_DUE_COUNTS = Statement(
    select(
        _STATE_DECK.label("deck_id"),
        func.sum(case((_LEARNING_DUE, 1), else_=0)).label("learning"),
        func.sum(case((_REVIEW_DUE, 1), else_=0)).label("review"),
    )
    .select_from(rs.join(Card, (Card.id == rs.c.card_id) & Card.retired_at.is_(None)))
    .where(rs.c.user_id == _USER, rs.c.due < bindparam("due_before"))
    .group_by(_STATE_DECK)
)
_FIRST_LEARNING = Statement(
    select(*_STATE_COLUMNS)
    .where(
        rs.c.user_id == _USER,
        rs.c.deck_id.in_(bindparam("deck_ids", expanding=True)),
        rs.c.state.in_(LEARNING_STATES),
        rs.c.due <= bindparam("learn_ahead_until"),
        _LIVE_CARD,
    )
    .order_by(rs.c.due)
    .limit(1)
)
_FIRST_REVIEW = Statement(
    select(*_STATE_COLUMNS)
    .where(
        rs.c.user_id == _USER,
        rs.c.deck_id.in_(bindparam("deck_ids", expanding=True)),
        rs.c.state == REVIEW_STATE,
        rs.c.due < bindparam("day_end"),
        _LIVE_CARD,
    )
    .order_by(rs.c.due)
    .limit(1)
)
# An outer join rather than NOT EXISTS: SQLite runs it as a plain index probe per card,
# half the cost of a correlated subquery.
_NEW_CANDIDATES = (
    select(Card.id, Card.position)
    .select_from(Card.__table__.outerjoin(rs, (rs.c.user_id == _USER) & (rs.c.card_id == Card.id)))
    .where(
        Card.deck_id == bindparam("deck_id"),
        Card.retired_at.is_(None),
        rs.c.card_id.is_(None),
    )
    .order_by(Card.position)
    .limit(bindparam("limit"))
    .subquery()
)
# The deck's next new card and how many new ones are left today, in one row.
_NEW_CARDS = Statement(
    select(_NEW_CANDIDATES.c.id, func.count().over().label("n"))
    .order_by(_NEW_CANDIDATES.c.position)
    .limit(1)
)
_TEXTS = Statement(
    select(Card.key, CardText.locale, CardText.question, CardText.answer, CardText.explanation)
    .join(Card, Card.id == CardText.card_id)
    .where(
        CardText.card_id == bindparam("card_id"),
        CardText.locale.in_([bindparam("locale"), bindparam("default_locale")]),
    )
)


def next_card(
    db: Session | Executor, user_id: int, *, now: datetime, deck_id: int | None = None
) -> tuple[NextCard | None, QueueCounts]:
    conn = executor(db)
    plans, day_end = _plans(conn, user_id, now, deck_id)
    if not plans:
        return None, QueueCounts()
    learn_ahead_until = now + LEARN_AHEAD
    due_counts = {
        row.deck_id: row
        for row in conn.all(
            _DUE_COUNTS,
            {
                "user_id": user_id,
                "learn_ahead_until": learn_ahead_until,
                "day_end": day_end,
                "due_before": max(day_end, learn_ahead_until),
            },
        )
        if row.deck_id in plans
    }
    new_cards = {  # deck: (its first new card, how many new cards are left today)
        d: conn.first(_NEW_CARDS, {"user_id": user_id, "deck_id": d, "limit": plan.new_left})
        for d, plan in plans.items()
        if plan.new_left > 0
    }
    counts = QueueCounts(
        new=sum(row.n for row in new_cards.values() if row is not None),
        learning=sum(int(r.learning or 0) for r in due_counts.values()),
        review=sum(min(int(r.review or 0), plans[d].reviews_left) for d, r in due_counts.items()),
    )

    first_learning = None
    if any(int(r.learning or 0) for r in due_counts.values()):
        first_learning = conn.first(
            _FIRST_LEARNING,
            {"user_id": user_id, "deck_ids": list(plans), "learn_ahead_until": learn_ahead_until},
        )
    if first_learning is not None and first_learning.due <= now:
        return _with_text(conn, first_learning, "learning", plans), counts

    review_decks = [d for d, r in due_counts.items() if r.review and plans[d].reviews_left > 0]
    if review_decks:
        first_review = conn.first(
            _FIRST_REVIEW, {"user_id": user_id, "deck_ids": review_decks, "day_end": day_end}
        )
        if first_review is not None:
            return _with_text(conn, first_review, "review", plans), counts

    for d, row in new_cards.items():
        if row is not None:
            return _with_text(conn, _NewRow(row.id, d), "new", plans), counts

    if first_learning is not None:
        return _with_text(conn, first_learning, "learning", plans), counts
    return None, counts


@dataclass(frozen=True)
class _NewRow:
    card_id: int
    deck_id: int
    state: None = None


class _UserSettings:
    """The `user_*` columns of a plan row, in `config_from`'s settings shape."""

    def __init__(self, row: Any) -> None:
        self.desired_retention = row.user_desired_retention
        self.learning_steps = row.user_learning_steps
        self.relearning_steps = row.user_relearning_steps
        self.maximum_interval = row.user_maximum_interval
        self.parameters = row.parameters


def _plans(
    conn: Executor, user_id: int, now: datetime, deck_id: int | None
) -> tuple[dict[int, _DeckPlan], datetime]:
    """Each subscribed deck's locale, settings and what is left of today's limits."""
    if deck_id is None:
        rows = conn.all(_PLANS, {"user_id": user_id})
    else:
        rows = conn.all(_PLANS_OF_DECK, {"user_id": user_id, "deck_id": deck_id})
    if not rows:
        return {}, now
    day_start, day_end = day_bounds(now, rows[0].timezone, rows[0].day_start_hour)
    done: dict[tuple[str, int], int] = {
        (kind, deck): n
        for kind, deck, n in conn.all(_DONE_TODAY, {"user_id": user_id, "day_start": day_start})
    }
    plans: dict[int, _DeckPlan] = {}
    for row in rows:
        new_limit = row.new_per_day if row.new_per_day is not None else row.user_new_per_day
        review_limit = (
            row.reviews_per_day if row.reviews_per_day is not None else row.user_reviews_per_day
        )
        plans[row.deck_id] = _DeckPlan(
            deck_id=row.deck_id,
            slug=row.slug,
            locale=row.locale,
            default_locale=row.default_locale,
            config=config_from(_UserSettings(row), row),
            new_left=max(0, new_limit - done.get(("introduced", row.deck_id), 0)),
            reviews_left=max(0, review_limit - done.get(("reviewed", row.deck_id), 0)),
        )
    return plans, day_end


def _with_text(conn: Executor, row: Any, kind: str, plans: dict[int, _DeckPlan]) -> NextCard:
    plan = plans[row.deck_id]
    texts = {
        t.locale: t
        for t in conn.all(
            _TEXTS,
            {
                "card_id": row.card_id,
                "locale": plan.locale,
                "default_locale": plan.default_locale,
            },
        )
    }
    text = texts.get(plan.locale) or texts[plan.default_locale]
    return NextCard(
        card_id=row.card_id,
        deck_id=row.deck_id,
        deck_slug=plan.slug,
        key=text.key,
        locale=text.locale,
        question=text.question,
        answer=text.answer,
        explanation=text.explanation,
        kind=kind,
        state=state_from_row(row),
        config=plan.config,
    )
