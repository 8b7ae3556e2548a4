"""Desired retention with numbers: the workload and the share remembered that each desired
retention from 0.70 to 0.97 gives, simulated with fsrs-rs's simulator from the person's
parameters, and a suggested value.

The simulation is of the person's own collection (the live cards of the decks they study, at
their new cards per day) over a year. Above `SIMULATED_CARDS` cards the collection is
simulated at that size, with new cards per day scaled down alike, and the reviews scaled back
up: the same curve at a bounded cost (a small one likewise at `FEWEST_SIMULATED_CARDS`). The
suggestion is the retention at which a card kept in memory costs the least review time (the
objective of Anki's former "compute minimum recommended retention"). Results are cached per
parameter set and collection, since the simulator holds the interpreter for its whole run
(about a second for the 28 retentions on 2 cores, see tests/bench/bench_fsrs_retention.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..storage.models import Card, SchedulerSettings, Subscription
from .fit import DEFAULTS, load_optimizer

RETENTIONS = tuple(round(0.70 + step / 100, 2) for step in range(28))  # 0.70 .. 0.97
# Above it, the workload explodes for little more remembered: Anki warns there too.
HIGH_RETENTION = 0.97
SIMULATED_CARDS = 2000
# Below it, a few cards' random answers would sway the rows: a small collection is simulated
# at this size, with new cards per day scaled up alike, and the reviews scaled back down.
FEWEST_SIMULATED_CARDS = 500
SIMULATED_DAYS = 365
SEED = 42  # one draw for every retention, so that the rows differ by the retention alone


@dataclass(frozen=True)
class RetentionPoint:
    retention: float
    reviews_per_day: float  # answers to cards already introduced, averaged over the year
    remembered: float  # share of the introduced cards remembered at the year's end
    seconds_per_remembered: float  # review time per card remembered: what the suggestion weighs


@dataclass(frozen=True)
class Collection:
    """What the simulation needs of a person."""

    parameters: tuple[float, ...]
    cards: int
    new_per_day: int
    desired_retention: float


@dataclass(frozen=True)
class RetentionView:
    collection: Collection
    points: tuple[RetentionPoint, ...]
    suggested: float

    @property
    def too_high(self) -> bool:
        return self.collection.desired_retention > HIGH_RETENTION


def collection(session: Session, user_id: int) -> Collection:
    settings = session.scalars(
        select(SchedulerSettings).where(SchedulerSettings.user_id == user_id)
    ).one()
    cards = session.scalar(
        select(func.count(Card.id))
        .join(Subscription, Subscription.deck_id == Card.deck_id)
        .where(Subscription.user_id == user_id, Card.retired_at.is_(None))
    )
    return Collection(
        parameters=tuple(settings.parameters) if settings.parameters else DEFAULTS,
        cards=cards or 0,
        new_per_day=settings.new_per_day,
        desired_retention=settings.desired_retention,
    )


def view(found: Collection) -> RetentionView:
    """The simulated rows and the suggestion; OptimizerUnavailable without the simulator."""
    load_optimizer()  # the missing package is said before any work
    points = simulate(found.parameters, max(found.cards, 1), max(found.new_per_day, 1))
    cheapest = min(points, key=lambda point: point.seconds_per_remembered)
    return RetentionView(found, points, cheapest.retention)


@lru_cache(maxsize=64)
def simulate(
    parameters: tuple[float, ...], cards: int, new_per_day: int
) -> tuple[RetentionPoint, ...]:
    """Every retention of RETENTIONS simulated for a year; cached per set and collection."""
    optimizer = load_optimizer()
    simulated = min(max(cards, FEWEST_SIMULATED_CARDS), SIMULATED_CARDS)
    scale = cards / simulated
    config = optimizer.default_simulator_config()
    config.deck_size = simulated
    config.learn_limit = max(1, round(new_per_day / scale))
    config.learn_span = SIMULATED_DAYS
    config.max_cost_perday = 1e9  # no time limit: the workload itself is the question
    points = []
    for retention in RETENTIONS:
        result = optimizer.simulate(list(parameters), retention, config, SEED)
        reviews = sum(result.review_cnt_per_day) / SIMULATED_DAYS
        introduced = sum(result.learn_cnt_per_day)
        remembered = result.memorized_cnt_per_day[-1]
        points.append(
            RetentionPoint(
                retention=retention,
                reviews_per_day=reviews * scale,
                remembered=remembered / introduced if introduced else 0.0,
                seconds_per_remembered=sum(result.cost_per_day) / remembered
                if remembered
                else float("inf"),
            )
        )
    return tuple(points)
