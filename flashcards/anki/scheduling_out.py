"""Our review state and log as Anki card columns and revlog rows (see the module docs of timing)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, NamedTuple

from fsrs.scheduler import DEFAULT_PARAMETERS

from ..srs.days import StudyDates, study_date
from ..srs.marks import Marks
from ..storage.models import SchedulerSettings, User
from .schema import memory_value
from .timing import DAY, DAY0

# Anki card types; our states are 1-3, and 0 (new again) for a card forgotten.
NEW, LEARNING, REVIEW, RELEARNING = 0, 1, 2, 3
QUEUE_LEARN, QUEUE_REVIEW, QUEUE_DAY_LEARN = 1, 2, 3
# Anki's queues of cards kept out of study; its type stays what the card is.
QUEUE_SUSPENDED, QUEUE_SIBLING_BURIED, QUEUE_MANUALLY_BURIED = -1, -2, -3
REVLOG_LEARN, REVLOG_REVIEW, REVLOG_RELEARN = 0, 1, 2
SM2_FACTOR = 2500


class StateRow(NamedTuple):
    """The columns of a review state that `card_columns` reads (a database row with these
    attributes does as well)."""

    card_id: int
    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    reps: int
    lapses: int
    new_position: int | None


# The columns of a review log that `revlog_rows` reads: the last columns of a log row, in
# this order (a row may start with others: the card's id, ...). By position, not by name: a
# hundred thousand rows, where a database row's attribute costs ten times its index.
LOG_COLUMNS = ("rating", "reviewed_at", "duration_ms", "state_before", "state", "difficulty",
               "due")  # fmt: skip
_LOG_WIDTH = -len(LOG_COLUMNS)


MAX_INT = 2**31 - 1
QUARTER_HOUR = 15 * 60
DAY0_ORDINAL = DAY0.toordinal()


@dataclass
class SchedulingContext:
    user: User
    settings: SchedulerSettings
    locale: str
    states: dict[int, Any]  # ReviewState rows
    logs: dict[int, list[Any]]  # ReviewLog rows ending with LOG_COLUMNS, by card
    now: datetime
    # The person's marks by card (suspended, buried, flag, leech, tags); none: no marks.
    marks: dict[int, Marks] = field(default_factory=dict)
    # Taken revlog ids, each pointing at a candidate for the next free one (see below).
    next_free: dict[int, int] = field(default_factory=dict)
    days: dict[int, int] = field(default_factory=dict)  # study day by quarter hour (`day`)
    usn: int = -1  # of its rows: a package's "not yet synced", or a sync server's own
    # Days between our day numbers and the collection's (`crt_of`): a device that uploaded
    # its own collection keeps counting from its own creation.
    day_shift: int = 0
    dates: StudyDates = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.dates = StudyDates(self.tz, self.day_start_hour)

    @property
    def tz(self) -> str:
        return self.user.timezone

    @property
    def day_start_hour(self) -> int:
        return self.user.day_start_hour

    @property
    def today(self) -> date:
        return study_date(self.now, self.tz, self.day_start_hour)

    def tags(self, card_id: int, card_tags: Iterable[str]) -> list[str]:
        """The card's tags with the person's own and `leech`, as Anki keeps them on notes."""
        return self.marks.get(card_id, Marks()).all_tags(card_tags)

    @property
    def parameters(self) -> tuple[float, ...]:
        return tuple(self.settings.parameters or DEFAULT_PARAMETERS)

    def unique_revlog_id(self, wanted: int) -> int:
        """The first free millisecond id at or after `wanted` (ids must be unique in Anki).

        Taken ids point towards the next free one and paths are compressed, so many answers
        in the same millisecond cost near-constant time each instead of a linear probe.
        """
        path = []
        free = wanted
        while free in self.next_free:
            path.append(free)
            free = self.next_free[free]
        for taken in path:
            self.next_free[taken] = free + 1
        self.next_free[free] = free + 1
        return free

    def day(self, when: datetime) -> int:
        # Every UTC offset since 1972 and every day start falls on a quarter hour, so a
        # moment's study date is that of its quarter hour: remembered by quarter hour, it is
        # a dictionary's look-up for most of a long log's answers (`revlog_rows`).
        slot = int(when.timestamp()) // QUARTER_HOUR
        found = self.days.get(slot)
        if found is None:
            ordinal = self.dates.ordinal(slot * QUARTER_HOUR)
            found = self.days[slot] = ordinal - DAY0_ORDINAL - self.day_shift
        return found


def fsrs_factor(difficulty: float) -> int:
    """Anki's revlog `factor` for an FSRS answer: difficulty 1-10 mapped to 100-1100."""
    return round((difficulty - 1) / 9 * 1000 + 100)


