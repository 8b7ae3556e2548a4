"""Answering and undoing: the study engine's write paths.

Answering is the hot path, so it runs a few Core statements (`hot_sql.answers`) on
`rawsql`'s executor rather than ORM objects: one joined read of card, settings, state and
whether the review id is taken, then the state update (or insert) and the log insert, which
PostgreSQL takes as one statement (`store_answer`). The web and the API both answer through
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
from datetime import UTC, datetime, timedelta
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
    CardNotFound,
    CardRetired,
    InvalidInput,
    NothingToUndo,
    NotLatestAnswer,
    NotSubscribed,
    ReviewIdReused,
    UnknownReviewId,
)
from ..hot_sql import answers as sql
from ..hot_sql.answers import rl
from ..hot_sql.rawsql import DirectConnection, Executor, executor
from ..people.accounts import user_clock
from ..storage.models import Deck
from ..storage.retry import LostRace
from . import answer_effects, marks
from .days import Clock, day_bounds
from .scheduling import CardState, fuzz_seed, review
from .settings import json_int
from .state_rows import NEW_STATE, card_state, config_from, forgotten_state, rs, state_from_row
from .workload import workload

# Clocks of offline clients drift; an answer a little "in the future" is still accepted.
CLOCK_SKEW = timedelta(seconds=60)
# Anki numbers reviews by milliseconds since 1970, and a time near year 1 has no study date
# west of UTC (dates begin at year 1): an answer given earlier could be neither exported nor
# counted.
EARLIEST_REVIEW = datetime(1970, 1, 1, tzinfo=UTC)


class ConcurrentAnswer(LostRace):
    """Another transaction changed the card's state between our read and our write."""

    def __init__(self, card_id: int) -> None:
        super().__init__(f"card {card_id} changed while it was being answered")


@dataclass(frozen=True)
class AnswerResult:
    review_id: str
    card_id: int
    state: CardState
    created: bool  # False when the review id had already been applied


@dataclass(frozen=True)
class UndoResult:
    review_id: str
    card_id: int
    state: CardState | None  # None: the card is new again


def _result_from_log(log: Any) -> AnswerResult:
    # A log row's after-state has no last_review column: the answer's time is it.
    state = state_from_row(log, last_review="reviewed_at")
    assert state is not None
    return AnswerResult(log.review_id, log.card_id, state, created=False)


def parse_rating(value: object) -> Rating:
    if isinstance(value, str) and value.lower() in ("again", "hard", "good", "easy"):
        return Rating[value.capitalize()]
    number = json_int(value)
    if number is not None and 1 <= number <= 4:
        return Rating(number)
    raise InvalidInput(
        "rating must be 1-4 or one of 'again', 'hard', 'good', 'easy'", field="rating"
    )


class _Overrides:
    """Adapts the `sub_*` columns of the joined row to `config_from`'s subscription shape."""

    def __init__(self, row: Any) -> None:
        self.desired_retention = row.sub_desired_retention
        self.learning_steps = row.sub_learning_steps
        self.relearning_steps = row.sub_relearning_steps
        self.maximum_interval = row.sub_maximum_interval


@dataclass(frozen=True)
class PreparedAnswer:
    """An answer computed from what was read, ready to be written with `write_answer`."""

    log: dict[str, Any]
    state: dict[str, Any]
    version: int | None  # of the state row read; None: the card was new
    result: AnswerResult
    # Siblings to bury, a leech to mark; None (most answers): nothing beyond the answer.
    effects: answer_effects.AnswerEffects | None = None
    # The card was forgotten: it is introduced again now, so its state's introduced_at moves.
    restart: bool = False


