"""A person's study statistics, counted in their own days (timezone and day-start hour).

No Flask: the stats page renders these; the queries read only the person's own rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, or_, select
from sqlalchemy.orm import Session

from ..decks.access import visible_decks
from ..hot_sql.next_card import LEARNING_STATES, REVIEW_STATE
from ..people.accounts import user_clock
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    ReviewLog,
    ReviewState,
    SchedulerSettings,
    Subscription,
)
from .days import day_bounds, day_start, study_date
from .queue import LEARN_AHEAD, new_allowance
from .state_rows import NEW_STATE

AGAIN = 1
# States of cards still in their deck: a retired card is never shown again (see `queue`), so
# it is not counted, forecast or named as due. EXISTS: the retired cards are the few.
_LIVE = ~exists().where(Card.id == ReviewState.card_id, Card.retired_at.is_not(None))
# States with a schedule: not a forgotten card's, new again, whose due is only when it was
# forgotten.
_SCHEDULED = ReviewState.state != NEW_STATE


def _hidden(user_id: int, card_id: Any, today: date) -> ColumnElement[bool]:
    """The person suspended the card, or buried it until a later study day: the queue neither
    shows nor counts it today, and neither do these (a buried card, from the day it is back)."""
    return exists().where(
        CardMark.user_id == user_id,
        CardMark.card_id == card_id,
        or_(CardMark.suspended, CardMark.buried_until > today),
    )


@dataclass(frozen=True)
class DayCount:
    day: date
    count: int


@dataclass(frozen=True)
class WeekRetention:
    week_start: date
    answers: int
    passed: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.answers if self.answers else None


@dataclass(frozen=True)
class HardCard:
    card_id: int
    deck_slug: str
    question: str
    locale: str  # the question's language
    lapses: int
    difficulty: float


def _subscribed_deck_ids(
    session: Session, user_id: int, deck_ids: Collection[int] | None
) -> list[int]:
    query = select(Subscription.deck_id).where(Subscription.user_id == user_id)
    if deck_ids is not None:
        query = query.where(Subscription.deck_id.in_(deck_ids))
    return list(session.scalars(query))


def is_subscribed(
    session: Session, user_id: int, *, deck_ids: Collection[int] | None = None
) -> bool:
    """Whether the user studies any deck (or any of these)."""
    return bool(_subscribed_deck_ids(session, user_id, deck_ids))


def next_due(
    session: Session, user_id: int, *, now: datetime, deck_ids: Collection[int] | None = None
) -> datetime | None:
    """When something is next to study, for someone with nothing to study now, by the
    queue's rules: a learning card `LEARN_AHEAD` before it is due, a review card from the
    start of the study day it is due on, and the next study day when today's limits hold
    cards back (cards due already, or new cards in a deck that allows some a day). Cards the
    person suspended are left out, and a buried one counts from the day it is back. None:
    nothing ever will be.
    """
    deck_ids = _subscribed_deck_ids(session, user_id, deck_ids)
    if not deck_ids:
        return None
    tz, hour = user_clock(session, user_id)
    today = study_date(now, tz, hour)
    next_day = day_bounds(now, tz, hour)[1]
    shown = ~_hidden(user_id, ReviewState.card_id, today)

    def earliest(states: tuple[int, ...], after: datetime) -> datetime | None:
        return session.scalar(
            select(func.min(ReviewState.due)).where(
                ReviewState.user_id == user_id,
                ReviewState.deck_id.in_(deck_ids),
                ReviewState.state.in_(states),
                ReviewState.due > after,
                _LIVE,
                shown,
            )
        )

    candidates: list[datetime] = []
    learning = earliest(LEARNING_STATES, now + LEARN_AHEAD)
    if learning is not None:
        candidates.append(learning - LEARN_AHEAD)
    review = earliest((REVIEW_STATE,), now)
    if review is not None:
        # One due later today is held back by today's limit (else it would be shown now).
        candidates.append(max(day_bounds(review, tz, hour)[0], next_day))
    held_back = session.scalar(
        select(exists().where(
            ReviewState.user_id == user_id,
            ReviewState.deck_id.in_(deck_ids),
            ReviewState.due <= now,
            _SCHEDULED,
            _LIVE,
            shown,
        ))
    )  # fmt: skip
    # A buried card is back on the study day it was buried until, when it is due by then.
    for state, due, until in session.execute(
        select(ReviewState.state, ReviewState.due, CardMark.buried_until)
        .join(
            CardMark,
            and_(CardMark.user_id == user_id, CardMark.card_id == ReviewState.card_id),
        )
        .where(
            ReviewState.user_id == user_id,
            ReviewState.deck_id.in_(deck_ids),
            ~CardMark.suspended,
            CardMark.buried_until > today,
            _SCHEDULED,
            _LIVE,
        )
    ):
        if until is None:  # not so: the query asks for a later day
            continue
        back = day_start(until, tz, hour)
        ready = due - LEARN_AHEAD if state in LEARNING_STATES else day_bounds(due, tz, hour)[0]
        candidates.append(max(back, ready))
    seen = exists().where(
        ReviewState.user_id == user_id, ReviewState.card_id == Card.id, _SCHEDULED
    )
    unseen = (Card.deck_id.in_(deck_ids), Card.retired_at.is_(None), ~seen)
    decks_with_new = session.scalars(
        select(Card.deck_id).distinct().where(*unseen, ~_hidden(user_id, Card.id, today))
    ).all()
    if held_back or any(_new_cards_allowed(session, user_id, d) for d in decks_with_new):
        candidates.append(next_day)
    for deck_id, until in session.execute(
        select(Card.deck_id, func.min(CardMark.buried_until))
        .join(CardMark, and_(CardMark.user_id == user_id, CardMark.card_id == Card.id))
        .where(*unseen, ~CardMark.suspended, CardMark.buried_until > today)
        .group_by(Card.deck_id)
    ):
        if until is not None and _new_cards_allowed(session, user_id, deck_id):
            candidates.append(day_start(until, tz, hour))
    return min(candidates) if candidates else None


def _new_cards_allowed(session: Session, user_id: int, deck_id: int) -> bool:
    sub = session.get(Subscription, (user_id, deck_id))
    settings = session.get(SchedulerSettings, user_id)
    if sub is None or settings is None:
        return False
    own = sub.new_per_day if sub.new_per_day is not None else settings.new_per_day
    return new_allowance(own, sub.paced_new_per_day) > 0


def cards_by_state(session: Session, user_id: int) -> dict[str, int]:
    """Cards of the subscribed decks: new (never seen), learning, review, relearning."""
    deck_ids = _subscribed_deck_ids(session, user_id, None)
    counts = dict(
        session.execute(
            select(ReviewState.state, func.count())
            .where(ReviewState.user_id == user_id, ReviewState.deck_id.in_(deck_ids), _LIVE)
            .group_by(ReviewState.state)
        ).all()
    )
    seen = exists().where(
        ReviewState.user_id == user_id, ReviewState.card_id == Card.id, _SCHEDULED
    )
    new = session.scalar(
        select(func.count())
        .select_from(Card)
        .where(Card.deck_id.in_(deck_ids), Card.retired_at.is_(None), ~seen)
    )
    return {
        "new": int(new or 0),
        "learning": int(counts.get(1, 0)),
        "review": int(counts.get(2, 0)),
        "relearning": int(counts.get(3, 0)),
    }


def reviews_per_day(
    session: Session, user_id: int, *, now: datetime, days: int = 90
) -> list[DayCount]:
    """Answers on each of the last `days` study days, today last."""
    tz, hour = user_clock(session, user_id)
    today = study_date(now, tz, hour)
    first = today - timedelta(days=days - 1)
    # From the date, not `now` less 24-hour days: a DST change in between moves those by an hour.
    start = day_start(first, tz, hour)
    times = session.scalars(
        select(ReviewLog.reviewed_at).where(
            ReviewLog.user_id == user_id, ReviewLog.reviewed_at >= start
        )
    )
    counter = Counter(study_date(t, tz, hour) for t in times)
    return [
        DayCount(first + timedelta(days=i), counter[first + timedelta(days=i)]) for i in range(days)
    ]


def due_forecast(
    session: Session, user_id: int, *, now: datetime, days: int = 30
) -> list[DayCount]:
    """Cards falling due on each of the next `days` study days; overdue ones count today,
    suspended ones never, buried ones on the day they are back."""
    tz, hour = user_clock(session, user_id)
    today = study_date(now, tz, hour)
    horizon = day_start(today + timedelta(days=days), tz, hour)  # the end of the last day
    deck_ids = _subscribed_deck_ids(session, user_id, None)
    dues = session.execute(
        select(ReviewState.due, CardMark.buried_until)
        .outerjoin(
            CardMark,
            and_(CardMark.user_id == user_id, CardMark.card_id == ReviewState.card_id),
        )
        .where(
            ReviewState.user_id == user_id,
            ReviewState.deck_id.in_(deck_ids),
            ReviewState.due < horizon,
            _SCHEDULED,
            _LIVE,
            # A suspended card falls due on no day; a buried one counts on the day it is back.
            or_(CardMark.suspended.is_(None), ~CardMark.suspended),
        )
    )
    counter = Counter(max(today, study_date(due, tz, hour), until or today) for due, until in dues)
    return [
        DayCount(today + timedelta(days=i), counter[today + timedelta(days=i)]) for i in range(days)
    ]


def retention_by_week(
    session: Session, user_id: int, *, now: datetime, weeks: int = 12
) -> list[WeekRetention]:
    """True retention: the share of answers to review-state cards that were not Again."""
    tz, hour = user_clock(session, user_id)
    today = study_date(now, tz, hour)
    this_monday = today - timedelta(days=today.weekday())
    first = this_monday - timedelta(weeks=weeks - 1)
    start = day_start(first, tz, hour)
    answers: Counter[date] = Counter()
    passed: Counter[date] = Counter()
    for reviewed_at, rating in session.execute(
        select(ReviewLog.reviewed_at, ReviewLog.rating).where(
            ReviewLog.user_id == user_id,
            ReviewLog.reviewed_at >= start,
            ReviewLog.state_before == REVIEW_STATE,
        )
    ):
        day = study_date(reviewed_at, tz, hour)
        monday = day - timedelta(days=day.weekday())
        answers[monday] += 1
        passed[monday] += rating != AGAIN
    mondays = [first + timedelta(weeks=i) for i in range(weeks)]
    return [WeekRetention(m, answers[m], passed[m]) for m in mondays]


# Harder than the middle of FSRS's 1-10 scale: a first answer of Again starts a card above
# it, Hard just under it and Good well under.
HARD_DIFFICULTY = 5.5


def hardest_cards(session: Session, user_id: int, *, limit: int = 10) -> list[HardCard]:
    """The cards forgotten or hard (`HARD_DIFFICULTY`), the most lapses first, then the
    highest difficulty, in the language studied. An easy card is never listed as hard."""
    rows = session.execute(
        select(
            ReviewState.card_id,
            ReviewState.lapses,
            ReviewState.difficulty,
            Deck.slug,
            Deck.default_locale,
            Subscription.locale,
        )
        .join(Card, Card.id == ReviewState.card_id)
        .join(Deck, Deck.id == Card.deck_id)
        # Decks studied now, as the counts by state: one left is no longer a worry here.
        .join(
            Subscription,
            and_(Subscription.user_id == user_id, Subscription.deck_id == Deck.id),
        )
        .where(
            ReviewState.user_id == user_id,
            ReviewState.difficulty.is_not(None),
            or_(ReviewState.lapses > 0, ReviewState.difficulty >= HARD_DIFFICULTY),
            Card.retired_at.is_(None),
            visible_decks(user_id),
        )
        .order_by(ReviewState.lapses.desc(), ReviewState.difficulty.desc(), Card.id)
        .limit(limit)
    ).all()
    ids = [r.card_id for r in rows]
    texts: dict[tuple[int, str], str] = {
        (t.card_id, t.locale): t.question
        for t in session.execute(
            select(CardText.card_id, CardText.locale, CardText.question).where(
                CardText.card_id.in_(ids)
            )
        )
    }
    cards = []
    for r in rows:
        # The language studied, or the deck's own when the card lacks it.
        locale = r.locale if (r.card_id, r.locale) in texts else r.default_locale
        cards.append(
            HardCard(
                card_id=r.card_id,
                deck_slug=r.slug,
                question=texts.get((r.card_id, locale), ""),
                locale=locale,
                lapses=r.lapses,
                difficulty=float(r.difficulty or 0),
            )
        )
    return cards