def card_columns(sched: SchedulingContext | None, card_id: int, position: int) -> tuple[Any, ...]:
    """type, queue, due, ivl, factor, reps, lapses, left, odue, odid, flags, data.

    `sched` is None for a note that does not carry the card's progress: it goes out as new,
    unmarked. With it, the person's marks go out as Anki keeps them: a suspended or buried
    card in queue -1 or -3 (Anki unburies at its next day), the flag in `flags`.
    """
    columns = _state_columns(sched, card_id, position)
    marks = sched.marks.get(card_id) if sched is not None else None
    if sched is None or marks is None:
        return columns
    ctype, queue, due, ivl, factor, reps, lapses, left, odue, odid, _flags, blob = columns
    if marks.suspended:
        queue = QUEUE_SUSPENDED
    elif marks.buried(sched.today):
        queue = QUEUE_MANUALLY_BURIED
    return (ctype, queue, due, ivl, factor, reps, lapses, left, odue, odid, marks.flag, blob)


def _state_columns(sched: SchedulingContext | None, card_id: int, position: int) -> tuple[Any, ...]:
    new = (NEW, 0, position, 0, 0, 0, 0, 0, 0, 0, 0, "")
    if sched is None:
        return new
    state = sched.states.get(card_id)
    if state is None:
        return new
    if state.state == NEW:
        # Forgotten, as Anki's Forget leaves a card: new, at its place among the new cards
        # (in Anki a new card's due), with its counts; no memory state. Its log goes out.
        place = position if state.new_position is None else state.new_position
        return (NEW, 0, place, 0, 0, state.reps, state.lapses, 0, 0, 0, 0, "")
    data: dict[str, Any] = {}
    if state.stability is not None and state.difficulty is not None:
        data = {
            "s": memory_value(state.stability),
            "d": memory_value(state.difficulty),
            "dr": sched.settings.desired_retention,
            "decay": sched.parameters[20],
        }
    if state.last_review is not None:
        data["lrt"] = int(state.last_review.timestamp())
    blob = json.dumps(data) if data else ""
    if state.state == REVIEW:
        last = state.last_review or state.due
        ivl = max(1, sched.day(state.due) - sched.day(last))
        return (REVIEW, QUEUE_REVIEW, sched.day(state.due), ivl, SM2_FACTOR, state.reps,
                state.lapses, 0, 0, 0, 0, blob)  # fmt: skip
    steps = (
        sched.settings.learning_steps
        if state.state == LEARNING
        else sched.settings.relearning_steps
    )
    # Anki reads `left % 1000` as the steps still to go; ours counts the steps already done.
    left = max(1, len(steps) - (state.step or 0))
    # An interval of a day or more is an "interday" step: Anki keeps those by day number.
    interday = state.last_review is not None and state.due - state.last_review >= DAY
    queue, due = (
        (QUEUE_DAY_LEARN, sched.day(state.due))
        if interday
        else (QUEUE_LEARN, int(state.due.timestamp()))
    )
    # A relearning card keeps the interval it will return to; FSRS's stability (days) is what
    # Anki's FSRS would base it on.
    ivl = 0 if state.state == LEARNING else max(1, round(state.stability or 1))
    ctype = LEARNING if state.state == LEARNING else RELEARNING
    factor = 0 if state.state == LEARNING else SM2_FACTOR
    return (ctype, queue, due, ivl, factor, state.reps, state.lapses, left, 0, 0, 0, blob)


# Anki's revlog type by our state before the answer: new (None, 0) and learning are learning.
_REVLOG_TYPE = {REVIEW: REVLOG_REVIEW, RELEARNING: REVLOG_RELEARN}


def revlog_rows(sched: SchedulingContext, card_id: int, anki_card_id: int) -> list[tuple[Any, ...]]:
    if card_id not in sched.states:
        return []  # Anki drops revlog rows of cards it does not import as studied
    rows: list[tuple[Any, ...]] = []
    last_ivl = 0
    # An export or a full download turns a person's whole log (often a hundred thousand
    # answers) into rows here: each moment is converted to a timestamp once, its study day
    # looked up by hand, and an id nobody has taken yet (the usual case) taken in place.
    days, day_of, next_free, usn = sched.days, sched.day, sched.next_free, sched.usn
    revlog_type = _REVLOG_TYPE.get
    for log in sched.logs.get(card_id, ()):
        rating, reviewed_at, duration_ms, state_before, state, difficulty, due = log[_LOG_WIDTH:]
        reviewed_ts = reviewed_at.timestamp()
        wanted = int(reviewed_ts * 1000)
        if wanted in next_free:
            revlog_id = sched.unique_revlog_id(wanted)
        else:
            next_free[wanted] = wanted + 1
            revlog_id = wanted
        # Days when positive, seconds when negative (Anki's convention for learning steps).
        step = due - reviewed_at
        if state == REVIEW or step >= DAY:
            due_day = days.get(int(due.timestamp()) // QUARTER_HOUR)
            if due_day is None:
                due_day = day_of(due)
            reviewed_day = days.get(int(reviewed_ts) // QUARTER_HOUR)
            if reviewed_day is None:
                reviewed_day = day_of(reviewed_at)
            ivl = max(1, due_day - reviewed_day)
        else:
            ivl = -max(1, int(step.total_seconds()))
        duration = min(max(duration_ms or 0, 0), MAX_INT)
        rows.append(
            (revlog_id, anki_card_id, usn, rating, ivl, last_ivl, fsrs_factor(difficulty),
             duration, revlog_type(state_before, REVLOG_LEARN))
        )  # fmt: skip
        last_ivl = ivl
    return rows
