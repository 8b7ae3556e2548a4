"""Answering and undoing: the study engine's write paths.

Answering is the hot path, so it runs a few Core statements (`hot_sql.answers`) on
`rawsql`'s executor rather than ORM objects: one joined read (`answer_prepare`), then the
state update (or insert) and the log insert, which PostgreSQL takes as one statement
(`store_answer`). The web and the API both answer through
`answer`, for a caller the edge has already identified.

Concurrency: every state row carries a version. The update only applies when the version is
still the one read; otherwise `ConcurrentAnswer` (a `storage.retry.LostRace`) is raised and
the caller retries the whole transaction (`storage.retry.with_retries`, or `retrying` for a
session). The read may come before the write transaction (on a direct connection it does,
so that SQLite's write lock is held for the writes alone): on either database the version
check, the unique review id and the primary keys make sure no answer is lost or applied twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fsrs import Rating
from sqlalchemy import (
    Connection,
    and_,
    delete,
    or_,
    select,
)
from sqlalchemy.orm import Session

from ..decks.access import visible_decks
from ..errors import (
    InvalidInput,
    NothingToUndo,
    NotLatestAnswer,
    UnknownReviewId,
)
from ..hot_sql import answers as sql
from ..hot_sql.answers import rl
from ..hot_sql.rawsql import DirectConnection, Executor, executor
from ..people.accounts import TokenOwner, user_clock
from ..storage.models import Deck
from ..storage.retry import LostRace
from . import answer_effects, device_origin, marks
from .answer_prepare import (
    CLOCK_SKEW,
    EARLIEST_REVIEW,
    AnswerResult,
    PreparedAnswer,
    prepare_answer,
    state_values,
)
from .days import day_bounds
from .scheduling import CardState
from .settings import json_int
from .state_rows import NEW_STATE, card_state, rs, state_from_row

__all__ = [
    "CLOCK_SKEW",
    "EARLIEST_REVIEW",
    "AnswerResult",
    "ConcurrentAnswer",
    "PreparedAnswer",
    "UndoResult",
    "answer",
    "parse_rating",
    "prepare_answer",
    "review_id_taken",
    "store_answer",
    "undo",
    "undoable",
    "undoable_what",
    "write_answer",
]


class ConcurrentAnswer(LostRace):
    """Another transaction changed the card's state between our read and our write."""

    def __init__(self, card_id: int) -> None:
        super().__init__(f"card {card_id} changed while it was being answered")


@dataclass(frozen=True)
class UndoResult:
    review_id: str
    card_id: int
    state: CardState | None  # None: the card is new again
    what: str = "answer"  # or the action's name, as `undoable_what` gives it


def parse_rating(value: object) -> Rating:
    if isinstance(value, str) and value.lower() in ("again", "hard", "good", "easy"):
        return Rating[value.capitalize()]
    number = json_int(value)
    if number is not None and 1 <= number <= 4:
        return Rating(number)
    raise InvalidInput(
        "rating must be 1-4 or one of 'again', 'hard', 'good', 'easy'", field="rating"
    )


def review_id_taken(db: Session | Executor, review_id: str) -> bool:
    """Whether an answer with this review id is stored (a resend of it changes nothing)."""
    return sql.log_of_review_id(executor(db), review_id) is not None


def write_answer(db: Connection | Executor, prepared: PreparedAnswer) -> AnswerResult:
    """Store a prepared answer: the new state, then its log row, in the caller's transaction.

    Raises ConcurrentAnswer (or IntegrityError, for a racing first answer or review id) when
    another transaction got there first; the caller prepares again and retries.
    """
    db = executor(db)
    if prepared.restart:
        log = prepared.log
        marks.save_place(db, log["user_id"], log["card_id"], log["review_id"], log["reviewed_at"])
    _write_state(db, prepared.state, prepared.version, restart=prepared.restart)
    sql.insert_log(db, prepared.log)  # after: a log references its state
    if prepared.effects is not None:
        answer_effects.apply_answer_effects(db, prepared.effects)
    return prepared.result


