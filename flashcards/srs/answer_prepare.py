"""An answer read and computed: what `study.answer` then writes.

One read (`hot_sql.answers.answer_read`) brings the caller, the card, whether its deck is
studied, the settings that apply, the state, and whether the review id is taken; on
PostgreSQL, where each read is a round trip, also what the load balancer may ask of the
person's due cards (`answer_loads`). The caller is a user id, or the owner of an API token
(`accounts.TokenOwner`): the API's edge names its caller by the token, and this same read
finds who that is, so that an answer costs no lookup of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fsrs import Rating
from sqlalchemy.orm import Session

from ..errors import CardNotFound, CardRetired, InvalidInput, NotSubscribed, ReviewIdReused
from ..hot_sql import answers as sql
from ..hot_sql.rawsql import Executor, executor
from ..people.accounts import InvalidToken, TokenOwner
from . import answer_effects
from .answer_loads import prefetch_range, prefetched_workload
from .days import Clock
from .scheduling import CardState, fuzz_seed, review
from .state_rows import NEW_STATE, config_from, forgotten_state, state_from_row
from .workload import workload

# Clocks of offline clients drift; an answer a little "in the future" is still accepted.
CLOCK_SKEW = timedelta(seconds=60)
# Anki numbers reviews by milliseconds since 1970, and a time near year 1 has no study date
# west of UTC (dates begin at year 1): an answer given earlier could be neither exported nor
# counted.
EARLIEST_REVIEW = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class AnswerResult:
    review_id: str
    card_id: int
    state: CardState
    created: bool  # False when the review id had already been applied


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


class _Overrides:
    """Adapts the `sub_*` columns of the joined row to `config_from`'s subscription shape."""

    def __init__(self, row: Any) -> None:
        self.desired_retention = row.sub_desired_retention
        self.learning_steps = row.sub_learning_steps
        self.relearning_steps = row.sub_relearning_steps
        self.maximum_interval = row.sub_maximum_interval


def _result_from_log(log: Any) -> AnswerResult:
    # A log row's after-state has no last_review column: the answer's time is it.
    state = state_from_row(log, last_review="reviewed_at")
    assert state is not None
    return AnswerResult(log.review_id, log.card_id, state, created=False)


def state_values(state: CardState, introduced_at: datetime | None) -> dict[str, Any]:
    """A state row's written columns."""
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


def prepare_answer(
    db: Session | Executor,
    caller: int | TokenOwner,
    card_id: int,
    rating: Rating,
    review_id: str,
    *,
    now: datetime,
    reviewed_at: datetime | None = None,
    duration_ms: int | None = None,
) -> PreparedAnswer | AnswerResult:
    """Read and compute an answer; an AnswerResult when this review id was already applied.

    Raises InvalidToken when `caller` is a token that nobody owns. Reads only, so the caller
    may do it outside the write transaction (on SQLite the write lock is then held just for
    the two writes); `write_answer` detects a state that changed in between through its
    version.
    """
    db = executor(db)
    # A round trip on PostgreSQL; on SQLite a local call, made only when it is needed.
    loads = prefetch_range(now) if db.dialect.name == "postgresql" else None
    who = caller.token_hash if isinstance(caller, TokenOwner) else caller
    row = sql.answer_read(db, who, card_id, review_id, loads)
    if row is not None:
        user_id = int(row.user_id)
    elif isinstance(caller, TokenOwner):
        raise InvalidToken()
    else:
        user_id = caller
    if row is None or row.card_id is None or row.used_review_id is not None:
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
    if row is None or row.card_id is None:
        raise CardNotFound(f"no card {card_id}")
    if row.subscribed_deck_id is None:
        # As in Anki, only cards of decks one studies are answered: an answer here would
        # start a schedule that no queue shows and no statistics count.
        raise NotSubscribed("subscribe to this card's deck before answering it", field="card_id")
    restart = row.state == NEW_STATE
    before = forgotten_state(row) if restart else state_from_row(row)
    # The row's, a forgotten card's too: an answer never goes before one already given.
    when = _answered_at(row.last_review, now, reviewed_at)
    if (before is None or restart) and row.retired_at is not None:
        raise CardRetired("this card was retired from its deck and is no longer introduced")

    team_fit = row.team_parameters if row.parameters is None else None
    config = config_from(row, _Overrides(row), team_fit)
    reps_before = before.reps if before else 0
    lapses_before = before.lapses if before else 0
    seed = fuzz_seed(user_id, card_id, reps_before)
    clock = Clock(row.timezone, row.day_start_hour)
    balance = workload(db, user_id, when, clock, card_id, bury_reviews=bool(row.bury_reviews))
    if loads is not None:
        balance = prefetched_workload(row, loads, balance, clock)
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
        "lapses_before": lapses_before,
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
        **state_values(after, when if restart else row.introduced_at or when),
    }
    effects = answer_effects.answer_effects(user_id, row, review_id, when, lapses_before, after)
    result = AnswerResult(review_id, card_id, after, True)
    return PreparedAnswer(log, state, row.version, result, effects, restart)


def _answered_at(
    last_review: datetime | None, now: datetime, reviewed_at: datetime | None
) -> datetime:
    """When the answer counts as given: `now` for a live answer, else the client's time."""
    if reviewed_at is None:
        # A live answer comes after the last one. Instances' clocks differ a little, and a
        # retried transaction may find an answer committed with a later clock reading.
        return now if last_review is None else max(now, last_review)
    if reviewed_at > now + CLOCK_SKEW:
        raise InvalidInput("reviewed_at is in the future", field="reviewed_at")
    if reviewed_at < EARLIEST_REVIEW:
        raise InvalidInput("reviewed_at is before 1970", field="reviewed_at")
    # Within the skew, store our own clock: a last review "ahead" of it would make the next
    # answer (at the server's now) look older than the card's last review.
    when = min(reviewed_at, now)
    if last_review is not None and when < last_review:
        raise InvalidInput("reviewed_at is before the card's last review", field="reviewed_at")
    return when
