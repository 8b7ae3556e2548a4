"""Load balancing and easy days: which day of a review interval's fuzz range a card goes to.

The facts are Anki's (rslib's `load_balancer.rs`, current; read, not copied): only intervals
up to 90 days are balanced (further out, the need to balance is low); a day of the fuzz range
with cards due weighs `(1 / cards due)^2.15 × (1 / days from today)^3`, times its easy-day
factor, so emptier days win and the interval term leans towards the earlier days, which the
count term would otherwise lose to; an empty day weighs 1 whatever its easy day (as Anki: a
Minimum day with nothing due still takes a card, and then weighs almost nothing); a weighted
draw picks one. Easy days scale the weight by the weekday's load: Normal 1, Minimum almost 0
(not 0, so that a range of Minimum days still balances), and a Reduced day counts as Normal
until it carries more than half the load of the other days of the range, then as Minimum.
For a person who buries review siblings, a day on which a sibling of the card falls due
weighs almost nothing, and the days around it less the nearer they are (a fifth less per day
closer, from 5 days away), so that one note's cards spread out (Anki's sibling dispersal).

The draw is the fuzz's own seeded one (`scheduling.fuzz_seed`), so a button's preview is
what the answer stores (Anki seeds its draw from the card's fuzz seed too); where no day
weighs more than another (nothing due in the range), the fuzz's own pick stands, a draw from
the same uniform range, so that a person with an empty schedule sees the intervals they saw
before balancing existed. Pure: the due counts come from the caller (`DueLoads`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

MAX_BALANCED_INTERVAL = 90
# Anki's exponents: how steeply a day's weight falls with its due count and its distance.
COUNT_EXPONENT = 2.15
INTERVAL_EXPONENT = 3

EasyDay = Literal["normal", "reduced", "minimum"]
# Anki's percentages: what `easy_days` stores, Monday first.
EASY_DAY_PERCENTAGES: dict[EasyDay, float] = {"normal": 1.0, "reduced": 0.5, "minimum": 0.0}
NORMAL_WEEK = (1.0,) * 7
_MINIMUM_LOAD = 0.0001
_REDUCED_LOAD = 0.5
_SIBLING_DAY = 0.000001  # a sibling's own day: not 0, so that a range of such days balances
SIBLING_REACH = 5  # days from a sibling's day at which its nearness stops weighing


@dataclass(frozen=True)
class DayLoads:
    """The cards due on each day of a range, and the person's easy days (Monday first)."""

    counts: Sequence[int]
    easy_days: Sequence[float]
    # Days from today on which the card's siblings fall due (repeats count once); empty
    # unless the person buries review siblings.
    siblings: Sequence[int] = ()


# Days from today, inclusive range -> their loads; None: the person balances nothing.
DueLoads = Callable[[int, int], DayLoads | None]


@dataclass(frozen=True)
class Workload:
    """What balancing an answer's interval needs: the person's study date, and their loads,
    read only when an interval is balanced (`srs.workload` reads them from the database)."""

    today: date
    loads: DueLoads

    @classmethod
    def fixed(
        cls,
        today: date,
        easy_days: Sequence[float],
        due_counts: Callable[[int, int], Sequence[int]],
    ) -> Workload:
        """A workload of given easy days and due counts."""
        return cls(today, lambda low, high: DayLoads(due_counts(low, high), easy_days))


def easy_day_name(percentage: float) -> EasyDay:
    """Anki's reading of a stored percentage: 1 is Normal, 0 Minimum, anything else Reduced."""
    if percentage >= 1.0:
        return "normal"
    return "minimum" if percentage <= 0.0 else "reduced"


def _load(percentage: float) -> float:
    name = easy_day_name(percentage)
    if name == "normal":
        return 1.0
    return _MINIMUM_LOAD if name == "minimum" else _REDUCED_LOAD


def easy_day_factors(loads: Sequence[float], counts: Sequence[int]) -> list[float]:
    """Each day's easy-day factor, from its weekday's load (1, 0.5 or 0.0001) and the counts."""
    total_count = sum(counts)
    total_load = sum(loads)
    factors = []
    for load, count in zip(loads, counts, strict=True):
        other_loads = total_load - _REDUCED_LOAD
        if load == _REDUCED_LOAD and other_loads > 0:
            # Reduced: Normal while the day holds no more than half of what the other days
            # of the range hold per unit of load, Minimum beyond. Alone in its range, Normal
            # (as Anki, whose 0 / 0 there compares false).
            others = (total_count - count) / other_loads
            load = _MINIMUM_LOAD if count / _REDUCED_LOAD > others else 1.0
        elif load == _REDUCED_LOAD:
            load = 1.0
        factors.append(load)
    return factors


def sibling_factors(first_day: int, days: int, siblings: Sequence[int]) -> list[float]:
    """Each day's factor for its nearness to the days the card's siblings fall due on: 1 from
    5 days away, a fifth less per day nearer, almost 0 on the day; each sibling's multiplies."""
    factors = [1.0] * days
    for sibling in set(siblings):
        for offset in range(days):
            distance = abs(first_day + offset - sibling)
            if distance < SIBLING_REACH:
                factors[offset] *= max(_SIBLING_DAY, distance / SIBLING_REACH)
    return factors


def day_weights(
    first_day: int,
    counts: Sequence[int],
    weekdays: Sequence[int],
    easy_days: Sequence[float],
    siblings: Sequence[int] = (),
) -> list[float]:
    """The weight of each day of the range starting `first_day` days from today."""
    loads = [_load(easy_days[w]) for w in weekdays]
    factors = easy_day_factors(loads, counts)
    near = sibling_factors(first_day, len(counts), siblings)
    weights = []
    for offset, (count, factor) in enumerate(zip(counts, factors, strict=True)):
        if count == 0:
            # An empty day: full weight, whatever its easy day or siblings (Anki's).
            weights.append(1.0)
            continue
        by_count = (1.0 / count) ** COUNT_EXPONENT
        by_interval = (1.0 / (first_day + offset)) ** INTERVAL_EXPONENT
        weights.append(by_count * by_interval * factor * near[offset])
    return weights


def weighted_pick(weights: Sequence[float], draw: float) -> int:
    """The index whose share of the total weight contains `draw` (uniform in [0, 1))."""
    target = draw * sum(weights)
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if target < running:
            return index
    return len(weights) - 1  # rounding: the draw fell past the last running sum


def balanced_days(
    interval: int, low: int, high: int, workload: Workload, draw: float
) -> int | None:
    """The day in the fuzz range [low, high] of `interval` the balancer picks, or None when
    it does not balance (past 90 days)."""
    if interval > MAX_BALANCED_INTERVAL or low > MAX_BALANCED_INTERVAL or low > high:
        return None
    loads = workload.loads(low, high)
    if loads is None:
        return None
    weekdays = [(workload.today + timedelta(days=d)).weekday() for d in range(low, high + 1)]
    weights = day_weights(low, loads.counts, weekdays, loads.easy_days, loads.siblings)
    if min(weights) == max(weights):
        return None  # no day preferred (a flat load): the fuzz's own pick stands
    return low + weighted_pick(weights, draw)
