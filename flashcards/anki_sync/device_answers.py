"""A device's answers (its revlog rows), applied once each and in time order through the same
answer path as the web and the API (`srs.study.answer`), so that states, logs, stats, the team
dashboard and pacing see them. No Flask; never commits.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime

from fsrs import Rating
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..errors import FlashcardsError
from ..srs import card_actions, device_origin, study
from ..storage.models import ReviewLog, ReviewState
from . import device_marks, ids


def apply(
    session: Session, user_id: int, entries: list[list[int]], now: datetime, *,
    device_reps: Mapping[int, int] | None = None,
) -> tuple[int, bool]:  # fmt: skip
    """Each answer through `srs.study.answer`, in the order of `entries`: oldest first (sorted
    by revlog id, the answer's time). Rows that are no answer (`device_marks.by_hand`) and
    answers to cards the person does not study here are not answers to apply. With
    `device_reps` (each card's review count on the device), a card forgotten and then
    answered there is forgotten here before those answers, its counts reset as the device
    reset them (as the last change to a card, a Forget is `device_marks`'). Returns how many
    were new here, and whether a card's log was given again (`answer_in_time_order`)."""
    applied, replayed = 0, False
    ours = ids.cards_of(session, user_id, (entry[1] for entry in entries), notes=False)
    # A card's answers from the entry at hand on: a Forget whose reset the device kept leaves
    # the card a review count of just those, which tells it from one that kept the counts.
    answers_left: dict[int, int] = {}
    for entry in entries:
        if 1 <= entry[2] <= 4:
            answers_left[entry[1]] = answers_left.get(entry[1], 0) + 1
    for entry in entries:
        revlog_id, cid, ease, taken_ms, kind = entry[:5]
        card_id = ours.get(cid)
        if card_id is None:
            continue
        answers = answers_left.get(cid, 0)
        if device_reps is not None and device_marks.is_forget(entry) and answers:
            # At the device's time: a change of the device's, not one made here since. Its
            # review count is only the answers since when Anki's Forget reset the counts.
            at = min(datetime.fromtimestamp(revlog_id / 1000, tz=now.tzinfo), now)
            act = device_origin.action_id(user_id, card_id, at)
            reset = device_reps.get(cid) == answers
            with suppress(FlashcardsError):  # new here already: nothing to forget
                card_actions.forget(
                    session, user_id, [card_id], now=at, reset_counts=reset, action_id=act
                )
            applied += 1
            continue
        if not 1 <= ease <= 4:
            continue
        answers_left[cid] = answers - 1
        if kind not in (0, 1, 2, 3):
            continue
        reviewed_at = datetime.fromtimestamp(revlog_id / 1000, tz=now.tzinfo)
        review_id = device_origin.answer_review_id(user_id, revlog_id)
        given = Given(review_id, ease, reviewed_at, max(0, taken_ms))
        try:
            # Every refusal is raised while reading, before anything is written.
            outcome = answer_in_time_order(session, user_id, card_id, given, now=now)
        except FlashcardsError:
            continue  # not one of their cards, or a retired one: left on the device
        applied += outcome != NOT_NEW
        replayed = replayed or outcome == REPLAYED
    return applied, replayed


@dataclass(frozen=True)
class Given:
    """An answer as a device gave it."""

    review_id: str
    rating: int
    reviewed_at: datetime
    duration_ms: int | None


NOT_NEW, APPLIED, REPLAYED = 0, 1, 2


def answer_in_time_order(
    session: Session, user_id: int, card_id: int, given: Given, *, now: datetime
) -> int:
    """Apply a device's answer through `srs.study.answer`: NOT_NEW if it was applied before,
    else APPLIED, or REPLAYED when the card's log was given again.

    An answer older than the card's last one here (two devices, or the web and a device,
    answered it between syncs) is kept too: the card's answers are given again, merged in
    time order, through the same path, so its state is the replay of the merged log and
    every answer keeps its review id, time and duration.
    """
    state = session.get(ReviewState, (user_id, card_id))
    known = session.scalar(select(ReviewLog.id).where(ReviewLog.review_id == given.review_id))
    late = (
        known is None
        and state is not None
        and state.last_review is not None
        and given.reviewed_at < state.last_review
    )
    if not late:
        result = study.answer(
            session, user_id, card_id, Rating(given.rating), given.review_id,
            now=now, reviewed_at=given.reviewed_at, duration_ms=given.duration_ms,
        )  # fmt: skip
        return APPLIED if result.created else NOT_NEW
    logs = session.scalars(
        select(ReviewLog)
        .where(ReviewLog.user_id == user_id, ReviewLog.card_id == card_id)
        .order_by(ReviewLog.reviewed_at, ReviewLog.id)
    ).all()
    merged = sorted(
        [Given(g.review_id, g.rating, g.reviewed_at, g.duration_ms) for g in logs] + [given],
        key=lambda g: g.reviewed_at,
    )
    # The card's log and state go, and come back answer by answer.
    for model in (ReviewLog, ReviewState):
        session.execute(delete(model).where(model.user_id == user_id, model.card_id == card_id))
    session.expire_all()
    for g in merged:
        study.answer(
            session, user_id, card_id, Rating(g.rating), g.review_id,
            now=now, reviewed_at=g.reviewed_at, duration_ms=g.duration_ms,
        )  # fmt: skip
    return REPLAYED
