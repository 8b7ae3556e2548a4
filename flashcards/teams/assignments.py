"""Decks a team assigns to its members, with an optional due date, and pacing.

Pacing. With a due date, a member's daily new-card allowance for the deck is

    max(their own new cards per day for the deck, ceil(N / D))

where N is the number of the deck's cards still new to them at the start of their study day
(cards they introduced today count as still new, so the allowance does not shrink during
the day) and D the study days left including today: due date - today + 1, at least 1. On
or after the due date everything left is allowed. The pace, ceil(N / D), is stored in the
subscription's `paced_new_per_day`, apart from the person's own override, and recomputed
when the deck is assigned, when someone joins, and each day on read (`refresh_pacing`,
called when members look at their assignments; the study queue calls it too). When several
teams assign the same deck, the earliest due date that is not past wins. Without a due date
(or when the assignment ends) the pace is cleared and the person's own setting alone applies.

On track: by the end of each study day a member should have introduced their share of the
deck, ceil(total * elapsed / span), counted in days from the day the deck was assigned (or
they joined) to the due date. Before the due date they are "on_track" or "behind"; after it
"done" when every card is introduced, else "behind".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import bindparam, delete, func, or_, select
from sqlalchemy.orm import Session

from ..access import visible_decks
from ..accounts import user_clock
from ..days import day_bounds, study_date
from ..errors import InvalidInput, NotFound
from ..models import (
    Card,
    Deck,
    DeckText,
    ReviewState,
    SchedulerSettings,
    Subscription,
    TeamAssignment,
    TeamMember,
    User,
)
from ..queue import new_allowance
from ..rawsql import Executor, Statement, executor
from ..subscriptions import subscribe
from .roles import LEADS, check_slug, member_ids, membership


def team_pace(remaining_new: int, today: date, due: date) -> int:
    """The new cards a day that introduce `remaining_new` cards by `due`."""
    days_left = max(1, (due - today).days + 1)
    return math.ceil(remaining_new / days_left)


def expected_introduced(total: int, start: date, today: date, due: date) -> int:
    """Cards a member following the pace has introduced before `today` begins."""
    span = max(1, (due - start).days + 1)
    elapsed = min(span, max(0, (today - start).days))
    return math.ceil(total * elapsed / span)


def status(introduced: int, total: int, start: date, today: date, due: date | None) -> str:
    if introduced >= total:
        return "done"
    if due is None:
        return "no_due_date"
    if today > due:
        return "behind"
    return "on_track" if introduced >= expected_introduced(total, start, today, due) else "behind"


def find_assignable_deck(session: Session, team_id: int, user_id: int, slug: str) -> Deck:
    """A shipped deck or one of the team's own; nobody's private deck, no other team's."""
    deck = session.scalar(select(Deck).where(Deck.slug == check_slug(slug), visible_decks(user_id)))
    if deck is None or deck.owner_user_id is not None or deck.owner_team_id not in (None, team_id):
        raise NotFound(f"no deck '{slug}'")
    return deck


def assign(
    session: Session, team_id: int, actor_id: int, slug: str, due: date | None, *, now: datetime
) -> tuple[TeamAssignment, bool]:
    """Assign (or change the due date of) a deck; every member is subscribed. True if new.

    A due date before the lead's today is refused: every member would be behind at once.
    """
    membership(session, team_id, actor_id, *LEADS)
    deck = find_assignable_deck(session, team_id, actor_id, slug)
    if due is not None:
        check_due_date(session, actor_id, due, now=now)
    assignment = session.get(TeamAssignment, (team_id, deck.id))
    created = assignment is None
    if assignment is None:
        assignment = TeamAssignment(team_id=team_id, deck_id=deck.id, due_date=due, created_at=now)
        session.add(assignment)
    else:
        assignment.due_date = due
    session.flush()
    for user_id in member_ids(session, team_id):
        # Their UI language (else the deck's default); an existing choice is kept.
        subscribe(session, user_id, deck, None, now=now)
        refresh_pacing(session, user_id, now=now, deck_ids=[deck.id])
    return assignment, created


