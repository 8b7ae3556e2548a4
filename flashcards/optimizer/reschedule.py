"""Rescheduling a person's review cards with the parameters in force, on request.

Adopting parameters changes future intervals only. A person may ask to move the cards they
already review to where the parameters in force would have put them, as Anki's "reschedule
cards on change" does: each card's memory state is computed again by replaying its review
log with those parameters (a card whose log does not start from new keeps its stored
state), and its due becomes its last review plus the interval that memory state gives at
the deck's desired retention, with the same seeded fuzz the answer had.

`plan` only reads and computes (no transaction kept while it does); `apply` writes a plan in
the caller's one transaction, with each card's version checked, so that an answer given in
between makes the whole write fail and start again (`StatesChanged`) rather than overwrite
it. The plan's days are the person's study days: `preview` of a plan and the workload
counted after `apply` are the same numbers.

No review-log entry is written: the log holds answers only (its rows are replayed, undone
and trained on, each the answer before the next), and a reschedule is not one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from fsrs import Rating, State
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..people.accounts import user_clock
from ..srs.days import Clock, study_date
from ..srs.scheduling import CardState, SchedulerConfig, fuzz_seed, fuzzed_days, review
from ..srs.state_rows import config_from, rs, state_from_row
from ..storage.models import DeckFsrsParameters, ReviewLog, SchedulerSettings, Subscription
from ..storage.retry import LostRace
from .fit import DEFAULTS
from .items import NEW_BEFORE

HORIZON_DAYS = 30  # the workload a preview shows: today and the days after it


class StatesChanged(LostRace):
    """A card was answered between the plan and its write: plan again."""

    def __init__(self, card_id: int) -> None:
        super().__init__(f"card {card_id} changed while it was being rescheduled")


@dataclass(frozen=True)
class Move:
    """One review card's new memory state and due."""

    card_id: int
    version: int
    stability: float
    difficulty: float
    due_before: datetime
    due: datetime


@dataclass(frozen=True)
class DayLoad:
    day: date
    before: int  # cards due that study day now (today: with the overdue ones)
    after: int  # ...and once the plan is applied


@dataclass(frozen=True)
class Plan:
    user_id: int
    moves: list[Move]  # only the cards whose state or due changes
    review_cards: int  # review cards looked at
    days: list[DayLoad]

    @property
    def moved(self) -> int:
        return sum(1 for move in self.moves if move.due != move.due_before)


def interval_days(config: SchedulerConfig, parameters: Sequence[float], stability: float) -> int:
    """The interval FSRS-6 gives a memory of `stability` at the config's desired retention,
    rounded and bounded as py-fsrs bounds it (the formula of its forgetting curve)."""
    decay = -float(parameters[20])
    factor: float = 0.9 ** (1 / decay) - 1
    growth: float = config.desired_retention ** (1 / decay) - 1
    days = round(stability / factor * growth)
    return min(max(days, 1), config.maximum_interval)


def plan(session: Session, user_id: int, *, now: datetime, horizon: int = HORIZON_DAYS) -> Plan:
    """Where the parameters in force would put each of the person's review cards (reads only)."""
    clock = user_clock(session, user_id)
    configs = _configs(session, user_id)
    states = list(
        session.execute(
            select(
                rs.c.card_id, rs.c.deck_id, rs.c.version,
                *(rs.c[name] for name in ("state", "step", "stability", "difficulty", "due",
                                          "last_review", "reps", "lapses")),
            ).where(rs.c.user_id == user_id)
        )
    )  # fmt: skip
    review_rows = [row for row in states if row.state == State.Review]
    logs = _logs(session, user_id, {row.card_id for row in review_rows})
    moves = []
    for row in review_rows:
        config = configs[row.deck_id]
        move = _move(user_id, row, logs.get(row.card_id, []), config, clock)
        if move is not None:
            moves.append(move)
    after = {move.card_id: move.due for move in moves}
    dues = [(row.due, after.get(row.card_id, row.due)) for row in states]
    return Plan(user_id, moves, len(review_rows), _days(dues, now, clock, horizon))


