"""The due queue: which card a person sees next, and how many remain today.

Rules (as Anki's): learning and relearning cards due by now come first; then review cards
due before the end of the person's study day, up to the daily review limit; then new cards
in deck order, up to the daily new limit minus those already introduced today. When nothing
else is left, learning cards due within the next 20 minutes are shown early (learn-ahead).
Limits are per deck: a subscription may override the person's defaults.
Every lookup is a range scan on an index that starts with the user id (or, for a deck's
cards, the deck id): the cost follows what is due, not how much a person has studied.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import (
    Table,
    bindparam,
    case,
    exists,
    func,
    literal_column,
    select,
)
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import BindParameter

from .days import Clock, day_bounds
from .models import Card, CardText, Deck, ReviewLog, SchedulerSettings, Subscription, User
from .rawsql import Executor, Statement, executor
from .scheduling import CardState, SchedulerConfig
from .state_rows import STATE_COLUMNS, config_from, rs, state_from_row

LEARN_AHEAD = timedelta(minutes=20)
# The review answers of a day counted at most, per deck, in the one statement of the counts:
# the queue needs only as many as the daily review limit, and this is the default limit. A
# deck whose limit is higher is counted again, up to its own limit, once this is reached.
REVIEWED_COUNTED = 200
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
    slug: str
    config: SchedulerConfig
    # What the deck shows today: new cards (within the daily limit), learning cards due now
    # or within the learn-ahead window, and review cards due today (within the limit).
    new: int
    learning: int
    review: int


_USER: BindParameter[int] = bindparam("user_id")
_STATE_COLUMNS = (rs.c.card_id, rs.c.deck_id, *(rs.c[n] for n in STATE_COLUMNS))
_SUB = cast(Table, Subscription.__table__)
_SETTINGS = cast(Table, SchedulerSettings.__table__)

# Built and compiled once (rawsql): constructing statements costs more than running them.
_CARDS = cast(Table, Card.__table__)
_DECK = _SUB.c.deck_id
_LEARNING_DUE = rs.c.state.in_(LEARNING_STATES) & (rs.c.due <= bindparam("learn_ahead_until"))
_REVIEW_DUE = (rs.c.state == REVIEW_STATE) & (rs.c.due < bindparam("day_end"))
_RETIRED = (_CARDS.c.deck_id == _DECK) & _CARDS.c.retired_at.is_not(None)
# Written into the SQL, not bound: only a literal lets the planners (SQLite's, and
# PostgreSQL's for a prepared statement's generic plan) use the partial index of review
# answers, ix_review_logs_review_answers, whose condition this is.
_REVIEW_ANSWER = rl.c.state_before == literal_column(str(REVIEW_STATE))


def _count(*where: Any, select_from: Any = rs) -> Any:
    return select(func.count()).select_from(select_from).where(*where).scalar_subquery()


def _review_answers(deck: Any, limit: BindParameter[int]) -> Any:
    """How many review answers the person gave in the deck today, counted up to `limit`.

    Bounded so that a heavy day costs no more than the limit: the rows are index entries
    (ix_review_logs_review_answers), but there may be thousands of them."""
    today = (
        select(literal_column("1"))
        .select_from(rl)
        .where(
            rl.c.user_id == _USER,
            rl.c.deck_id == deck,
            rl.c.reviewed_at >= bindparam("day_start"),
            _REVIEW_ANSWER,
        )
        .limit(limit)
        # In FROM, a subquery is not correlated unless told: the deck is the outer row's.
        .correlate(_SUB)
        .subquery("answered")
    )
    return select(func.count()).select_from(today).scalar_subquery()


def _has_state(*where: Any) -> Any:
    # EXISTS rather than a join, so that the (few) retired cards drive the lookup.
    return exists().where(rs.c.user_id == _USER, rs.c.card_id == _CARDS.c.id, *where)


def new_allowance(own: int, pace: int | None) -> int:
    """A day's new cards for a deck: the person's own number, or a team's pace if higher."""
    return own if pace is None else max(own, pace)