def check_due_date(session: Session, actor_id: int, due: date, *, now: datetime) -> None:
    # The lead's study day, as pacing counts days: at 1:00 yesterday's date is still today.
    clock = user_clock(session, actor_id)
    today = study_date(now, clock.timezone, clock.day_start_hour)
    if due < today:
        raise InvalidInput(
            f"due_date must be today ({today.isoformat()} for you) or later", field="due_date"
        )


def unassign(session: Session, team_id: int, actor_id: int, slug: str, *, now: datetime) -> None:
    """End an assignment; members keep their subscription (and progress) but not the pace."""
    membership(session, team_id, actor_id, *LEADS)
    deck = find_assignable_deck(session, team_id, actor_id, slug)
    if session.get(TeamAssignment, (team_id, deck.id)) is None:
        raise NotFound(f"deck '{slug}' is not assigned to this team")
    session.execute(
        delete(TeamAssignment).where(
            TeamAssignment.team_id == team_id, TeamAssignment.deck_id == deck.id
        )
    )
    for user_id in member_ids(session, team_id):
        refresh_pacing(session, user_id, now=now, deck_ids=[deck.id])


def subscribe_to_team_assignments(
    session: Session, team_id: int, user_id: int, *, now: datetime
) -> None:
    """For someone who just joined: every deck the team has assigned."""
    decks = session.scalars(
        select(Deck)
        .join(TeamAssignment, TeamAssignment.deck_id == Deck.id)
        .where(TeamAssignment.team_id == team_id)
    ).all()
    for deck in decks:
        subscribe(session, user_id, deck, None, now=now)
    refresh_pacing(session, user_id, now=now, deck_ids=[d.id for d in decks])


# It runs every time someone's queue is shown, so on the direct executor too.
_ASSIGNED = Statement(
    select(TeamAssignment.deck_id, TeamAssignment.due_date)
    .join(TeamMember, TeamMember.team_id == TeamAssignment.team_id)
    .where(TeamMember.user_id == bindparam("user_id"))
)


def assigned(db: Session | Executor, user_id: int) -> list[tuple[int, date | None]]:
    """(deck, due date) of every assignment of every team the user belongs to."""
    return [(deck_id, due) for deck_id, due in executor(db).all(_ASSIGNED, {"user_id": user_id})]


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
            remaining = remaining_new(session, user_id, deck_id, since=day_start)
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


def remaining_new(session: Session, user_id: int, deck_id: int, *, since: datetime) -> int:
    """Live cards not introduced before `since` (the start of the user's study day)."""
    seen = introduced_count(session, user_id, deck_id, before=since)
    return max(0, card_count(session, deck_id) - seen)


def card_count(session: Session, deck_id: int) -> int:
    count = session.scalar(
        select(func.count()).where(Card.deck_id == deck_id, Card.retired_at.is_(None))
    )
    return int(count or 0)


@dataclass(frozen=True)
class AssignmentView:
    deck_id: int
    slug: str
    title: str
    title_locale: str | None  # None: the deck has no title, `title` is its slug
    team_deck: bool
    due_date: date | None
    total: int
    introduced: int
    new_per_day: int | None  # the caller's allowance today when paced; None: not paced
    status: str


