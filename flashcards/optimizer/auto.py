"""The automatic trigger: who is due for a fit, and fitting them one at a time, outside any request.

A person is due when their review log holds enough answers new since their last fit (or since
the start, never fitted), on enough cards, and that fit is old enough. `flashcards fsrs
optimize --due`, run by cron, fits everyone due; no request ever waits on it.

"New since the last fit" is by review-log row, not by date: the fit records the newest row
there was when its history was read (`FsrsParameterSet.history_end_log_id`), so answers
imported later with past dates still count as new.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, Select, and_, func, or_, select
from sqlalchemy.exc import NoResultFound
from sqlalchemy.orm import Session, aliased

from ..errors import NotEnoughHistory
from ..storage import engine as storage_engine
from ..storage.models import Deck, FsrsParameterSet, ReviewLog, User
from . import store, team
from .fit import load_optimizer


@dataclass(frozen=True)
class Thresholds:
    answers: int = 400  # answers new since the last fit...
    cards: int = 50  # ...on at least this many cards...
    days: int = 7  # ...and the last fit at least this many days ago

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Thresholds:
        return cls(
            answers=int(config["FSRS_AUTO_MIN_ANSWERS"]),
            cards=int(config["FSRS_AUTO_MIN_CARDS"]),
            days=int(config["FSRS_AUTO_MIN_DAYS"]),
        )


@dataclass(frozen=True)
class Due:
    user_id: int
    email: str
    new_answers: int
    new_cards: int


@dataclass(frozen=True)
class Result:
    """One person's turn in a run: the set recorded, or why there is none."""

    due: Due
    fitted: FsrsParameterSet | None
    skipped: str | None  # the reason, when nothing was fitted


def due_for_fit(session: Session, thresholds: Thresholds, *, now: datetime) -> list[Due]:
    """Everyone due for a fit, in one statement over the review log and the parameter sets."""
    answers, cards, query = _due(ReviewLog.user_id, FsrsParameterSet.user_id, thresholds, now)
    query = (
        query.add_columns(User.id, User.email, answers, cards)
        .join(User, User.id == ReviewLog.user_id)
        .group_by(User.id, User.email)
        .order_by(User.id)
    )
    return [Due(*row) for row in session.execute(query)]


@dataclass(frozen=True)
class DeckDue:
    deck_id: int
    slug: str
    new_answers: int  # by anyone: the members' when fitted
    new_cards: int


def team_decks_due(session: Session, thresholds: Thresholds, *, now: datetime) -> list[DeckDue]:
    """Every team deck due for a fit of its members' answers (`optimizer.team`), on the same
    thresholds as a person's."""
    answers, cards, query = _due(ReviewLog.deck_id, FsrsParameterSet.deck_id, thresholds, now)
    query = (
        query.add_columns(Deck.id, Deck.slug, answers, cards)
        .join(Deck, Deck.id == ReviewLog.deck_id)
        .where(Deck.owner_team_id.is_not(None))
        .group_by(Deck.id, Deck.slug)
        .order_by(Deck.id)
    )
    return [DeckDue(*row) for row in session.execute(query)]


def _due(
    log_owner: Any, set_owner: Any, thresholds: Thresholds, now: datetime
) -> tuple[Any, Any, Select[Any]]:
    """The review log's answers and cards new since each owner's (a person's, a deck's)
    latest fit, and the statement that keeps the owners past the thresholds."""
    latest = (
        select(set_owner.label("owner"), func.max(FsrsParameterSet.id).label("id"))
        .where(set_owner.is_not(None))
        .group_by(set_owner)
        .subquery()
    )
    last = aliased(FsrsParameterSet)
    new_since_last = or_(
        and_(last.history_end_log_id.is_not(None), ReviewLog.id > last.history_end_log_id),
        # A set recorded without its end (before migration 0016): the answers dated after it.
        and_(last.history_end_log_id.is_(None), ReviewLog.reviewed_at > last.created_at),
    )
    answers = func.count(ReviewLog.id)
    cards = func.count(ReviewLog.card_id.distinct())
    query = (
        select()
        .select_from(ReviewLog)
        .outerjoin(latest, latest.c.owner == log_owner)
        .outerjoin(last, last.id == latest.c.id)
        .where(
            or_(
                last.id.is_(None),  # never fitted: every answer is new
                and_(last.created_at <= now - timedelta(days=thresholds.days), new_since_last),
            )
        )
        .having(answers >= thresholds.answers, cards >= thresholds.cards)
    )
    return answers, cards, query


def fit_due(
    engine: Engine, thresholds: Thresholds, *, now: Callable[[], datetime]
) -> Iterator[Result]:
    """Fit everyone due, one at a time, each as a read, a fit outside any transaction and one
    short write; yielded as each is done, so the caller can report progress.

    A person with too little history to fit is skipped, as is one deleted meanwhile; any other
    error (the optimizer missing) stops the run, since it would stop every fit.
    """
    # Said first, even with nobody due: a cron job on a server without the optimizer is a
    # mistake to report every night, not a quiet run that fits nobody.
    load_optimizer()
    with Session(engine) as session:
        due = due_for_fit(session, thresholds, now=now())
    for person in due:
        try:
            with Session(engine) as reading:
                fitted = store.optimize(
                    reading,
                    lambda: storage_engine.transaction(engine),
                    person.user_id,
                    now=now(),
                )
        except NotEnoughHistory as exc:
            yield Result(person, None, str(exc))
        except NoResultFound:
            yield Result(person, None, "the account no longer exists")
        else:
            yield Result(person, fitted, None)


@dataclass(frozen=True)
class DeckResult:
    due: DeckDue
    fitted: FsrsParameterSet | None
    skipped: str | None


def fit_due_team_decks(
    engine: Engine, thresholds: Thresholds, *, now: Callable[[], datetime]
) -> Iterator[DeckResult]:
    """As `fit_due`, for the team decks due (`optimizer.team`)."""
    load_optimizer()
    with Session(engine) as session:
        due = team_decks_due(session, thresholds, now=now())
    for deck_due in due:
        try:
            with Session(engine) as reading:
                deck = reading.get(Deck, deck_due.deck_id)
                if deck is None:
                    yield DeckResult(deck_due, None, "the deck no longer exists")
                    continue
                fitted = team.optimize(
                    reading, lambda: storage_engine.transaction(engine), deck, now=now()
                )
        except NotEnoughHistory as exc:
            yield DeckResult(deck_due, None, str(exc))
        else:
            yield DeckResult(deck_due, fitted, None)