def answer(
    db: Session | DirectConnection,
    caller: int | TokenOwner,
    card_id: int,
    rating: Rating,
    review_id: str,
    *,
    now: datetime,
    reviewed_at: datetime | None = None,
    duration_ms: int | None = None,
) -> AnswerResult:
    """Answer a card: the one use case of the web's and the API's answers, for a caller the
    edge has identified (by their id, or as their API token's owner: see `prepare_answer`).

    In a session's transaction (the caller commits), or on a direct connection in one
    transaction of its own (`store_answer`). Raises what `write_answer` raises when another
    transaction got there first: the caller retries (`storage.retry.with_retries`, `retrying`).
    """
    prepared = prepare_answer(
        db, caller, card_id, rating, review_id,
        now=now, reviewed_at=reviewed_at, duration_ms=duration_ms,
    )  # fmt: skip
    if isinstance(prepared, AnswerResult):
        return prepared
    if isinstance(db, DirectConnection):
        return store_answer(db, prepared)
    return write_answer(db.connection(), prepared)


def store_answer(connection: DirectConnection, prepared: PreparedAnswer) -> AnswerResult:
    """Store a prepared answer atomically, in a transaction of its own.

    On PostgreSQL the state write and the log insert are one statement (a data-modifying
    CTE): one round trip, and no BEGIN or COMMIT to wait for. SQLite, which has no such
    CTEs, runs `write_answer` in a write transaction: local calls, no round trips; so does
    the rare answer that buries siblings or marks a leech, whose writes join its own, or
    that starts a forgotten card over (its state write is undo's, with introduced_at).
    Raises what `write_answer` raises when another transaction got there first.
    """
    if connection.dialect.name != "postgresql" or prepared.effects is not None or prepared.restart:
        with connection.write():
            return write_answer(connection, prepared)
    params = _state_params(prepared.state, prepared.version)
    params.update({f"l_{name}": prepared.log[name] for name in sql.LOG_COLUMNS})
    if not sql.write_state_and_log(connection, params, first=prepared.version is None):
        raise ConcurrentAnswer(prepared.result.card_id)
    return prepared.result


def _state_params(values: dict[str, Any], version: int | None) -> dict[str, Any]:
    params = {f"b_{name}": values[name] for name in sql.WRITTEN_COLUMNS}
    params.update(
        b_user_id=values["user_id"],
        b_card_id=values["card_id"],
        b_deck_id=values["deck_id"],
        b_version=version,
        b_new_version=1 if version is None else version + 1,
    )
    return params


def _write_state(
    db: Executor,
    values: dict[str, Any],
    version: int | None,
    *,
    restore: bool = False,
    restart: bool = False,
) -> None:
    params = _state_params(values, version)
    if version is None:
        # A racing first answer hits the primary key; the caller's retry then sees the row.
        sql.insert_state(db, params)
        return
    if not sql.update_state(db, params, restore=restore, restart=restart):
        raise ConcurrentAnswer(values["card_id"])


# Answers and actions of today looked through for the latest made here: a device's sync
# brings its own in between (an Anki client syncing on its own every few minutes).
LOOKBACK = 50


def _latest_today(session: Session, user_id: int, now: datetime) -> tuple[Any, Any]:
    """The user's latest answer of their current study day (its log row) or latest action
    on cards (`marks.recent_actions`) made here, whichever came last: (log, None), (None,
    action) or (None, None).

    Latest by the time answered, not by row: an imported Anki history is written after the
    answers given here. Only on decks the user can still see: one a team took away is no
    longer theirs to change. Not one an Anki device made (`device_origin`): undo here takes
    back what was done here, past what a device's sync brought since (up to `LOOKBACK`).
    """
    user = user_clock(session, user_id)
    start, _end = day_bounds(now, user.timezone, user.day_start_hour)
    logs = session.execute(
        select(rl)
        .join(Deck, Deck.id == rl.c.deck_id)
        .where(rl.c.user_id == user_id, rl.c.reviewed_at >= start, visible_decks(user_id))
        .order_by(rl.c.reviewed_at.desc(), rl.c.id.desc())
        .limit(LOOKBACK)
    ).all()
    log = next(
        (r for r in logs if not device_origin.is_device_answer(user_id, r.review_id,
                                                                r.reviewed_at)),
        None,
    )  # fmt: skip
    action = next(
        (
            a
            for a in marks.recent_actions(session, user_id, start, LOOKBACK)
            if not device_origin.is_device_action(user_id, a.card_id, a.action_id, a.acted_at)
        ),
        None,
    )
    # An action at the very time of an answer came after it: one acts on the card shown.
    if action is not None and (log is None or action.acted_at >= log.reviewed_at):
        return None, action
    return log, None