def list_assignments(
    session: Session, team_id: int, user_id: int, *, now: datetime
) -> list[AssignmentView]:
    """The team's assignments with the caller's own progress (and nobody else's): a read,
    showing the paces as stored (callers bring them up to date first, `keep_pacing_current`).
    """
    membership(session, team_id, user_id)
    user = session.execute(
        select(User.locale, User.timezone, User.day_start_hour).where(User.id == user_id)
    ).one()
    today = study_date(now, user.timezone, user.day_start_hour)
    default: int = session.execute(
        select(SchedulerSettings.new_per_day).where(SchedulerSettings.user_id == user_id)
    ).scalar_one()
    joined = session.scalar(
        select(TeamMember.joined_at).where(
            TeamMember.team_id == team_id, TeamMember.user_id == user_id
        )
    )
    rows = session.execute(
        select(TeamAssignment, Deck)
        .join(Deck, Deck.id == TeamAssignment.deck_id)
        .where(TeamAssignment.team_id == team_id)
        .order_by(TeamAssignment.due_date.is_(None), TeamAssignment.due_date, Deck.slug)
    ).all()
    views = []
    for assignment, deck in rows:
        total = card_count(session, deck.id)
        introduced = introduced_count(session, user_id, deck.id)
        start_at = max(assignment.created_at, joined) if joined else assignment.created_at
        start = study_date(start_at, user.timezone, user.day_start_hour)
        sub = session.get(Subscription, (user_id, deck.id))
        allowance = None
        if sub is not None and sub.paced_new_per_day is not None:
            own = sub.new_per_day if sub.new_per_day is not None else default
            allowance = new_allowance(own, sub.paced_new_per_day)
        title, title_locale = deck_title(session, deck, user.locale)
        views.append(
            AssignmentView(
                deck_id=deck.id,
                slug=deck.slug,
                title=title,
                title_locale=title_locale,
                team_deck=deck.owner_team_id is not None,
                due_date=assignment.due_date,
                total=total,
                introduced=introduced,
                new_per_day=allowance,
                status=status(introduced, total, start, today, assignment.due_date),
            )
        )
    return views


def introduced_count(
    session: Session, user_id: int, deck_id: int, *, before: datetime | None = None
) -> int:
    """Live cards of the deck the user has seen (before `before`, when given)."""
    query = (
        select(func.count())
        .select_from(ReviewState)
        .join(Card, Card.id == ReviewState.card_id)
        .where(
            ReviewState.user_id == user_id,
            ReviewState.deck_id == deck_id,
            Card.retired_at.is_(None),
        )
    )
    if before is not None:
        query = query.where(ReviewState.introduced_at < before)
    return int(session.scalar(query) or 0)


def deck_title(session: Session, deck: Deck, locale: str) -> tuple[str, str | None]:
    """The deck's title in `locale`, else in its default language, and that language."""
    return deck_titles(session, [(deck.id, deck.slug, deck.default_locale)], locale)[deck.id]


def deck_titles(
    session: Session, decks: Sequence[tuple[int, str, str]], locale: str | None
) -> dict[int, tuple[str, str | None]]:
    """`deck_title` of each (id, slug, default language), in one read; with no `locale`,
    the default language's titles."""
    texts: dict[int, dict[str, str]] = {}
    for deck_id, text_locale, title in session.execute(
        select(DeckText.deck_id, DeckText.locale, DeckText.title).where(
            DeckText.deck_id.in_([d[0] for d in decks])
        )
    ):
        texts.setdefault(deck_id, {})[text_locale] = title
    return {
        deck_id: _title(texts.get(deck_id, {}), slug, default_locale, locale)
        for deck_id, slug, default_locale in decks
    }


def _title(
    texts: dict[str, str], slug: str, default_locale: str, locale: str | None
) -> tuple[str, str | None]:
    for shown in (locale, default_locale):
        if shown is not None and texts.get(shown):
            # A copy of the default language's title is written in that language.
            same = texts[shown] == texts.get(default_locale)
            return texts[shown], default_locale if same else shown
    return slug, None


@dataclass(frozen=True)
class DeckChoice:
    slug: str
    title: str
    title_locale: str | None  # None: the deck has no title, `title` is its slug


def assignable_decks(session: Session, team_id: int, locale: str) -> list[DeckChoice]:
    """The shipped decks and the team's own, which the team may assign, titled in `locale`
    when the deck has it, sorted by that title."""
    decks = session.execute(
        select(Deck.id, Deck.slug, Deck.default_locale).where(
            Deck.owner_user_id.is_(None),
            or_(Deck.owner_team_id.is_(None), Deck.owner_team_id == team_id),
        )
    ).all()
    titles = deck_titles(session, [(d.id, d.slug, d.default_locale) for d in decks], locale)
    choices = [DeckChoice(d.slug, *titles[d.id]) for d in decks]
    return sorted(choices, key=lambda c: (c.title.casefold(), c.slug))