def apply(session: Session, planned: Plan) -> None:
    """Write the plan in the caller's transaction; StatesChanged if any card was answered
    since it was made (the caller's transaction is then to be rolled back, nothing kept)."""
    for move in planned.moves:
        result = session.execute(
            update(rs)
            .where(
                rs.c.user_id == planned.user_id,
                rs.c.card_id == move.card_id,
                rs.c.version == move.version,
            )
            .values(
                stability=move.stability,
                difficulty=move.difficulty,
                due=move.due,
                version=move.version + 1,
            )
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            raise StatesChanged(move.card_id)
    session.flush()


def workload(
    session: Session, user_id: int, *, now: datetime, horizon: int = HORIZON_DAYS
) -> list[int]:
    """Cards due on each study day from today, as stored (today: with the overdue ones)."""
    clock = user_clock(session, user_id)
    dues = session.scalars(select(rs.c.due).where(rs.c.user_id == user_id))
    return [load.before for load in _days(((due, due) for due in dues), now, clock, horizon)]


def _configs(session: Session, user_id: int) -> defaultdict[int, SchedulerConfig]:
    settings = session.scalars(
        select(SchedulerSettings).where(SchedulerSettings.user_id == user_id)
    ).one()
    subscriptions = {
        sub.deck_id: sub
        for sub in session.scalars(select(Subscription).where(Subscription.user_id == user_id))
    }
    fits = session.execute(
        select(DeckFsrsParameters.deck_id, DeckFsrsParameters.parameters).where(
            DeckFsrsParameters.deck_id.in_(list(subscriptions))
        )
    )
    team_fits = {deck_id: parameters for deck_id, parameters in fits}
    configs: defaultdict[int, SchedulerConfig] = defaultdict(lambda: config_from(settings))
    for deck_id, sub in subscriptions.items():
        configs[deck_id] = config_from(settings, sub, team_fits.get(deck_id))
    return configs


def _logs(session: Session, user_id: int, card_ids: set[int]) -> dict[int, list[Any]]:
    by_card: dict[int, list[Any]] = defaultdict(list)
    if not card_ids:
        return by_card
    rows = session.execute(
        select(
            ReviewLog.card_id, ReviewLog.reviewed_at, ReviewLog.rating,
            ReviewLog.state_before, ReviewLog.reps_before,
        )
        .where(ReviewLog.user_id == user_id)
        .order_by(ReviewLog.card_id, ReviewLog.reviewed_at, ReviewLog.id)
    )  # fmt: skip
    for row in rows:
        if row.card_id in card_ids:
            by_card[row.card_id].append(row)
    return by_card


def _move(
    user_id: int, row: Any, log: list[Any], config: SchedulerConfig, clock: Clock
) -> Move | None:
    stored = state_from_row(row)
    assert stored is not None and stored.last_review is not None
    memory = _replayed(log, config, clock) or stored
    assert memory.stability is not None and memory.difficulty is not None
    if (memory.stability, memory.difficulty) == (stored.stability, stored.difficulty):
        # Same memory state: the stored due stands, as its answer chose it (load balancing
        # included, which a replay of the log alone cannot redo).
        return None
    parameters = config.parameters or DEFAULTS
    days = interval_days(config, parameters, memory.stability)
    # The seed of the answer that set the card's due, so that its fuzz is drawn again alike.
    seed = fuzz_seed(user_id, row.card_id, max(0, stored.reps - 1))
    due = stored.last_review + timedelta(days=fuzzed_days(days, config.maximum_interval, seed))
    return Move(row.card_id, row.version, memory.stability, memory.difficulty, stored.due, due)


def _replayed(log: list[Any], config: SchedulerConfig, clock: Clock) -> CardState | None:
    """The memory state the card's log gives with `config`; None when the log does not start
    from new (progress imported without its history) and so cannot be replayed."""
    starts = [index for index, entry in enumerate(log) if entry.state_before in NEW_BEFORE]
    if not starts:
        return None
    state: CardState | None = None
    for entry in log[starts[-1] :]:
        rating = Rating(entry.rating)
        state = review(config, state, rating, entry.reviewed_at, seed=None, clock=clock)
    return state


def _days(
    dues: Iterable[tuple[datetime, datetime]], now: datetime, clock: Clock, horizon: int
) -> list[DayLoad]:
    today = study_date(now, *clock)
    before: Counter[date] = Counter()
    after: Counter[date] = Counter()
    for due_before, due_after in dues:
        before[max(today, study_date(due_before, *clock))] += 1
        after[max(today, study_date(due_after, *clock))] += 1
    days = [today + timedelta(days=offset) for offset in range(horizon)]
    return [DayLoad(day, before[day], after[day]) for day in days]
