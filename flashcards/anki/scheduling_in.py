"""Anki's cards and revlog as our review state and log.

Anki keeps one state per card and a thin log (ease, interval, time), while our log keeps the
full state before and after each answer. The log is therefore replayed through py-fsrs with
the person's own settings; Anki's intervals still decide each answer's due time, and the
card's own columns (and FSRS memory state, when present) decide the current state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State

from ..srs import days
from ..srs.days import day_start, study_date
from ..storage.models import SchedulerSettings, User
from .reader import AnkiCard, Collection, Revlog
from .schema import memory_value
from .timing import DAY, DAY0, day_shift_of, from_epoch

LEARNING, REVIEW, RELEARNING = 1, 2, 3
QUEUE_LEARN = 1
REAL_ANSWER_TYPES = {0, 1, 2, 3}  # learn, review, relearn, filtered; 4-5 are manual changes
EPOCH_SECONDS_FLOOR = 1_000_000_000  # learning `due` above this is a timestamp, else a day
DEFAULT_DIFFICULTY = 5.0
MIN_STABILITY = 0.001  # py-fsrs's STABILITY_MIN
# Hand-made packages can hold any integer: keep dates and counters in ranges that Python's
# datetime and 32-bit SQL integers accept instead of failing with a server error.
MAX_DAYS = 100 * 366
MAX_INT = 2**31 - 1
LATEST_EPOCH = 4_102_444_800  # 2100-01-01


def clamp(value: int, low: int, high: int) -> int:
    return min(max(value, low), high)


def safe_epoch(seconds: float) -> datetime:
    return from_epoch(min(max(seconds, 0), LATEST_EPOCH))


@dataclass(frozen=True)
class ImportTiming:
    tz: str
    day_start_hour: int
    today: date
    source_today: int
    now: datetime

    @classmethod
    def from_collection(cls, coll: Collection, user: User, now: datetime) -> ImportTiming:
        # A package is untrusted: a value out of Anki's own range (minutes west within a
        # day, an hour of the day) is read as absent, as a missing one is, not computed with.
        rollover = _whole_number(coll.conf.get("rollover"), 0, 23)
        today = study_date(now, user.timezone, user.day_start_hour)
        # The collection's number of the person's today (not of `now`: its day may start
        # at another hour).
        lag = day_shift_of(
            min(max(coll.crt, 0), LATEST_EPOCH),
            _whole_number(coll.conf.get("creationOffset"), -24 * 60, 24 * 60),
            4 if rollover is None else rollover,
            now,
            user.timezone,
            user.day_start_hour,
        )
        return cls(
            tz=user.timezone,
            day_start_hour=user.day_start_hour,
            today=today,
            source_today=(today - DAY0).days - lag,
            now=now,
        )

    def date_of(self, day_number: int) -> date:
        # Anki shifts due days by the days elapsed; we do the same, into the person's calendar.
        return self.today + timedelta(
            days=clamp(day_number - self.source_today, -MAX_DAYS, MAX_DAYS)
        )

    def start_of(self, day_number: int) -> datetime:
        return day_start(self.date_of(day_number), self.tz, self.day_start_hour)

    def same_day(self, when: datetime, day_number: int) -> bool:
        return study_date(when, self.tz, self.day_start_hour) == self.date_of(day_number)


def _whole_number(value: object, lowest: int, highest: int) -> int | None:
    """`value` as an int if it is a number from `lowest` to `highest` (JSON may hold a
    fraction, 1e300 or a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if lowest <= value <= highest else None


def scheduler_for(settings: SchedulerSettings | None) -> Scheduler:
    kwargs: dict[str, Any] = {}
    if settings is not None:
        kwargs = {
            "desired_retention": settings.desired_retention,
            "learning_steps": [timedelta(seconds=s) for s in settings.learning_steps],
            "relearning_steps": [timedelta(seconds=s) for s in settings.relearning_steps],
            "maximum_interval": settings.maximum_interval,
        }
        if settings.parameters is not None:
            kwargs["parameters"] = settings.parameters
    return Scheduler(enable_fuzzing=False, **kwargs)


def _steps(settings: SchedulerSettings | None, state: int) -> list[int]:
    if settings is None:
        return [60, 600] if state == LEARNING else [600]
    return list(settings.learning_steps if state == LEARNING else settings.relearning_steps)


class Answer(NamedTuple):
    """A replayed answer: the Anki revlog row it came from, then the ReviewLog columns
    (`LOG_COLUMNS`) without its ids, in their order."""

    revlog_id: int
    rating: int
    reviewed_at: datetime
    duration_ms: int
    state_before: int | None
    step_before: int | None
    stability_before: float | None
    difficulty_before: float | None
    due_before: datetime | None
    last_review_before: datetime | None
    reps_before: int
    lapses_before: int
    introduced_at_before: datetime | None
    state: int
    step: int | None
    stability: float
    difficulty: float
    due: datetime
    reps: int
    lapses: int


LOG_COLUMNS = Answer._fields[1:]
# The keys of `convert_card`'s rows.
STATE_COLUMNS = ("state", "step", "stability", "difficulty", "due", "last_review", "reps",
                 "lapses", "introduced_at", "version")  # fmt: skip
RATINGS = {int(r): r for r in Rating}
# What one answer leaves a card with (`Replay.outcome`): its state, step, stability and
# difficulty (rounded as stored), and how long after the answer it falls due.
Outcome = tuple[int, int | None, float, float, timedelta]
# What py-fsrs's `review_card` computes an answer's outcome from, with fuzzing off: the card's
# state, step, stability and difficulty, the whole days since its last review (None for a
# new card) and the rating. Nothing else of the card, nor the moment itself, enters it.
OutcomeKey = tuple[int, int | None, float | None, float | None, int | None, int]


@dataclass(frozen=True)
class Replay:
    """What replaying every card's answers shares: the scheduler, the study days, and the
    outcomes computed so far.

    A package's histories share their starts: every new card's first answer is one of four,
    and the learning steps that follow on the same day branch a few ways. An outcome is
    therefore computed by py-fsrs once and remembered by what it is computed from
    (`OutcomeKey`); `tests/test_anki_replay.py` checks the remembered replay against py-fsrs
    answer by answer, so a py-fsrs that reads more of a card fails there first.
    """

    scheduler: Scheduler
    dates: days.StudyDates
    outcomes: dict[OutcomeKey, Outcome] = field(default_factory=dict)

    @classmethod
    def of(cls, settings: SchedulerSettings | None, timing: ImportTiming) -> Replay:
        return cls(scheduler_for(settings), days.StudyDates(timing.tz, timing.day_start_hour))

    def last_review_seen(self, last_review: datetime | None, now: datetime) -> datetime | None:
        """`srs.scheduling.last_review_for_fsrs`, with the study dates remembered."""
        if last_review is None:
            return None
        elapsed = self.dates.ordinal(now.timestamp()) - self.dates.ordinal(last_review.timestamp())
        return min(last_review, now - timedelta(days=elapsed)) if elapsed >= 1 else last_review

    def outcome(
        self,
        before: tuple[int, int | None, float | None, float | None],
        last_review: datetime | None,
        rating: int,
        when: datetime,
    ) -> Outcome:
        """The outcome of an answer at `when` to a card in state `before` (state, step,
        stability, difficulty) last reviewed at `last_review`."""
        # As answers here are scheduled: the time since the last review in study days.
        seen = self.last_review_seen(last_review, when)
        key = (*before, (when - seen).days if seen is not None else None, rating)
        found = self.outcomes.get(key)
        if found is None:
            state, step, stability, difficulty = before
            # An id given: without one py-fsrs sleeps a millisecond to make one unique.
            card = FsrsCard(
                card_id=0, state=State(state), step=step, stability=stability,
                difficulty=difficulty, due=when, last_review=seen,
            )  # fmt: skip
            after, _ = self.scheduler.review_card(card, RATINGS[rating], when)
            # An answer sets both.
            assert after.stability is not None and after.difficulty is not None
            # The replay goes on from the values stored, so each answer's before is exactly
            # the previous one's after.
            found = self.outcomes[key] = (
                int(after.state), after.step, memory_value(float(after.stability)),
                memory_value(float(after.difficulty)), after.due - when,
            )  # fmt: skip
        return found


# A new card, as py-fsrs makes one: learning, at its first step, without a memory state.
NEW_CARD: tuple[int, int | None, float | None, float | None] = (LEARNING, 0, None, None)


def convert_revlog(rows: list[Revlog], replay: Replay) -> list[Answer]:
    """One card's answers, oldest first, replayed: each with its state before and after."""
    answers = [r for r in rows if 1 <= r.ease <= 4 and r.type in REAL_ANSWER_TYPES]
    out: list[Answer] = []
    last: Answer | None = None
    first: datetime | None = None
    lapses = 0
    for reps, r in enumerate(answers):
        when = safe_epoch(r.id / 1000)
        if last is None:
            before, last_review = NEW_CARD, None
            state_before = step_before = due_before = None
        else:
            if when < last.reviewed_at:
                continue
            before = (last.state, last.step, last.stability, last.difficulty)
            last_review = last.reviewed_at
            state_before, step_before, due_before = last.state, last.step, last.due
        state, step, stability, difficulty, interval = replay.outcome(
            before, last_review, r.ease, when
        )
        if r.ivl > 0:
            due = when + timedelta(days=clamp(r.ivl, 0, MAX_DAYS))
        elif r.ivl < 0:
            due = when + timedelta(seconds=clamp(-r.ivl, 0, MAX_DAYS * 86400))
        else:
            due = when + interval
        lapses_before = lapses
        if state_before == REVIEW and r.ease == 1:
            lapses += 1
        last = Answer(
            r.id, r.ease, when, clamp(r.time, 0, MAX_INT), state_before, step_before,
            before[2], before[3], due_before, last_review, reps, lapses_before, first, state,
            step, stability, difficulty, due, reps + 1, lapses,
        )  # fmt: skip
        out.append(last)
        first = first or when
    return out


def _rounded(value: float | None) -> float | None:
    return memory_value(float(value)) if value is not None else None


def _memory_state(stability: object, difficulty: object) -> tuple[float, float] | None:
    """Anki's FSRS memory state, when FSRS can work from it: finite numbers, stability at
    least FSRS's own minimum (below it FSRS computes complex numbers and fails), difficulty
    within its 1-10. Anything else counts as no state: the review history decides."""
    if not isinstance(stability, int | float) or not isinstance(difficulty, int | float):
        return None
    if not (math.isfinite(stability) and math.isfinite(difficulty)):
        return None
    if stability < MIN_STABILITY:
        return None
    return float(stability), min(max(float(difficulty), 1.0), 10.0)


def convert_card(
    card: AnkiCard,
    logs: list[Answer],
    settings: SchedulerSettings | None,
    timing: ImportTiming,
) -> dict[str, Any] | None:
    """A ReviewState row (without user, card and deck ids), or None for a new card."""
    if card.type not in (LEARNING, REVIEW, RELEARNING):
        return None
    last = logs[-1] if logs else None
    memory = _memory_state(card.data.get("s"), card.data.get("d"))
    if memory is None:
        stability = last.stability if last else None
        difficulty = last.difficulty if last else None
    else:
        stability, difficulty = memory
    lrt = card.data.get("lrt")
    last_review: datetime | None = (
        safe_epoch(lrt) if isinstance(lrt, int) else (last.reviewed_at if last else None)
    )
    # A card in a filtered deck keeps its home due in `odue`.
    due_value = card.odue if card.odid and card.odue else card.due
    ivl = clamp(card.ivl, 0, MAX_DAYS)
    if card.type != LEARNING and (stability is None or difficulty is None):
        # FSRS reviews and relearns only from a memory state; a card without one (studied
        # before FSRS, with no history in the package) takes its interval as its stability.
        stability, difficulty = float(max(ivl, 1)), DEFAULT_DIFFICULTY
    if card.type == REVIEW:
        candidate = last_review + timedelta(days=ivl) if last_review else None
        # Keep the exact time when Anki's day agrees (our own packages), else the day's start.
        if candidate is not None and timing.same_day(candidate, due_value):
            due = candidate
        else:
            due = timing.start_of(due_value)
        if last_review is None:
            last_review = due - timedelta(days=max(ivl, 1))
        step = None
    else:
        if card.queue == QUEUE_LEARN or due_value > EPOCH_SECONDS_FLOOR:
            due = safe_epoch(due_value)
        else:
            due = timing.start_of(due_value)
        steps = _steps(settings, card.type)
        step = min(max(len(steps) - card.left % 1000, 0), max(len(steps) - 1, 0))
    introduced = logs[0].reviewed_at if logs else (last_review or timing.now)
    return {
        "state": card.type,
        "step": step,
        "stability": _rounded(stability),
        "difficulty": _rounded(difficulty),
        "due": due,
        "last_review": last_review,
        "reps": clamp(card.reps, 0, MAX_INT),
        "lapses": clamp(card.lapses, 0, MAX_INT),
        "introduced_at": introduced,
        "version": 1,
    }


__all__ = ["DAY", "LOG_COLUMNS", "STATE_COLUMNS", "Answer", "ImportTiming", "Replay",
           "convert_card", "convert_revlog"]  # fmt: skip