# Each subscribed deck with its settings and everything its counts need, in one statement:
# each number is a count over a range of an index (the deck's states, its cards, today's
# review answers), never a visit to each card or log row. A card is new until the person
# has a state for it, so the new cards left are the deck's live cards minus the person's
# states in it. States on retired cards are counted by the deck-wide counts but never
# shown, so they are counted apart and taken off; retired cards are few, so this beats
# joining every state to its card.
_PLANS_SELECT = (
    select(
        _DECK,
        # The subscription's overrides of the person's settings (NULL: none).
        _SUB.c.desired_retention,
        _SUB.c.learning_steps,
        _SUB.c.relearning_steps,
        _SUB.c.maximum_interval,
        _SUB.c.new_per_day,
        _SUB.c.paced_new_per_day,
        _SUB.c.reviews_per_day,
        Deck.slug,
        _SETTINGS.c.desired_retention.label("user_desired_retention"),
        _SETTINGS.c.learning_steps.label("user_learning_steps"),
        _SETTINGS.c.relearning_steps.label("user_relearning_steps"),
        _SETTINGS.c.maximum_interval.label("user_maximum_interval"),
        _SETTINGS.c.new_per_day.label("user_new_per_day"),
        _SETTINGS.c.reviews_per_day.label("user_reviews_per_day"),
        _SETTINGS.c.parameters,
        _count(
            rs.c.user_id == _USER,
            rs.c.deck_id == _DECK,
            rs.c.introduced_at >= bindparam("day_start"),
        ).label("introduced"),
        # Counted only for a deck with reviews due: otherwise the limit has nothing to limit.
        case(
            (
                exists().where(rs.c.user_id == _USER, rs.c.deck_id == _DECK, _REVIEW_DUE),
                _review_answers(_DECK, bindparam("reviewed_counted", REVIEWED_COUNTED)),
            ),
            else_=0,
        ).label("reviewed"),
        _count(rs.c.user_id == _USER, rs.c.deck_id == _DECK, _LEARNING_DUE).label("learning"),
        _count(rs.c.user_id == _USER, rs.c.deck_id == _DECK, _REVIEW_DUE).label("review"),
        _count(_CARDS.c.deck_id == _DECK, _CARDS.c.retired_at.is_(None), select_from=_CARDS).label(
            "live_cards"
        ),
        _count(rs.c.user_id == _USER, rs.c.deck_id == _DECK).label("states"),
        _count(_RETIRED, _has_state(), select_from=_CARDS).label("retired_states"),
        _count(_RETIRED, _has_state(_LEARNING_DUE), select_from=_CARDS).label("retired_learning"),
        _count(_RETIRED, _has_state(_REVIEW_DUE), select_from=_CARDS).label("retired_review"),
    )
    .join(Deck, Deck.id == _DECK)
    .join(_SETTINGS, _SETTINGS.c.user_id == _SUB.c.user_id)
    .where(_SUB.c.user_id == _USER)
    .order_by(_SUB.c.created_at, Deck.slug)
)
_PLANS = Statement(_PLANS_SELECT)
_PLANS_OF_DECK = Statement(_PLANS_SELECT.where(bindparam("deck_id") == _DECK))
_REVIEWED = Statement(
    select(_review_answers(bindparam("deck_id"), bindparam("review_limit")).label("reviewed"))
)
_CLOCK = Statement(select(User.timezone, User.day_start_hour).where(User.id == _USER))
_OWN_TEXT = aliased(CardText, name="own_text")
_DECK_TEXT = aliased(CardText, name="deck_text")
_TEXT_FIELDS = ("locale", "question", "answer", "explanation")


def _shown(query: Select[Any]) -> Statement:
    """The query's card (one row, `card_id` and `deck_id`) with what showing it needs: its
    key and its text in the person's locale, or else in the deck's, read along with it.

    Joined outside the query, so that the query's scan stops at its first row."""
    first = query.subquery("first")
    return Statement(
        select(
            first,
            _CARDS.c.key,
            *(getattr(_OWN_TEXT, f).label(f"own_{f}") for f in _TEXT_FIELDS),
            *(getattr(_DECK_TEXT, f).label(f"deck_{f}") for f in _TEXT_FIELDS),
        )
        .join(_CARDS, _CARDS.c.id == first.c.card_id)
        .join(_SUB, (_SUB.c.user_id == _USER) & (_SUB.c.deck_id == first.c.deck_id))
        .join(Deck, Deck.id == first.c.deck_id)
        .outerjoin(
            _OWN_TEXT,
            (_OWN_TEXT.card_id == first.c.card_id) & (_OWN_TEXT.locale == _SUB.c.locale),
        )
        .outerjoin(
            _DECK_TEXT,
            (_DECK_TEXT.card_id == first.c.card_id) & (_DECK_TEXT.locale == Deck.default_locale),
        )
    )


def _first_due(decks: int, *where: Any) -> Statement:
    """The first due state among `decks` decks, named `deck_0`, `deck_1`... (`_in_decks`)."""
    return _shown(
        select(*_STATE_COLUMNS)
        .select_from(rs.join(_CARDS, (_CARDS.c.id == rs.c.card_id) & _CARDS.c.retired_at.is_(None)))
        .where(
            rs.c.user_id == _USER,
            rs.c.deck_id.in_([bindparam(f"deck_{i}") for i in range(decks)]),
            *where,
        )
        .order_by(rs.c.due)
        .limit(1)
    )


def _in_decks(deck_ids: list[int]) -> dict[str, int]:
    return {f"deck_{i}": deck for i, deck in enumerate(deck_ids)}


# One statement per number of decks (compiled once each): a person studies a few decks.
@lru_cache(maxsize=64)
def _first_learning(decks: int) -> Statement:
    return _first_due(
        decks, rs.c.state.in_(LEARNING_STATES), rs.c.due <= bindparam("learn_ahead_until")
    )


@lru_cache(maxsize=64)
def _first_review(decks: int) -> Statement:
    return _first_due(decks, rs.c.state == REVIEW_STATE, rs.c.due < bindparam("day_end"))


