"""The lead's dashboard: each member's progress on the team's assigned decks, the hardest
questions, and the member table as CSV. Owners and managers only, and only about their own
team: every number is restricted to the team's members and the team's decks.

Which decks count: a member's progress (introduced of total, reviews, recall, overdue cards,
answers) counts the assigned decks only, since that is what the team asked of them and what
the per-deck statuses add up to. The hardest questions also take the team's own decks that
are not assigned: their editors want to know which questions trip members up, whoever chose
to study them."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from ..hot_sql.next_card import REVIEW_STATE
from ..srs.days import study_date
from ..srs.scheduling import retrievability
from ..srs.state_rows import NEW_STATE, config_from, state_from_row
from ..srs.subscriptions import card_counts
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    ReviewLog,
    ReviewState,
    SchedulerSettings,
    Subscription,
    TeamAssignment,
    TeamMember,
    User,
)
from .assignments import deck_titles, status
from .roles import LEADS, check_slug, membership

AGAIN = 1


def assigned_deck_ids(session: Session, team_id: int) -> list[int]:
    return list(
        session.scalars(
            select(TeamAssignment.deck_id)
            .where(TeamAssignment.team_id == team_id)
            .order_by(TeamAssignment.deck_id)
        )
    )


def team_deck_ids(session: Session, team_id: int) -> list[int]:
    """The assigned decks and the team's own, assigned or not."""
    assigned = select(TeamAssignment.deck_id).where(TeamAssignment.team_id == team_id)
    return list(
        session.scalars(
            select(Deck.id)
            .where((Deck.owner_team_id == team_id) | Deck.id.in_(assigned))
            .order_by(Deck.id)
        )
    )


@dataclass(frozen=True)
class AssignmentStatus:
    slug: str
    title: str
    title_locale: str | None  # None: the deck has no title, `title` is its slug
    due_date: date | None
    introduced: int
    total: int
    status: str


@dataclass(frozen=True)
class MemberProgress:
    user_id: int
    email: str
    display_name: str
    role: str
    introduced: int
    total: int
    in_review: int
    recall: float | None  # mean predicted recall now over cards in review; None: none yet
    overdue: int
    answers_7d: int
    last_activity: datetime | None
    assignments: list[AssignmentStatus]
    leeches: int = 0  # cards of the assigned decks that are leeches to them


def dashboard(
    session: Session, team_id: int, actor_id: int, *, now: datetime, locale: str | None = None
) -> list[MemberProgress]:
    """Every member's progress; deck titles in `locale` (the viewer's language) when the deck
    has it, else in its default language."""
    membership(session, team_id, actor_id, *LEADS)
    deck_ids = assigned_deck_ids(session, team_id)
    counts = card_counts(session, deck_ids)
    totals = {d: counts.get(d, 0) for d in deck_ids}
    rows = session.execute(
        select(TeamAssignment, Deck.slug, Deck.default_locale)
        .join(Deck, Deck.id == TeamAssignment.deck_id)
        .where(TeamAssignment.team_id == team_id)
        .order_by(Deck.slug)
    ).all()
    titles = deck_titles(session, [(a.deck_id, slug, default) for a, slug, default in rows], locale)
    assigned = [(a, slug, titles[a.deck_id]) for a, slug, _default in rows]
    members = session.execute(
        select(TeamMember, User)
        .join(User, User.id == TeamMember.user_id)
        .where(TeamMember.team_id == team_id)
        .order_by(User.email)
    ).all()
    result = []
    for member, user in members:
        result.append(_member_progress(session, member, user, deck_ids, totals, assigned, now))
    return result


