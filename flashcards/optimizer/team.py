"""A team deck's FSRS parameters: fitted to all its members' answers on it.

A newcomer to a team deck has too little history for a fit of their own; the team's members
together have plenty, on the very cards the newcomer studies. A team deck's fit is kept like
a person's (`FsrsParameterSet`, with `deck_id` instead of `user_id`) and adopted on the same
rule: it must predict the members' later answers better than the deck's set in force (the
defaults at first). Adopted, it is in force in `DeckFsrsParameters`, which the scheduler reads
for the deck's cards of every member without personal parameters (`state_rows.config_from`).

A member moves to their own parameters once they have enough history for a fit and it
predicts their own later answers better than both what they had and the team decks' sets
they study (`store.read_history` names those as rivals).

Only totals are kept (answers, cards, scores): no member's answers or scores are shown to
another, and the members' items are pooled before the fit, so nothing in a set is any one
member's.

Like `store`, a fit is a read, a fit outside any transaction, and one short write.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..errors import NotFound
from ..people.accounts import user_clock
from ..storage.models import Deck, DeckFsrsParameters, FsrsParameterSet, ReviewLog, TeamMember
from .fit import MINIMUM, FitOutcome, HistoryMinimum, fit_and_judge
from .items import NEW_BEFORE, LoggedAnswer, TrainingItem, training_items
from .store import parameter_set


@dataclass(frozen=True)
class DeckHistory:
    deck_id: int
    items: list[TrainingItem]  # every member's, in time order
    parameters: list[float] | None  # the deck's in force; None: the defaults
    end_log_id: int | None
    members: int  # members with answers on the deck


def team_deck(session: Session, slug: str) -> Deck:
    deck = session.scalars(select(Deck).where(Deck.slug == slug)).one_or_none()
    if deck is None or deck.owner_team_id is None:
        raise NotFound(f"no team deck {slug!r}")
    return deck


def read_history(session: Session, deck: Deck) -> DeckHistory:
    """The training items of every current member's answers on the deck, each counted in
    that member's own study days."""
    end = session.scalar(select(func.max(ReviewLog.id)).where(ReviewLog.deck_id == deck.id))
    members = list(
        session.scalars(
            select(TeamMember.user_id)
            .where(TeamMember.team_id == deck.owner_team_id)
            .order_by(TeamMember.user_id)
        )
    )
    items: list[TrainingItem] = []
    answering = 0
    for user_id in members:
        rows = session.execute(
            select(
                ReviewLog.card_id, ReviewLog.reviewed_at, ReviewLog.rating, ReviewLog.state_before
            ).where(ReviewLog.user_id == user_id, ReviewLog.deck_id == deck.id)
        ).all()
        if rows:
            answering += 1
            answers = (
                LoggedAnswer(r.card_id, r.reviewed_at, r.rating, r.state_before in NEW_BEFORE)
                for r in rows
            )
            items.extend(training_items(answers, user_clock(session, user_id)))
    # Pooled in time order, so that the judge holds out the team's latest answers.
    items.sort(key=lambda item: item.answered_at)
    in_force = session.get(DeckFsrsParameters, deck.id)
    parameters = list(in_force.parameters) if in_force is not None else None
    return DeckHistory(deck.id, items, parameters, end, answering)


def fit(history: DeckHistory, minimum: HistoryMinimum = MINIMUM) -> FitOutcome:
    return fit_and_judge(history.items, history.parameters, minimum)


def record(
    session: Session, history: DeckHistory, outcome: FitOutcome, *, now: datetime
) -> FsrsParameterSet:
    """Keep the deck's fit, and adopt it if it won against the deck's set still in force."""
    in_force = session.scalars(
        select(DeckFsrsParameters)
        .where(DeckFsrsParameters.deck_id == history.deck_id)
        .with_for_update()
    ).one_or_none()
    current = list(in_force.parameters) if in_force is not None else None
    adopt = outcome.adopt and current == history.parameters
    fitted = parameter_set(outcome, now, adopt, history.end_log_id, deck_id=history.deck_id)
    session.add(fitted)
    if adopt:
        if in_force is None:
            session.add(DeckFsrsParameters(deck_id=history.deck_id, parameters=fitted.parameters))
        else:
            in_force.parameters = list(outcome.parameters)
    session.flush()
    return fitted


def optimize(
    reading: Session,
    writing: Callable[[], AbstractContextManager[Session]],
    deck: Deck,
    *,
    now: datetime,
    minimum: HistoryMinimum = MINIMUM,
) -> FsrsParameterSet:
    """As `store.optimize`, for a team deck: read, end the read, fit, one short write."""
    history = read_history(reading, deck)
    reading.rollback()
    outcome = fit(history, minimum)
    with writing() as session:
        return record(session, history, outcome, now=now)