# An outer join rather than NOT EXISTS: SQLite runs it as a plain index probe per card,
# half the cost of a correlated subquery. Run only for a deck known to have new cards left.
_FIRST_NEW = _shown(
    select(_CARDS.c.id.label("card_id"), _CARDS.c.deck_id)
    .select_from(_CARDS.outerjoin(rs, (rs.c.user_id == _USER) & (rs.c.card_id == _CARDS.c.id)))
    .where(
        _CARDS.c.deck_id == bindparam("deck_id"),
        _CARDS.c.retired_at.is_(None),
        rs.c.card_id.is_(None),
    )
    .order_by(_CARDS.c.position)
    .limit(1)
)


def next_card(
    db: Session | Executor,
    user_id: int,
    *,
    now: datetime,
    deck_id: int | None = None,
    clock: Clock | None = None,
) -> tuple[NextCard | None, QueueCounts]:
    """The card to show next and what is left today; `clock` saves a read when it is known."""
    conn = executor(db)
    if clock is None:
        row = conn.first(_CLOCK, {"user_id": user_id})
        if row is None:
            return None, QueueCounts()
        clock = Clock(row.timezone, row.day_start_hour)
    plans, day_end = _plans(conn, user_id, now, deck_id, clock)
    if not plans:
        return None, QueueCounts()
    counts = QueueCounts(
        new=sum(p.new for p in plans.values()),
        learning=sum(p.learning for p in plans.values()),
        review=sum(p.review for p in plans.values()),
    )
    deck_ids = list(plans)
    first_learning = None
    if counts.learning:
        first_learning = conn.first(
            _first_learning(len(deck_ids)),
            {"user_id": user_id, **_in_decks(deck_ids), "learn_ahead_until": now + LEARN_AHEAD},
        )
    if first_learning is not None and first_learning.due <= now:
        return _next(first_learning, "learning", state_from_row(first_learning), plans), counts

    review_decks = [d for d, p in plans.items() if p.review]
    if review_decks:
        first_review = conn.first(
            _first_review(len(review_decks)),
            {"user_id": user_id, **_in_decks(review_decks), "day_end": day_end},
        )
        if first_review is not None:
            return _next(first_review, "review", state_from_row(first_review), plans), counts

    for d, plan in plans.items():
        if plan.new:
            new = conn.first(_FIRST_NEW, {"user_id": user_id, "deck_id": d})
            if new is not None:  # None: answered since the counts were read
                return _next(new, "new", None, plans), counts

    if first_learning is not None:
        return _next(first_learning, "learning", state_from_row(first_learning), plans), counts
    return None, counts


class _UserSettings:
    """The `user_*` columns of a plan row, in `config_from`'s settings shape."""

    def __init__(self, row: Any) -> None:
        self.desired_retention = row.user_desired_retention
        self.learning_steps = row.user_learning_steps
        self.relearning_steps = row.user_relearning_steps
        self.maximum_interval = row.user_maximum_interval
        self.parameters = row.parameters


def _plans(
    conn: Executor, user_id: int, now: datetime, deck_id: int | None, clock: Clock
) -> tuple[dict[int, _DeckPlan], datetime]:
    """Each subscribed deck's locale, settings and what it has to show today; the day's end."""
    day_start, day_end = day_bounds(now, clock.timezone, clock.day_start_hour)
    params = {
        "user_id": user_id,
        "deck_id": deck_id,
        "day_start": day_start,
        "day_end": day_end,
        "learn_ahead_until": now + LEARN_AHEAD,
    }
    plans: dict[int, _DeckPlan] = {}
    for row in conn.all(_PLANS if deck_id is None else _PLANS_OF_DECK, params):
        own = row.new_per_day if row.new_per_day is not None else row.user_new_per_day
        new_limit = new_allowance(own, row.paced_new_per_day)
        review_limit = (
            row.reviews_per_day if row.reviews_per_day is not None else row.user_reviews_per_day
        )
        new_left = row.live_cards - (row.states - row.retired_states)
        due_reviews = row.review - row.retired_review
        reviewed = row.reviewed
        if reviewed >= REVIEWED_COUNTED and review_limit > reviewed and due_reviews:
            found = conn.first(
                _REVIEWED,
                {
                    "user_id": user_id,
                    "deck_id": row.deck_id,
                    "day_start": day_start,
                    "review_limit": review_limit,
                },
            )
            reviewed = found.reviewed
        plans[row.deck_id] = _DeckPlan(
            slug=row.slug,
            config=config_from(_UserSettings(row), row),
            new=max(0, min(new_left, new_limit - row.introduced)),
            learning=row.learning - row.retired_learning,
            review=max(0, min(due_reviews, review_limit - reviewed)),
        )
    return plans, day_end


def _next(row: Any, kind: str, state: CardState | None, plans: dict[int, _DeckPlan]) -> NextCard:
    plan = plans[row.deck_id]
    text = "own_" if row.own_locale is not None else "deck_"
    return NextCard(
        card_id=row.card_id,
        deck_id=row.deck_id,
        deck_slug=plan.slug,
        key=row.key,
        locale=getattr(row, text + "locale"),
        question=getattr(row, text + "question"),
        answer=getattr(row, text + "answer"),
        explanation=getattr(row, text + "explanation"),
        kind=kind,
        state=state,
        config=plan.config,
    )