def _member_progress(
    session: Session,
    member: TeamMember,
    user: User,
    deck_ids: list[int],
    totals: dict[int, int],
    assigned: list[tuple[TeamAssignment, str, tuple[str, str | None]]],
    now: datetime,
) -> MemberProgress:
    settings = session.get(SchedulerSettings, user.id)
    subs = {
        s.deck_id: s
        for s in session.scalars(
            select(Subscription).where(
                Subscription.user_id == user.id, Subscription.deck_id.in_(deck_ids)
            )
        )
    }
    states = session.execute(
        select(ReviewState)
        .join(Card, Card.id == ReviewState.card_id)
        .where(
            ReviewState.user_id == user.id,
            ReviewState.deck_id.in_(deck_ids),
            Card.retired_at.is_(None),
        )
    ).scalars()
    introduced: dict[int, int] = {}
    in_review = overdue = 0
    recalls: list[float] = []
    for row in states:
        if row.state == NEW_STATE:
            continue  # forgotten: new again, to be studied again
        introduced[row.deck_id] = introduced.get(row.deck_id, 0) + 1
        if row.state != REVIEW_STATE:
            # A card in learning was seen minutes ago: its recall is near 100 %, which says
            # nothing of what the member will remember (Anki's retention counts reviews too).
            continue
        in_review += 1
        if row.due < now:
            overdue += 1
        state = state_from_row(row)
        if state is not None and settings is not None and row.stability is not None:
            config = config_from(settings, subs.get(row.deck_id))
            recalls.append(retrievability(config, state, now))
    logs = session.execute(
        select(
            func.sum(case((ReviewLog.reviewed_at >= now - timedelta(days=7), 1), else_=0)),
            func.max(ReviewLog.reviewed_at),
        ).where(ReviewLog.user_id == user.id, ReviewLog.deck_id.in_(deck_ids))
    ).one()
    today = study_date(now, user.timezone, user.day_start_hour)
    statuses = []
    for assignment, slug, (title, title_locale) in assigned:
        start_at = max(assignment.created_at, member.joined_at)
        start = study_date(start_at, user.timezone, user.day_start_hour)
        done = introduced.get(assignment.deck_id, 0)
        total = totals.get(assignment.deck_id, 0)
        statuses.append(
            AssignmentStatus(
                slug,
                title,
                title_locale,
                assignment.due_date,
                done,
                total,
                status(done, total, start, today, assignment.due_date),
            )
        )
    leeches = session.scalar(
        select(func.count())
        .select_from(CardMark)
        .join(Card, Card.id == CardMark.card_id)
        .where(
            CardMark.user_id == user.id,
            CardMark.deck_id.in_(deck_ids),
            CardMark.leech.is_(True),
            Card.retired_at.is_(None),
        )
    )
    last = logs[1]
    if last is not None and last.tzinfo is None:  # aggregates bypass the column's type
        last = last.replace(tzinfo=now.tzinfo)
    return MemberProgress(
        user_id=user.id,
        email=user.email,
        display_name=user.display_name,
        role=member.role,
        introduced=sum(introduced.values()),
        total=sum(totals.values()),
        in_review=in_review,
        recall=sum(recalls) / len(recalls) if recalls else None,
        overdue=overdue,
        answers_7d=int(logs[0] or 0),
        last_activity=last,
        assignments=statuses,
        leeches=int(leeches or 0),
    )


@dataclass(frozen=True)
class HardCard:
    card_id: int
    deck: str  # the slug
    deck_title: str
    deck_title_locale: str | None  # None: the deck has no title, `deck_title` is its slug
    key: str
    question: str
    locale: str  # the question's language
    answers: int
    again_share: float
    mean_difficulty: float | None
    leeches: int = 0  # current members to whom it is a leech


