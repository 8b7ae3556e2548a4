"""Team pacing: the paced new-card allowance of a deck a team assigned with a due date.

With a due date, a member's daily new-card allowance for the deck is

    max(their own new cards per day for the deck, ceil(N / D))

where N is the number of the deck's cards still new to them at the start of their study day
(cards they introduced today count as still new, so the allowance does not shrink during
the day; cards they suspended, or buried until a later day, do not count, as the queue does
not offer them) and D the study days left including today: due date - today + 1, at least 1. On
or after the due date everything left is allowed. The pace, ceil(N / D), is stored in the
subscription's `paced_new_per_day`, apart from the person's own override, and recomputed
when the deck is assigned, when someone joins, and each day on read (`keep_pacing_current`,
called when members look at their assignments; the study queue calls it too). When several
teams assign the same deck, the earliest due date that is not past wins. Without a due date
(or when the assignment ends) the pace is cleared and the person's own setting alone applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import date, datetime

from sqlalchemy import ColumnElement, exists, func, or_, select
from sqlalchemy.orm import Session

from ..hot_sql import pacing as pacing_sql
from ..hot_sql.rawsql import Executor, executor
from ..people.accounts import user_clock
from ..srs.days import day_bounds, study_date
from ..srs.state_rows import NEW_STATE
from ..storage.models import Card, CardMark, ReviewState, Subscription


def team_pace(remaining_new: int, today: date, due: date) -> int:
    """The new cards a day that introduce `remaining_new` cards by `due`."""
    days_left = max(1, (due - today).days + 1)
    return math.ceil(remaining_new / days_left)


def assigned(db: Session | Executor, user_id: int) -> list[tuple[int, date | None]]:
    """(deck, due date) of every assignment of every team the user belongs to."""
    return pacing_sql.assigned(executor(db), user_id)


def _due_dates(rows: list[tuple[int, date | None]], today: date) -> dict[int, date | None]:
    """Per deck assigned to the user by any of their teams, the due date that paces it."""
    result: dict[int, date | None] = {}
    for deck_id, due in rows:
        best = result.get(deck_id)
        if deck_id not in result or (
            due is not None and (best is None or _earlier(due, best, today))
        ):
            result[deck_id] = due
    return result


def _earlier(a: date, b: date, today: date) -> bool:
    # An upcoming due date beats a past one; among upcoming ones (or past ones) the earliest.
    if (a >= today) != (b >= today):
        return a >= today
    return a < b


def refresh_pacing(
    session: Session,
    user_id: int,
    *,
    now: datetime,
    deck_ids: list[int] | None = None,
    assigned_decks: list[tuple[int, date | None]] | None = None,
) -> bool:
    """Set (or clear) the team pace of the user's subscriptions.

    `deck_ids` limits the work to those decks; by default every deck a team assigned them.
    `assigned_decks` is what `assigned` returned, when the caller has read it already.
    Returns whether any allowance changed.
    """
    changes = pace_changes(
        session, user_id, now=now, deck_ids=deck_ids, assigned_decks=assigned_decks
    )
    for sub, pace in changes:
        sub.paced_new_per_day = pace
    session.flush()
    return bool(changes)


def pace_changes(
    session: Session,
    user_id: int,
    *,
    now: datetime,
    deck_ids: list[int] | None = None,
    assigned_decks: list[tuple[int, date | None]] | None = None,
) -> list[tuple[Subscription, int | None]]:
    """The subscriptions whose team pace is out of date, with the pace each should have: a
    read (see `refresh_pacing` for the arguments)."""
    if assigned_decks is None:
        assigned_decks = assigned(session, user_id)
    if not assigned_decks and not deck_ids:
        return []  # the common case, people in no team: one indexed read
    user = user_clock(session, user_id)
    today = study_date(now, user.timezone, user.day_start_hour)
    dues = _due_dates(assigned_decks, today)
    targets = list(dues) if deck_ids is None else deck_ids
    if not targets:
        return []
    day_start, _ = day_bounds(now, user.timezone, user.day_start_hour)
    changes: list[tuple[Subscription, int | None]] = []
    for deck_id in targets:
        sub = session.get(Subscription, (user_id, deck_id))
        if sub is None:
            continue
        due = dues.get(deck_id)
        pace = None
        if due is not None:
            remaining = remaining_new(session, user_id, deck_id, since=day_start, today=today)
            pace = team_pace(remaining, today, due)
        if sub.paced_new_per_day != pace:
            changes.append((sub, pace))
    return changes


def keep_pacing_current(
    session: Session,
    user_id: int,
    *,
    now: datetime,
    write: Callable[[], AbstractContextManager[Session]],
    assigned_decks: list[tuple[int, date | None]] | None = None,
) -> bool:
    """Bring team pacing up to date before someone studies or looks at their assignments.

    Paces change at most once a study day, so the check is a read in `session`; only when
    one is out of date does it open `write` (the caller's write unit of work: a request's
    `write_transaction`, a command's `transaction`) and set it there. Returns whether it did.
    """
    if not pace_changes(session, user_id, now=now, assigned_decks=assigned_decks):
        return False
    with write() as writing:
        refresh_pacing(writing, user_id, now=now)
    return True


def remaining_new(
    session: Session, user_id: int, deck_id: int, *, since: datetime, today: date
) -> int:
    """Live cards not introduced before `since` (the start of the user's study day), less
    those the user suspended or buried until after `today`: as the queue, which does not
    offer them, the pace does not ask for them."""
    seen = introduced_count(session, user_id, deck_id, before=since)
    introduced = exists().where(
        ReviewState.user_id == user_id,
        ReviewState.card_id == CardMark.card_id,
        ReviewState.introduced_at < since,
        ReviewState.state != NEW_STATE,
    )
    hidden = session.scalar(
        select(func.count())
        .select_from(CardMark)
        .join(Card, Card.id == CardMark.card_id)
        .where(
            CardMark.user_id == user_id,
            CardMark.deck_id == deck_id,
            Card.retired_at.is_(None),
            or_(CardMark.suspended, CardMark.buried_until > today),
            ~introduced,
        )
    )
    return max(0, card_count(session, deck_id) - seen - int(hidden or 0))


def card_count(session: Session, deck_id: int) -> int:
    count = session.scalar(
        select(func.count()).where(Card.deck_id == deck_id, Card.retired_at.is_(None))
    )
    return int(count or 0)


def introduced_count(
    session: Session, user_id: int, deck_id: int, *, before: datetime | None = None
) -> int:
    """Live cards of the deck the user has seen (before `before`, when given), and not
    forgotten since (new again)."""
    query = (
        select(func.count())
        .select_from(ReviewState)
        .join(Card, Card.id == ReviewState.card_id)
        .where(ReviewState.deck_id == deck_id, *_introduced(user_id))
    )
    if before is not None:
        query = query.where(ReviewState.introduced_at < before)
    return int(session.scalar(query) or 0)


def introduced_counts(session: Session, user_id: int, deck_ids: list[int]) -> dict[int, int]:
    """`introduced_count` of each deck, in one read (a deck with none is left out)."""
    rows = session.execute(
        select(ReviewState.deck_id, func.count())
        .join(Card, Card.id == ReviewState.card_id)
        .where(ReviewState.deck_id.in_(deck_ids), *_introduced(user_id))
        .group_by(ReviewState.deck_id)
    )
    return {deck_id: count for deck_id, count in rows}


def _introduced(user_id: int) -> tuple[ColumnElement[bool], ...]:
    """A person's states of live cards they have seen (`Card` joined)."""
    return (
        ReviewState.user_id == user_id,
        ReviewState.state != NEW_STATE,
        Card.retired_at.is_(None),
    )