def prepare_answer(
    db: Session | Executor,
    user_id: int,
    card_id: int,
    rating: Rating,
    review_id: str,
    *,
    now: datetime,
    reviewed_at: datetime | None = None,
    duration_ms: int | None = None,
) -> PreparedAnswer | AnswerResult:
    """Read and compute an answer; an AnswerResult when this review id was already applied.

    Reads only, so the caller may do it outside the write transaction (on SQLite the write
    lock is then held just for the two writes); `write_answer` detects a state that changed
    in between through its version.
    """
    db = executor(db)
    row = sql.card_for_answer(db, user_id, card_id, review_id)
    if row is None or row.used_review_id is not None:
        existing = sql.log_of_review_id(db, review_id)
        if existing is not None:
            if existing.user_id != user_id or existing.card_id != card_id:
                raise ReviewIdReused(
                    "this review_id was already used for another answer", field="review_id"
                )
            if existing.rating != int(rating):
                # A resend carries the same answer; another rating is another answer (a second
                # tab, a client bug), and applying neither silently would lose it.
                raise ReviewIdReused(
                    "this review_id was already used with another rating", field="review_id"
                )
            return _result_from_log(existing)
    if row is None:
        raise CardNotFound(f"no card {card_id}")
    if row.subscribed_deck_id is None:
        # As in Anki, only cards of decks one studies are answered: an answer here would
        # start a schedule that no queue shows and no statistics count.
        raise NotSubscribed("subscribe to this card's deck before answering it", field="card_id")
    restart = row.state == NEW_STATE
    before = forgotten_state(row) if restart else state_from_row(row)
    # The row's, a forgotten card's too: an answer never goes before one already given.
    last_review = row.last_review
    if reviewed_at is None:
        # A live answer comes after the last one. Instances' clocks differ a little, and a
        # retried transaction may find an answer committed with a later clock reading.
        when = now if last_review is None else max(now, last_review)
    else:
        if reviewed_at > now + CLOCK_SKEW:
            raise InvalidInput("reviewed_at is in the future", field="reviewed_at")
        if reviewed_at < EARLIEST_REVIEW:
            raise InvalidInput("reviewed_at is before 1970", field="reviewed_at")
        # Within the skew, store our own clock: a last review "ahead" of it would make the
        # next answer (at the server's now) look older than the card's last review.
        when = min(reviewed_at, now)
        if last_review is not None and when < last_review:
            raise InvalidInput("reviewed_at is before the card's last review", field="reviewed_at")
    if (before is None or restart) and row.retired_at is not None:
        raise CardRetired("this card was retired from its deck and is no longer introduced")

    team_fit = None
    if row.parameters is None and row.deck_team_id is not None:
        team_fit = sql.team_deck_parameters(db, row.deck_id)
    config = config_from(row, _Overrides(row), team_fit)
    reps_before = before.reps if before else 0
    seed = fuzz_seed(user_id, card_id, reps_before)
    clock = Clock(row.timezone, row.day_start_hour)
    balance = workload(db, user_id, when, clock, card_id)
    after = review(config, before, rating, when, seed=seed, clock=clock, workload=balance)
    log = {
        "review_id": review_id,
        "user_id": user_id,
        "card_id": card_id,
        "deck_id": row.deck_id,
        "rating": int(rating),
        "reviewed_at": when,
        "duration_ms": duration_ms,
        "state_before": row.state,
        "step_before": row.step,
        "stability_before": row.stability,
        "difficulty_before": row.difficulty,
        "due_before": row.due,
        "last_review_before": row.last_review,
        "reps_before": reps_before,
        "lapses_before": before.lapses if before else 0,
        "introduced_at_before": row.introduced_at,
        "state": int(after.state),
        "step": after.step,
        "stability": after.stability,
        "difficulty": after.difficulty,
        "due": after.due,
        "reps": after.reps,
        "lapses": after.lapses,
    }
    state = {
        "user_id": user_id,
        "card_id": card_id,
        "deck_id": row.deck_id,
        **_state_values(after, when if restart else row.introduced_at or when),
    }
    effects = answer_effects.answer_effects(
        user_id, row, review_id, when, before.lapses if before else 0, after
    )
    result = AnswerResult(review_id, card_id, after, True)
    return PreparedAnswer(log, state, row.version, result, effects, restart)


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
    user_id: int,
    card_id: int,
    rating: Rating,
    review_id: str,
    *,
    now: datetime,
    reviewed_at: datetime | None = None,
    duration_ms: int | None = None,
) -> AnswerResult:
    """Answer a card: the one use case of the web's and the API's answers.

    In a session's transaction (the caller commits), or on a direct connection in one
    transaction of its own (`store_answer`). Raises what `write_answer` raises when another
    transaction got there first: the caller retries (`storage.retry.with_retries`, `retrying`).
    """
    prepared = prepare_answer(
        db, user_id, card_id, rating, review_id,
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


def _state_values(state: CardState, introduced_at: datetime | None) -> dict[str, Any]:
    return {
        "state": int(state.state),
        "step": state.step,
        "stability": state.stability,
        "difficulty": state.difficulty,
        "due": state.due,
        "last_review": state.last_review,
        "reps": state.reps,
        "lapses": state.lapses,
        "introduced_at": introduced_at,
    }


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


def _latest_today(session: Session, user_id: int, now: datetime) -> tuple[Any, Any]:
    """The user's latest answer of their current study day (its log row) or latest action
    on cards (`marks.latest_action`), whichever came last: (log, None), (None,
    action) or (None, None).

    Latest by the time answered, not by row: an imported Anki history is written after the
    answers given here. Only on decks the user can still see: one a team took away is no
    longer theirs to change.
    """
    user = user_clock(session, user_id)
    start, _end = day_bounds(now, user.timezone, user.day_start_hour)
    log = session.execute(
        select(rl)
        .join(Deck, Deck.id == rl.c.deck_id)
        .where(rl.c.user_id == user_id, rl.c.reviewed_at >= start, visible_decks(user_id))
        .order_by(rl.c.reviewed_at.desc(), rl.c.id.desc())
        .limit(1)
    ).first()
    action = marks.latest_action(session, user_id, start)
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
        return UndoResult(action.action_id, cards[0], card_state(session, user_id, cards[0]))
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
        values = {**keys, **_state_values(restored, log.introduced_at_before)}
        _write_state(executor(session), values, current, restore=True)
    marks.revert(session, user_id, review_id=log.review_id)
    return UndoResult(log.review_id, log.card_id, restored)
