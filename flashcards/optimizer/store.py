"""Each person's parameter sets: fit and record, revert, and what is in force.

The scheduler reads the parameters in force from `SchedulerSettings.parameters`; adopting a
set writes them there, and a revert writes back those of the set adopted before it (or the
defaults), each in the caller's one transaction. Functions take a `session` and `now` and
never commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..accounts import user_clock
from ..errors import NothingToRevert
from ..models import FsrsParameterSet, ReviewLog, SchedulerSettings
from .fit import DEFAULTS, MINIMUM, HistoryMinimum, fit_and_judge
from .items import LoggedAnswer, TrainingItem, training_items

Progress = Callable[[str], None]


@dataclass(frozen=True)
class InForce:
    parameters: tuple[float, ...]  # what the scheduler uses
    set: FsrsParameterSet | None  # where they came from; None: py-fsrs's defaults
    history: list[FsrsParameterSet]  # every fit, newest first


def person_items(session: Session, user_id: int) -> list[TrainingItem]:
    """The person's training items from their whole review log (imported answers included)."""
    rows = session.execute(
        select(
            ReviewLog.card_id, ReviewLog.reviewed_at, ReviewLog.rating, ReviewLog.state_before
        ).where(ReviewLog.user_id == user_id)
    )
    answers = (
        LoggedAnswer(row.card_id, row.reviewed_at, row.rating, row.state_before is None)
        for row in rows
    )
    return training_items(answers, user_clock(session, user_id))


def optimize(
    session: Session,
    user_id: int,
    *,
    now: datetime,
    minimum: HistoryMinimum = MINIMUM,
    progress: Progress | None = None,
) -> FsrsParameterSet:
    """Fit the person's parameters and record the fit; adopt it when it predicts better.

    NotEnoughHistory below `minimum`, OptimizerUnavailable without the optimizer package.
    """
    settings = _settings(session, user_id)
    items = person_items(session, user_id)
    if progress is not None:
        cards = len({item.card_id for item in items})
        progress(f"fitting on {len(items)} answers on {cards} cards")
    outcome = fit_and_judge(items, settings.parameters, minimum)
    fitted = FsrsParameterSet(
        user_id=user_id,
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
        adopted=outcome.adopt,
    )
    session.add(fitted)
    if outcome.adopt:
        settings.parameters = list(outcome.parameters)
    session.flush()
    return fitted


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
    return InForce(parameters, standing[0] if standing else None, history)


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
