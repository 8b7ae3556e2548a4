"""Each person's parameter sets: fit and record, revert, and what is in force.

A fit is three steps, so that no transaction stays open while it computes: `read_history`
(a read), `fit` (no database), `record` (one short write transaction); `optimize` runs the
three in that order for the edges that ask for a fit.

The scheduler reads the parameters in force from `SchedulerSettings.parameters`; adopting a
set writes them there, and a revert writes back those of the set adopted before it (or the
defaults), each in the caller's one transaction. Functions take a `session` and `now` and
never commit, but for `optimize`, which ends its read and writes in the transaction the
caller's `writing` opens.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..errors import NothingToRevert, OptimizerUnavailable
from ..people.accounts import user_clock
from ..storage.models import (
    Deck,
    DeckFsrsParameters,
    FsrsParameterSet,
    ReviewLog,
    SchedulerSettings,
    Subscription,
)
from .fit import (
    DEFAULTS,
    MINIMUM,
    OPTIMIZER_SWITCH,
    FitOutcome,
    HistoryMinimum,
    fit_and_judge,
    load_optimizer,
)
from .items import NEW_BEFORE, LoggedAnswer, TrainingItem, training_items


@dataclass(frozen=True)
class TeamDeckSet:
    """A team deck the person studies whose members' answers were fitted (`optimizer.team`)."""

    deck_id: int
    slug: str
    parameters: tuple[float, ...]
    in_force: bool  # on that deck: the person has no parameters of their own (`config_from`)


@dataclass(frozen=True)
class InForce:
    parameters: tuple[float, ...]  # what the scheduler uses
    set: FsrsParameterSet | None  # where they came from; None: py-fsrs's defaults
    history: list[FsrsParameterSet]  # every fit, newest first
    # Their team decks' sets: in force on those decks while the person has no own parameters.
    team_decks: list[TeamDeckSet] = field(default_factory=list)

    @property
    def reverts_to(self) -> FsrsParameterSet | None:
        """The set a revert would put in force (see `revert`); None: the defaults."""
        standing = [s for s in self.history if s.adopted and s.reverted_at is None]
        return standing[1] if len(standing) > 1 else None


@dataclass(frozen=True)
class History:
    """What a fit needs, read in one snapshot: the items and the parameters then in force."""

    user_id: int
    items: list[TrainingItem]
    parameters: list[float] | None  # None: the defaults
    # The newest review-log row there was: the automatic trigger counts new answers from it.
    end_log_id: int | None  # None: no answers at all
    # Without personal parameters, the team decks' sets the person studies with: a fit must
    # beat them too before the person moves to their own (see `optimizer.team`).
    rivals: tuple[tuple[float, ...], ...] = ()

    @property
    def cards(self) -> int:
        return len({item.card_id for item in self.items})


def read_history(session: Session, user_id: int) -> History:
    """The person's training items from their whole review log (imported answers included)."""
    # The end is read first: an answer written between the two reads is then counted as new
    # at the next automatic run (at worst one fit early), never lost from the count.
    end = session.scalar(select(func.max(ReviewLog.id)).where(ReviewLog.user_id == user_id))
    rows = session.execute(
        select(
            ReviewLog.card_id, ReviewLog.reviewed_at, ReviewLog.rating, ReviewLog.state_before
        ).where(ReviewLog.user_id == user_id)
    )
    answers = (
        LoggedAnswer(row.card_id, row.reviewed_at, row.rating, row.state_before in NEW_BEFORE)
        for row in rows
    )
    items = training_items(answers, user_clock(session, user_id))
    settings = _settings(session, user_id, lock=False)
    return History(user_id, items, settings.parameters, end, _team_rivals(session, settings))


def _team_rivals(session: Session, settings: SchedulerSettings) -> tuple[tuple[float, ...], ...]:
    if settings.parameters:
        return ()  # already on their own, adopted against the team's
    sets = session.scalars(
        select(DeckFsrsParameters.parameters)
        .join(Subscription, Subscription.deck_id == DeckFsrsParameters.deck_id)
        .where(Subscription.user_id == settings.user_id)
        .order_by(DeckFsrsParameters.deck_id)
    )
    return tuple(dict.fromkeys(tuple(parameters) for parameters in sets))


def fit(history: History, minimum: HistoryMinimum = MINIMUM) -> FitOutcome:
    """The fit and its judgement: CPU only, so the caller runs it outside any transaction
    (up to a second for 100,000 answers, which no write lock should wait on)."""
    return fit_and_judge(history.items, history.parameters, minimum, history.rivals)


def record(
    session: Session, history: History, outcome: FitOutcome, *, now: datetime
) -> FsrsParameterSet:
    """Keep the fit, and adopt it if it won against the parameters still in force.

    A fit judged against parameters that changed since the history was read (another fit, a
    revert) is kept, not adopted: it was not shown to beat the new ones.
    """
    settings = _settings(session, history.user_id)
    adopt = outcome.adopt and settings.parameters == history.parameters
    fitted = parameter_set(outcome, now, adopt, history.end_log_id, user_id=history.user_id)
    session.add(fitted)
    if adopt:
        settings.parameters = list(outcome.parameters)
    session.flush()
    return fitted


