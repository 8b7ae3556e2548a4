"""The due queue: which card a person sees next, and how many remain today.

Rules (as Anki's): learning and relearning cards due by now come first; then review cards
due before the end of the person's study day, up to the daily review limit; then new cards
in deck order (a forgotten card at the place forgetting gave it), up to the daily new limit
minus those already introduced today. Cards the person suspended, or buried until a later
study day, are neither shown nor counted. When nothing else is left, learning cards due
within the next 20 minutes are shown early (learn-ahead).
Limits are per deck: a subscription may override the person's defaults, and custom study
may add cards on top of them for one day (`custom_study.extend_limits`). The statements are
in `hot_sql.next_card`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from ..hot_sql import next_card as sql
from ..hot_sql.next_card import REVIEWED_COUNTED
from ..hot_sql.rawsql import Executor, executor
from .days import Clock, day_bounds, study_date
from .scheduling import CardState, SchedulerConfig
from .state_rows import config_from, forgotten_state, state_from_row

LEARN_AHEAD = timedelta(minutes=20)


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
    forgotten: int = 0  # of its new cards, those forgotten (new again, `card_actions.forget`)
    # Its limits for the day and what counts against them, for a parent deck's limits to cap
    # its subdecks' when it is studied (`_within_parents`). `reviewed` is None where not counted
    # (no review due: the limit had nothing to limit).
    new_limit: int = 0
    introduced: int = 0
    review_limit: int = 0
    reviewed: int | None = 0


def new_allowance(own: int, pace: int | None) -> int:
    """A day's new cards for a deck: the person's own number, or a team's pace if higher."""
    return own if pace is None else max(own, pace)


def next_card(
    db: Session | Executor,
    user_id: int,
    *,
    now: datetime,
    deck_ids: Collection[int] | Mapping[int, int | None] | None = None,
    clock: Clock | None = None,
) -> tuple[NextCard | None, QueueCounts]:
    """The card to show next and what is left today, of every deck the person studies or of
    `deck_ids`: a deck studied with its subdecks, parents first, each with the deck it is
    under (`subscriptions.with_subdecks`; a plain list puts the others under the first): each
    deck's limits then cap its subdecks' together, as Anki's do. `clock` saves a read when
    it is known."""
    conn = executor(db)
    if clock is None:
        row = sql.clock(conn, user_id)
        if row is None:
            return None, QueueCounts()
        clock = Clock(row.timezone, row.day_start_hour)
    plans, (day_start, day_end) = _plans(conn, user_id, now, deck_ids, clock)
    today = study_date(now, *clock)
    if not plans:
        return None, QueueCounts()
    if deck_ids is not None and len(plans) > 1:
        plans = _within_parents(conn, user_id, plans, _parents(deck_ids), day_start)
    counts = total({d: QueueCounts(p.new, p.learning, p.review) for d, p in plans.items()})
    deck_ids = list(plans)
    first_learning = None
    if counts.learning:
        first_learning = sql.first_learning(conn, user_id, deck_ids, now + LEARN_AHEAD, today)
    if first_learning is not None and first_learning.due <= now:
        return _next(first_learning, "learning", state_from_row(first_learning), plans), counts

    review_decks = [d for d, p in plans.items() if p.review]
    if review_decks:
        first_review = sql.first_review(conn, user_id, review_decks, day_end, today)
        if first_review is not None:
            return _next(first_review, "review", state_from_row(first_review), plans), counts

    for d, plan in plans.items():
        if plan.new:
            new = sql.first_new(conn, user_id, d, today)
            forgotten = sql.first_forgotten(conn, user_id, d, today) if plan.forgotten else None
            if forgotten is not None and (
                new is None
                or (forgotten.new_position, forgotten.card_id) < (new.new_position, new.card_id)
            ):
                return _next(forgotten, "new", forgotten_state(forgotten), plans), counts
            if new is not None:  # None: answered since the counts were read
                return _next(new, "new", None, plans), counts

    if first_learning is not None:
        return _next(first_learning, "learning", state_from_row(first_learning), plans), counts
    return None, counts


def counts_by_deck(
    db: Session | Executor, user_id: int, *, now: datetime, clock: Clock | None = None
) -> dict[int, QueueCounts]:
    """What each subscribed deck has left today, by deck id, counted as `next_card` counts
    (each deck's own limits), in the one statement that plans the queue."""
    return counts_with_subdecks(db, user_id, now=now, clock=clock, subdecks={})[0]


def counts_with_subdecks(
    db: Session | Executor,
    user_id: int,
    *,
    now: datetime,
    subdecks: Mapping[int, Mapping[int, int | None]],
    clock: Clock | None = None,
) -> tuple[dict[int, QueueCounts], dict[int, QueueCounts]]:
    """Each subscribed deck's counts (`counts_by_deck`), and those of each deck of
    `subdecks` (deck id: the deck and its subdecks as `next_card` takes them) studied with
    its subdecks, under their limits."""
    conn = executor(db)
    if clock is None:
        row = sql.clock(conn, user_id)
        if row is None:
            return {}, {}
        clock = Clock(row.timezone, row.day_start_hour)
    plans, (day_start, _day_end) = _plans(conn, user_id, now, None, clock)
    own = {d: QueueCounts(p.new, p.learning, p.review) for d, p in plans.items()}
    with_subdecks = {}
    for head, parents in subdecks.items():
        tree = {d: plans[d] for d in parents if d in plans}
        if head in tree:
            capped = (
                _within_parents(conn, user_id, tree, parents, day_start) if len(tree) > 1 else tree
            )
            with_subdecks[head] = total(
                {d: QueueCounts(p.new, p.learning, p.review) for d, p in capped.items()}
            )
    return own, with_subdecks