def undoable(session: Session, user_id: int, *, now: datetime) -> str | None:
    """The id (an answer's review id, an action's id) of what `undo` would undo now, or None
    when there is nothing."""
    found = undoable_what(session, user_id, now=now)
    return None if found is None else found[0]


def undoable_what(session: Session, user_id: int, *, now: datetime) -> tuple[str, str] | None:
    """What `undo` would undo now: its id, and "answer" or the action's name ("suspend",
    "bury", "flag", "forget", "due"...), for the undo button to say; None: nothing."""
    log, action = _latest_today(session, user_id, now)
    if action is not None:
        return str(action.action_id), str(action.action)
    return None if log is None else (str(log.review_id), "answer")


def undo(
    session: Session, user_id: int, *, now: datetime, review_id: str | None = None
) -> UndoResult:
    """Undo the user's latest answer of the current study day, restoring the state before it,
    or their latest action on cards (suspend, bury, flag...), if that came later: one undo
    for both, as in Anki. Undoing an answer undoes what came with it (siblings buried, a
    leech marked).

    With `review_id` (or an action's id), only that one, and only while it is the latest: a
    client that retries (or a second tab) then cannot undo a second answer by mistake.
    """
    log, action = _latest_today(session, user_id, now)
    latest = action.action_id if action is not None else log.review_id if log else None
    if review_id is not None and latest != review_id:
        named = select(rl.c.id).where(rl.c.review_id == review_id, rl.c.user_id == user_id)
        if session.scalar(named) is None and not marks.exists(session, user_id, review_id):
            raise UnknownReviewId(
                "you have no answer with this review_id (it may have been undone already)",
                field="review_id",
            )
        raise NotLatestAnswer(
            "only your latest answer of today can be undone, and this is not it",
            field="review_id",
        )
    if action is not None:
        cards = marks.revert(session, user_id, action_id=action.action_id)
        state = card_state(session, user_id, cards[0])
        return UndoResult(action.action_id, cards[0], state, str(action.action))
    if log is None:
        raise NothingToUndo("there is no answer from today to undo")
    # The version only while no later answer of the card is there, read in one statement (one
    # snapshot): one committed since `log` was read would otherwise pass the version check,
    # and the restore would overwrite its state while its log stayed.
    later = select(rl.c.id).where(
        rl.c.user_id == user_id,
        rl.c.card_id == log.card_id,
        or_(
            rl.c.reviewed_at > log.reviewed_at,
            and_(rl.c.reviewed_at == log.reviewed_at, rl.c.id > log.id),
        ),
    )
    current = session.execute(
        select(rs.c.version).where(
            rs.c.user_id == user_id, rs.c.card_id == log.card_id, ~later.exists()
        )
    ).scalar()
    if current is None:
        raise ConcurrentAnswer(log.card_id)
    removed = session.execute(delete(rl).where(rl.c.id == log.id))
    if getattr(removed, "rowcount", 0) != 1:
        # A concurrent undo of the same answer removed it after our read: it wrote the state
        # back already, so writing it again (maybe over a newer answer's) would be wrong. The
        # retry finds the answer gone, and does nothing.
        raise ConcurrentAnswer(log.card_id)
    restored = state_from_row(log, suffix="_before")
    if log.state_before == NEW_STATE:
        # A forgotten card's first answer: it is forgotten again, and `marks.revert` below
        # puts it back at its place among the new cards (`marks.save_place`).
        keys = {"user_id": user_id, "card_id": log.card_id, "deck_id": log.deck_id}
        saved = {name: getattr(log, f"{name}_before") for name in sql.WRITTEN_COLUMNS}
        _write_state(executor(session), {**keys, **saved}, current, restore=True)
    elif restored is None:
        # Only the state read above: one that an answer changed since then would take that
        # answer's log with it (the logs reference their state).
        deleted = session.execute(
            delete(rs).where(
                rs.c.user_id == user_id, rs.c.card_id == log.card_id, rs.c.version == current
            )
        )
        if getattr(deleted, "rowcount", 0) != 1:
            raise ConcurrentAnswer(log.card_id)
    else:
        keys = {"user_id": user_id, "card_id": log.card_id, "deck_id": log.deck_id}
        values = {**keys, **state_values(restored, log.introduced_at_before)}
        _write_state(executor(session), values, current, restore=True)
    marks.revert(session, user_id, review_id=log.review_id)
    return UndoResult(log.review_id, log.card_id, restored)