def hardest(
    session: Session,
    team_id: int,
    actor_id: int,
    *,
    limit: int = 20,
    slug: str | None = None,
    locale: str | None = None,
    by_leeches: bool = False,
) -> list[HardCard]:
    """Cards of the team's decks (assigned, and its own) by share of Again answers (all
    languages together), then by mean FSRS difficulty, counting only current members; or,
    `by_leeches`, the most leeched first (cards a leech to nobody left out).

    Questions and deck titles are in `locale` (the viewer's language) where the card or deck
    has it, else in the deck's default language."""
    membership(session, team_id, actor_id, *LEADS)
    deck_ids = team_deck_ids(session, team_id)
    if slug is not None:
        check_slug(slug)
        deck_ids = list(
            session.scalars(select(Deck.id).where(Deck.id.in_(deck_ids), Deck.slug == slug))
        )
    members = select(TeamMember.user_id).where(TeamMember.team_id == team_id)
    answers = func.count(ReviewLog.id)
    again = func.sum(case((ReviewLog.rating == AGAIN, 1), else_=0))
    rows = session.execute(
        select(ReviewLog.card_id, answers.label("answers"), again.label("again"))
        .where(ReviewLog.deck_id.in_(deck_ids), ReviewLog.user_id.in_(members))
        .group_by(ReviewLog.card_id)
    ).all()
    difficulty: dict[int, float | None] = dict(
        session.execute(
            select(ReviewState.card_id, func.avg(ReviewState.difficulty))
            .where(ReviewState.deck_id.in_(deck_ids), ReviewState.user_id.in_(members))
            .group_by(ReviewState.card_id)
        ).all()
    )
    leeches: dict[int, int] = {
        row.card_id: int(row.leeches)
        for row in session.execute(
            select(CardMark.card_id, func.count().label("leeches"))
            .where(
                CardMark.deck_id.in_(deck_ids),
                CardMark.user_id.in_(members),
                CardMark.leech.is_(True),
            )
            .group_by(CardMark.card_id)
        )
    }

    def hardness(r: Any) -> tuple[float, float]:
        return -(int(r.again or 0) / r.answers), -(difficulty.get(r.card_id) or 0.0)

    if by_leeches:
        rows = [r for r in rows if leeches.get(r.card_id)]
        ranked = sorted(rows, key=lambda r: (-leeches[r.card_id], *hardness(r)))[:limit]
    else:
        ranked = sorted(rows, key=hardness)[:limit]
    cards = {
        c.id: (c, slug_, default)
        for c, slug_, default in session.execute(
            select(Card, Deck.slug, Deck.default_locale)
            .join(Deck, Deck.id == Card.deck_id)
            .where(Card.id.in_([r.card_id for r in ranked]))
        )
    }
    titles = deck_titles(
        session,
        list({(c.deck_id, slug_, default) for c, slug_, default in cards.values()}),
        locale,
    )
    texts = {
        (t.card_id, t.locale): t.question
        for t in session.scalars(
            select(CardText).where(CardText.card_id.in_([r.card_id for r in ranked]))
        )
    }
    result = []
    for r in ranked:
        card, deck_slug, default_locale = cards[r.card_id]
        mean = difficulty.get(r.card_id)
        shown = locale if locale is not None and texts.get((r.card_id, locale)) else default_locale
        title, title_locale = titles[card.deck_id]
        result.append(
            HardCard(
                card_id=r.card_id,
                deck=deck_slug,
                deck_title=title,
                deck_title_locale=title_locale,
                key=card.key,
                question=texts.get((r.card_id, shown), ""),
                locale=shown,
                answers=int(r.answers),
                again_share=int(r.again or 0) / int(r.answers),
                mean_difficulty=float(mean) if mean is not None else None,
                leeches=leeches.get(r.card_id, 0),
            )
        )
    return result


CSV_HEADER = (
    "email",
    "display_name",
    "role",
    "introduced",
    "total",
    "in_review",
    "predicted_recall",
    "overdue",
    "answers_7d",
    "last_activity",
    "behind",
    "leeches",
)


def members_csv(rows: list[MemberProgress]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    for r in rows:
        writer.writerow(
            [
                _safe(r.email),
                _safe(r.display_name),
                r.role,
                r.introduced,
                r.total,
                r.in_review,
                f"{r.recall:.3f}" if r.recall is not None else "",
                r.overdue,
                r.answers_7d,
                r.last_activity.isoformat() if r.last_activity else "",
                " ".join(a.slug for a in r.assignments if a.status == "behind"),
                r.leeches,
            ]
        )
    return out.getvalue()


def _safe(text: str) -> str:
    # A cell starting with = + - @ is run as a formula by spreadsheets (CSV injection).
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