def _parents(deck_ids: Collection[int] | Mapping[int, int | None]) -> Mapping[int, int | None]:
    if isinstance(deck_ids, Mapping):
        return deck_ids
    head = next(iter(deck_ids))
    return {d: None if d == head else head for d in deck_ids}


def _within_parents(
    conn: Executor,
    user_id: int,
    plans: dict[int, _DeckPlan],
    parents: Mapping[int, int | None],
    day_start: datetime,
) -> dict[int, _DeckPlan]:
    """The plans of a deck studied with its subdecks (`parents`: each deck's parent deck):
    the new and review cards a deck and its subdecks show together stay within that deck's
    own limits, less what all of them were given today, at every level, as Anki's limits
    nest (the studied deck's cap everything under it). Learning cards are not limited. A
    parent not studied caps nothing."""
    plans = {d: plans[d] for d in parents if d in plans}  # parents first

    def above(deck_id: int | None) -> Iterator[int]:
        """The deck and the decks it is under, those with a plan."""
        while deck_id is not None:
            if deck_id in plans:
                yield deck_id
            deck_id = parents.get(deck_id)

    # What each deck's limits leave for it and everything under it.
    new_left = {d: p.new_limit for d, p in plans.items()}
    review_left = {d: p.review_limit for d, p in plans.items()}
    for d, p in plans.items():
        for a in above(d):
            new_left[a] -= p.introduced
    if any(p.review for p in plans.values()):
        most = max(p.review_limit for p in plans.values())  # the most an answer can count for
        for d, p in plans.items():
            if p.reviewed is None or p.reviewed >= REVIEWED_COUNTED:
                # Not counted (no review due), or counted only so far.
                reviewed = sql.reviewed(conn, user_id, d, day_start, most)
            else:
                reviewed = p.reviewed
            for a in above(d):
                review_left[a] -= reviewed
    capped = {}
    for d, p in plans.items():
        chain = list(above(d))
        new = max(0, min(p.new, *(new_left[a] for a in chain)))
        review = max(0, min(p.review, *(review_left[a] for a in chain)))
        for a in chain:
            new_left[a] -= new
            review_left[a] -= review
        capped[d] = replace(p, new=new, review=review)
    return capped


def total(counts: dict[int, QueueCounts]) -> QueueCounts:
    """The decks' counts added up."""
    values = counts.values()
    return QueueCounts(
        new=sum(c.new for c in values),
        learning=sum(c.learning for c in values),
        review=sum(c.review for c in values),
    )


class _UserSettings:
    """The `user_*` columns of a plan row, in `config_from`'s settings shape."""

    def __init__(self, row: Any) -> None:
        self.desired_retention = row.user_desired_retention
        self.learning_steps = row.user_learning_steps
        self.relearning_steps = row.user_relearning_steps
        self.maximum_interval = row.user_maximum_interval
        self.parameters = row.parameters


def _plans(
    conn: Executor, user_id: int, now: datetime, deck_ids: Collection[int] | None, clock: Clock
) -> tuple[dict[int, _DeckPlan], tuple[datetime, datetime]]:
    """Each subscribed deck's locale, settings and what it has to show today; the day's
    start and end."""
    day_start, day_end = day_bounds(now, clock.timezone, clock.day_start_hour)
    params = {
        "user_id": user_id,
        "day_start": day_start,
        "day_end": day_end,
        "learn_ahead_until": now + LEARN_AHEAD,
        "today": study_date(now, *clock),
    }
    plans: dict[int, _DeckPlan] = {}
    for row in sql.plans(conn, params, deck_ids):
        own = row.new_per_day if row.new_per_day is not None else row.user_new_per_day
        new_limit = new_allowance(own, row.paced_new_per_day)
        review_limit = (
            row.reviews_per_day if row.reviews_per_day is not None else row.user_reviews_per_day
        )
        if row.extended_on == params["today"]:
            new_limit += row.extra_new
            review_limit += row.extra_reviews
        studied = row.states - row.retired_states - row.forgotten
        new_left = row.live_cards - studied - row.hidden_new
        due_reviews = row.review - row.retired_review - row.hidden_review
        reviewed = row.reviewed
        if reviewed >= REVIEWED_COUNTED and review_limit > reviewed and due_reviews:
            reviewed = sql.reviewed(conn, user_id, row.deck_id, day_start, review_limit)
        plans[row.deck_id] = _DeckPlan(
            slug=row.slug,
            config=config_from(_UserSettings(row), row, row.deck_parameters),
            new=max(0, min(new_left, new_limit - row.introduced)),
            learning=row.learning - row.retired_learning - row.hidden_learning,
            review=max(0, min(due_reviews, review_limit - reviewed)),
            forgotten=row.forgotten,
            new_limit=new_limit,
            introduced=row.introduced,
            review_limit=review_limit,
            reviewed=reviewed if row.review else None,
        )
    return plans, (day_start, day_end)


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
