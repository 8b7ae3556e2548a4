"""Decks a team assigns to its members, with an optional due date, and how each member
is getting on (team pacing itself is `pacing`).

On track: by the end of each study day a member should have introduced their share of the
deck, ceil(total * elapsed / span), counted in days from the day the deck was assigned (or
they joined) to the due date. Before the due date they are "on_track" or "behind"; after it
"done" when every card is introduced, else "behind".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from ..decks.access import visible_decks
from ..errors import DueDateInPast, NotFound
from ..people.accounts import user_clock
from ..srs.days import study_date
from ..srs.queue import new_allowance
from ..srs.subscriptions import card_counts, subscribe
from ..storage.models import (
    Deck,
    DeckText,
    SchedulerSettings,
    Subscription,
    Team,
    TeamAssignment,
    TeamMember,
    User,
)
from .pacing import introduced_counts, refresh_pacing
from .roles import LEADS, check_slug, member_ids, membership


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
        raise DueDateInPast(
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
    session: Session, team_id: int, user_id: int, *, now: datetime, refresh: bool = True
) -> list[AssignmentView]:
    """The team's assignments with the caller's own progress (and nobody else's).

    `refresh`: bring the caller's paced allowances up to date first (a write, in `session`);
    a caller that checked them with a read (`pacing.keep_pacing_current`) passes False.
    """
    membership(session, team_id, user_id)
    if refresh:
        refresh_pacing(session, user_id, now=now)
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
    # Each figure read for all the team's decks at once: a library lists every team's.
    deck_ids = [deck.id for _assignment, deck in rows]
    totals = card_counts(session, deck_ids)
    introduced_of = introduced_counts(session, user_id, deck_ids)
    subs = {
        sub.deck_id: sub
        for sub in session.scalars(
            select(Subscription).where(
                Subscription.user_id == user_id, Subscription.deck_id.in_(deck_ids)
            )
        )
    }
    titles = deck_titles(
        session, [(deck.id, deck.slug, deck.default_locale) for _a, deck in rows], user.locale
    )
    views = []
    for assignment, deck in rows:
        total = totals.get(deck.id, 0)
        introduced = introduced_of.get(deck.id, 0)
        start_at = max(assignment.created_at, joined) if joined else assignment.created_at
        start = study_date(start_at, user.timezone, user.day_start_hour)
        sub = subs.get(deck.id)
        allowance = None
        if sub is not None and sub.paced_new_per_day is not None:
            own = sub.new_per_day if sub.new_per_day is not None else default
            allowance = new_allowance(own, sub.paced_new_per_day)
        title, title_locale = titles[deck.id]
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


def deck_titles(
    session: Session, decks: Sequence[tuple[int, str, str]], locale: str | None
) -> dict[int, tuple[str, str | None]]:
    """The title of each deck (id, slug, default language) in `locale`, else in its default
    language, with that language; in one read. With no `locale`, the default language's."""
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


@dataclass(frozen=True)
class DeckAssignment:
    """A team's assignment of a deck, as its member sees it beside the deck."""

    team_id: int
    team_name: str
    due_date: date | None
    status: str  # the member's own (`status`)


def assignments_by_deck(
    session: Session, user_id: int, *, now: datetime
) -> dict[int, list[DeckAssignment]]:
    """The decks the person's teams assign them, each with its teams' due dates and their
    own progress; a read (pacing is brought up to date where they study)."""
    # One read for the many who have none; the rest read their teams' (`list_assignments`).
    teams = session.execute(
        select(Team.id, Team.name)
        .join(TeamMember, TeamMember.team_id == Team.id)
        .where(
            TeamMember.user_id == user_id,
            select(TeamAssignment.deck_id).where(TeamAssignment.team_id == Team.id).exists(),
        )
        .order_by(Team.name, Team.id)
    ).all()
    found: dict[int, list[DeckAssignment]] = {}
    for team_id, name in teams:
        for view in list_assignments(session, team_id, user_id, now=now, refresh=False):
            found.setdefault(view.deck_id, []).append(
                DeckAssignment(team_id, name, view.due_date, view.status)
            )
    return found