def parameter_set(
    outcome: FitOutcome,
    now: datetime,
    adopt: bool,
    end_log_id: int | None,
    *,
    user_id: int | None = None,
    deck_id: int | None = None,
) -> FsrsParameterSet:
    """The kept record of one fit, a person's or a team deck's, with its scores."""
    return FsrsParameterSet(
        user_id=user_id,
        deck_id=deck_id,
        parameters=list(outcome.parameters),
        created_at=now,
        answers=outcome.answers,
        cards=outcome.cards,
        log_loss=outcome.scores.log_loss,
        rmse_bins=outcome.scores.rmse_bins,
        previous_log_loss=outcome.previous.log_loss,
        previous_rmse_bins=outcome.previous.rmse_bins,
        default_log_loss=outcome.defaults.log_loss,
        default_rmse_bins=outcome.defaults.rmse_bins,
        adopted=adopt,
        history_end_log_id=end_log_id,
    )


def optimize(
    reading: Session,
    writing: Callable[[], AbstractContextManager[Session]],
    user_id: int,
    *,
    now: datetime,
    minimum: HistoryMinimum = MINIMUM,
) -> FsrsParameterSet:
    """Read the history in `reading`, end that read, fit, and record the fit in the one
    transaction `writing()` opens and commits (a request's `write_transaction`).

    A fit takes up to a second: no snapshot stays open and no write lock is held while it
    computes (on SQLite, anyone's answer would wait on it). The row is returned as recorded.
    """
    history = read_history(reading, user_id)
    reading.rollback()  # the read is over: nothing it wrote, no snapshot kept while fitting
    outcome = fit(history, minimum)
    with writing() as session:
        return record(session, history, outcome, now=now)


class Unavailable(Enum):
    """Why this server cannot fit parameters, for a page to say in the person's language."""

    SWITCHED_OFF = "switched-off"  # FLASHCARDS_OPTIMIZER=off
    NOT_INSTALLED = "not-installed"  # the optional package is missing


def unavailable() -> Unavailable | None:
    """None when a fit can run here; else why not (`load_optimizer` words it in English)."""
    try:
        load_optimizer()
    except OptimizerUnavailable:
        if os.environ.get(OPTIMIZER_SWITCH, "").lower() == "off":
            return Unavailable.SWITCHED_OFF
        return Unavailable.NOT_INSTALLED
    return None


def revert(session: Session, user_id: int, *, now: datetime) -> InForce:
    """Return to the set adopted before the one in force, or to the defaults."""
    settings = _settings(session, user_id)
    standing = _adopted_standing(session, user_id)
    if not standing:
        raise NothingToRevert(
            "the parameters in force are the defaults; there is nothing to revert"
        )
    standing[0].reverted_at = now
    settings.parameters = list(standing[1].parameters) if len(standing) > 1 else None
    session.flush()
    return in_force(session, user_id)


def in_force(session: Session, user_id: int) -> InForce:
    settings = _settings(session, user_id, lock=False)
    standing = _adopted_standing(session, user_id)
    history = list(
        session.scalars(
            select(FsrsParameterSet)
            .where(FsrsParameterSet.user_id == user_id)
            .order_by(FsrsParameterSet.id.desc())
        )
    )
    parameters = tuple(settings.parameters) if settings.parameters else DEFAULTS
    team_decks = [
        TeamDeckSet(deck_id, slug, tuple(team_parameters), not settings.parameters)
        for deck_id, slug, team_parameters in session.execute(
            select(Deck.id, Deck.slug, DeckFsrsParameters.parameters)
            .join(DeckFsrsParameters, DeckFsrsParameters.deck_id == Deck.id)
            .join(Subscription, Subscription.deck_id == Deck.id)
            .where(Subscription.user_id == user_id)
            .order_by(Deck.slug)
        )
    ]
    return InForce(parameters, standing[0] if standing else None, history, team_decks)


def _adopted_standing(session: Session, user_id: int) -> list[FsrsParameterSet]:
    """Adopted sets not reverted, newest first: the first is in force."""
    return list(
        session.scalars(
            select(FsrsParameterSet)
            .where(
                FsrsParameterSet.user_id == user_id,
                FsrsParameterSet.adopted.is_(True),
                FsrsParameterSet.reverted_at.is_(None),
            )
            .order_by(FsrsParameterSet.id.desc())
        )
    )


def _settings(session: Session, user_id: int, *, lock: bool = True) -> SchedulerSettings:
    # Locked on PostgreSQL for a write: two fits, or a fit and a revert, of one person then
    # run one after the other, each judged against the parameters the other left.
    query = select(SchedulerSettings).where(SchedulerSettings.user_id == user_id)
    return session.scalars(query.with_for_update() if lock else query).one()
