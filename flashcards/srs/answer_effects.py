"""What an answer does beyond its own card, under a person's study options (Anki's deck
options of the same names and defaults): bury the card's siblings until the next study day,
and mark a leech (suspending it, if asked). No Flask.

The answer's read (`hot_sql.answers`) brings the card's note and the options, so an answer
with nothing of this to do reads and writes nothing more. Each change is a `CardAction` row
under the answer's review id: undoing the answer undoes it too (`card_actions.revert`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from ..errors import InvalidInput
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import Executor
from ..storage.models import StudyOptions
from .days import Clock, day_bounds, study_date
from .marks import marks_from_row, record, write_marks
from .state_rows import NEW_STATE

MAX_LEECH_THRESHOLD = 99
REVIEW_STATE = 2


@dataclass(frozen=True)
class Options:
    bury_new: bool = False
    bury_reviews: bool = False
    bury_interday: bool = False
    leech_threshold: int = 8
    leech_suspend: bool = False


def is_leech(lapses: int, threshold: int) -> bool:
    """Anki's rule: at the threshold, then again every half-threshold (8, 12, 16...)."""
    if lapses < threshold:
        return False
    return (lapses - threshold) % max(threshold // 2, 1) == 0


def options(session: Session, user_id: int) -> Options:
    row = session.get(StudyOptions, user_id)
    if row is None:
        return Options()
    return Options(
        row.bury_new, row.bury_reviews, row.bury_interday, row.leech_threshold, row.leech_suspend
    )


@dataclass(frozen=True)
class AnswerEffects:
    """Work an answer brings beyond its own state and log, decided when it is prepared."""

    user_id: int
    card_id: int
    deck_id: int
    review_id: str
    when: datetime
    clock: Clock
    leech: bool  # the answer's lapse makes the card a leech (again)
    suspend_leech: bool
    note_key: str | None  # siblings to look at, under these options
    bury_new: bool
    bury_reviews: bool
    bury_interday: bool


def answer_effects(
    user_id: int, row: Any, review_id: str, when: datetime, lapses_before: int, after: Any
) -> AnswerEffects | None:
    """What the answer read in `row` (the card's note, the person's options) brings, or None."""
    threshold = row.leech_threshold if row.leech_threshold is not None else Options.leech_threshold
    leech = after.lapses > lapses_before and is_leech(after.lapses, threshold)
    bury = bool(row.bury_new or row.bury_reviews or row.bury_interday)
    if not leech and not (bury and row.note_key is not None):
        return None
    return AnswerEffects(
        user_id=user_id,
        card_id=row.card_id,
        deck_id=row.deck_id,
        review_id=review_id,
        when=when,
        clock=Clock(row.timezone, row.day_start_hour),
        leech=leech,
        suspend_leech=bool(row.leech_suspend),
        note_key=row.note_key if bury else None,
        bury_new=bool(row.bury_new),
        bury_reviews=bool(row.bury_reviews),
        bury_interday=bool(row.bury_interday),
    )


def apply_answer_effects(db: Executor, effects: AnswerEffects) -> None:
    """Mark the leech and bury the siblings, in the answer's transaction; each change is
    recorded under the answer's review id, so that undoing the answer undoes it too."""
    user_id, now = effects.user_id, effects.when
    if effects.leech:
        row = sql.mark(db, user_id, effects.card_id)
        before = marks_from_row(row)
        after = replace(before, leech=True, suspended=before.suspended or effects.suspend_leech)
        write_marks(db, user_id, effects.card_id, effects.deck_id, after, exists=row is not None)
        record(db, user_id, effects.card_id, effects.review_id, "leech", now, row,
               review_id=effects.review_id)  # fmt: skip
    if effects.note_key is None:
        return
    today = study_date(now, *effects.clock)
    start, end = day_bounds(now, *effects.clock)
    tomorrow = today + timedelta(days=1)
    for sibling in sql.siblings(db, user_id, effects.deck_id, effects.note_key, effects.card_id):
        marks = marks_from_row(sibling if sibling.marked is not None else None)
        if marks.hidden(today) or not _buried_with(sibling, effects, start, end):
            continue
        after = replace(marks, buried_until=tomorrow)
        exists = sibling.marked is not None
        write_marks(db, user_id, sibling.card_id, effects.deck_id, after, exists=exists)
        record(db, user_id, sibling.card_id, effects.review_id, "bury_sibling", now,
               sibling if exists else None, review_id=effects.review_id)  # fmt: skip


def _buried_with(sibling: Any, effects: AnswerEffects, start: datetime, end: datetime) -> bool:
    """Whether the options bury this sibling: a new one; a review due today; one in learning
    from an earlier day (interday) due today. Learning begun today is never buried, as in
    Anki."""
    if sibling.state in (None, NEW_STATE):  # never studied, or forgotten: new
        return effects.bury_new
    if sibling.due >= end:
        return False
    if sibling.state == REVIEW_STATE:
        return effects.bury_reviews
    interday = sibling.last_review is not None and sibling.last_review < start
    return effects.bury_interday and interday


def set_options(session: Session, user_id: int, **values: Any) -> Options:
    """Change some of the person's burying and leech options (validated here)."""
    current = options(session, user_id)
    for name, value in values.items():
        if name not in Options.__dataclass_fields__:
            raise InvalidInput(f"unknown option {name}", field=name)
        if name == "leech_threshold":
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not 1 <= value <= MAX_LEECH_THRESHOLD
            ):
                raise InvalidInput(f"leech_threshold must be 1-{MAX_LEECH_THRESHOLD}", field=name)
        elif not isinstance(value, bool):
            raise InvalidInput(f"{name} must be true or false", field=name)
    updated = replace(current, **values)
    row = session.get(StudyOptions, user_id)
    if row is None:
        row = StudyOptions(user_id=user_id)
        session.add(row)
    for name in Options.__dataclass_fields__:
        setattr(row, name, getattr(updated, name))
    session.flush()
    return updated
