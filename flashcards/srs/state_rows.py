"""Review-state rows and what they hold: a person's FSRS state of a card, and the scheduler
settings (with a subscription's overrides) that apply to it. No Flask; the study engine,
the due queue and team progress read states through here.
"""

from __future__ import annotations

from typing import Any, cast

from fsrs import State
from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from ..storage.models import ReviewState
from .scheduling import CardState, SchedulerConfig

STATE_COLUMNS = ("state", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses")
# A state row's `state` for a card forgotten (Anki's "Forget"): new again, its history kept
# (the log hangs on the row). Not an fsrs.State: FSRS sees such a card as new.
NEW_STATE = 0

rs = cast(Table, ReviewState.__table__)


def config_from(
    settings: Any, subscription: Any | None = None, deck_parameters: Any | None = None
) -> SchedulerConfig:
    """Scheduler settings of a user, with a subscription's non-NULL overrides on top.

    The FSRS parameters in force: the person's own when they have some (fitted, and adopted
    only when they predicted the person better than those they replaced, a team deck's
    included: `optimizer.store`), else the deck's team fit (`deck_parameters`), else None,
    py-fsrs's defaults.
    """

    def pick(name: str) -> Any:
        override = getattr(subscription, name, None) if subscription is not None else None
        return override if override is not None else getattr(settings, name)

    params = settings.parameters or deck_parameters
    return SchedulerConfig(
        desired_retention=pick("desired_retention"),
        learning_steps=tuple(pick("learning_steps")),
        relearning_steps=tuple(pick("relearning_steps")),
        maximum_interval=pick("maximum_interval"),
        parameters=tuple(params) if params else None,
    )


def state_from_row(
    row: Any, *, suffix: str = "", last_review: str = "last_review"
) -> CardState | None:
    """A CardState from a row's state columns, e.g. `suffix="_before"` for a log's old state;
    None for a card new to the person: no state, or one forgotten (NEW_STATE)."""
    if row is None or getattr(row, "state" + suffix) in (None, NEW_STATE):
        return None

    def col(name: str) -> Any:
        return getattr(row, name + suffix)

    return CardState(
        state=State(col("state")),
        step=col("step"),
        stability=col("stability"),
        difficulty=col("difficulty"),
        due=col("due"),
        last_review=col(last_review),
        reps=col("reps"),
        lapses=col("lapses"),
    )


def forgotten_state(row: Any) -> CardState:
    """What FSRS starts a forgotten card from: a new card's state (no memory, first
    learning step), with the counts it kept and the time it was forgotten as its due."""
    return CardState(
        state=State.Learning,
        step=0,
        stability=None,
        difficulty=None,
        due=row.due,
        last_review=None,
        reps=row.reps,
        lapses=row.lapses,
    )


def card_state(session: Session, user_id: int, card_id: int) -> CardState | None:
    """The person's state of the card; None while it is new to them (forgotten too)."""
    return state_from_row(_state_row(session, user_id, card_id))


def answered_from(session: Session, user_id: int, card_id: int) -> CardState | None:
    """The state an answer to the card starts from, as the queue gives it: a forgotten
    card's `forgotten_state`; None for a card never studied."""
    row = _state_row(session, user_id, card_id)
    if row is not None and row.state == NEW_STATE:
        return forgotten_state(row)
    return state_from_row(row)


def _state_row(session: Session, user_id: int, card_id: int) -> Any:
    return session.execute(
        select(*(rs.c[name] for name in STATE_COLUMNS)).where(
            rs.c.user_id == user_id, rs.c.card_id == card_id
        )
    ).first()
