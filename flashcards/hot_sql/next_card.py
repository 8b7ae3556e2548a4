"""The queue's statements: each subscribed deck's plan for today, and the first card due.

Every lookup is a range scan on an index that starts with the user id (or, for a deck's
cards, the deck id): the cost follows what is due, not how much a person has studied.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, datetime
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import Date, Table, bindparam, case, exists, func, literal_column, or_, select
from sqlalchemy.orm import aliased
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import BindParameter

from ..srs.state_rows import NEW_STATE, STATE_COLUMNS, rs
from ..storage.models import (
    Card,
    CardMark,
    CardText,
    Deck,
    DeckFsrsParameters,
    ReviewLog,
    SchedulerSettings,
    Subscription,
    User,
)
from .rawsql import Executor, Statement

# The review answers of a day counted at most, per deck, in the one statement of the counts:
# the queue needs only as many as the daily review limit, and this is the default limit. A
# deck whose limit is higher is counted again, up to its own limit, once this is reached.
REVIEWED_COUNTED = 200
LEARNING_STATES = (1, 3)
REVIEW_STATE = 2
rl = cast(Table, ReviewLog.__table__)


_USER: BindParameter[int] = bindparam("user_id")
_STATE_COLUMNS = (rs.c.card_id, rs.c.deck_id, *(rs.c[n] for n in STATE_COLUMNS))
_SUB = cast(Table, Subscription.__table__)
_SETTINGS = cast(Table, SchedulerSettings.__table__)

_CARDS = cast(Table, Card.__table__)
_DECK = _SUB.c.deck_id
_LEARNING_DUE = rs.c.state.in_(LEARNING_STATES) & (rs.c.due <= bindparam("learn_ahead_until"))
_REVIEW_DUE = (rs.c.state == REVIEW_STATE) & (rs.c.due < bindparam("day_end"))
_RETIRED = (_CARDS.c.deck_id == _DECK) & _CARDS.c.retired_at.is_not(None)
_MARKS = cast(Table, CardMark.__table__)
# Forgotten (NEW_STATE): only such states have a place among the new cards. This condition
# rather than the state's is ix_review_states_forgotten's, which the planners then use.
_FORGOTTEN = rs.c.new_position.is_not(None)
# A card the person suspended, or buried until a later study day, is not shown today.
_HIDDEN = or_(_MARKS.c.suspended, _MARKS.c.buried_until > bindparam("today", type_=Date()))


def _not_hidden(card_id: Any) -> Any:
    return ~exists().where(_MARKS.c.user_id == _USER, _MARKS.c.card_id == card_id, _HIDDEN)


def _hidden_count(state: Any) -> Any:
    """The deck's live cards the person hid whose state matches `state` (an EXISTS, or NOT
    EXISTS for new cards). Hidden cards are few: the deck's mark rows drive the count
    (ix_card_marks_user_deck), each probing its card and its state, rather than a scan of
    the person's due states probing each one's mark."""
    return _count(
        _MARKS.c.user_id == _USER,
        _MARKS.c.deck_id == _DECK,
        _HIDDEN,
        _CARDS.c.retired_at.is_(None),
        state,
        select_from=_MARKS.join(_CARDS, _CARDS.c.id == _MARKS.c.card_id),
    )


def _marked_state(*where: Any) -> Any:
    return exists().where(rs.c.user_id == _USER, rs.c.card_id == _MARKS.c.card_id, *where)


# Written into the SQL, not bound: only a literal lets the planners (SQLite's, and
# PostgreSQL's for a prepared statement's generic plan) use the partial index of review
# answers, ix_review_logs_review_answers, whose condition this is.
_REVIEW_ANSWER = rl.c.state_before == literal_column(str(REVIEW_STATE))


def _count(*where: Any, select_from: Any = rs) -> Any:
    return select(func.count()).select_from(select_from).where(*where).scalar_subquery()


def _review_answers(deck: Any, limit: BindParameter[int]) -> Any:
    """How many review answers the person gave in the deck today, counted up to `limit`.

    Bounded so that a heavy day costs no more than the limit: the rows are index entries
    (ix_review_logs_review_answers), but there may be thousands of them."""
    today = (
        select(literal_column("1"))
        .select_from(rl)
        .where(
            rl.c.user_id == _USER,
            rl.c.deck_id == deck,
            rl.c.reviewed_at >= bindparam("day_start"),
            _REVIEW_ANSWER,
        )
        .limit(limit)
        # In FROM, a subquery is not correlated unless told: the deck is the outer row's.
        .correlate(_SUB)
        .subquery("answered")
    )
    return select(func.count()).select_from(today).scalar_subquery()


def _has_state(*where: Any) -> Any:
    # EXISTS rather than a join, so that the (few) retired cards drive the lookup.
    return exists().where(rs.c.user_id == _USER, rs.c.card_id == _CARDS.c.id, *where)


# Each subscribed deck with its settings and everything its counts need, in one statement:
# each number is a count over a range of an index (the deck's states, its cards, today's
# review answers), never a visit to each card or log row. A card is new until the person
# has a state for it, or again once they forgot it, so the new cards left are the deck's
# live cards minus the person's states in it that are not forgotten. States on retired
# cards are counted by the deck-wide counts but never shown, so they are counted apart and
# taken off; retired cards are few, so this beats joining every state to its card.
_PLANS_SELECT = (
    select(
        _DECK,
        # The subscription's overrides of the person's settings (NULL: none).
        _SUB.c.desired_retention,
        _SUB.c.learning_steps,
        _SUB.c.relearning_steps,
        _SUB.c.maximum_interval,
        _SUB.c.new_per_day,
        _SUB.c.paced_new_per_day,
        _SUB.c.reviews_per_day,
        # Custom study's cards on top of the limits, counted on the study day `extended_on` only.
        _SUB.c.extended_on,
        _SUB.c.extra_new,
        _SUB.c.extra_reviews,
        Deck.slug,
        _SETTINGS.c.desired_retention.label("user_desired_retention"),
        _SETTINGS.c.learning_steps.label("user_learning_steps"),
        _SETTINGS.c.relearning_steps.label("user_relearning_steps"),
        _SETTINGS.c.maximum_interval.label("user_maximum_interval"),
        _SETTINGS.c.new_per_day.label("user_new_per_day"),
        _SETTINGS.c.reviews_per_day.label("user_reviews_per_day"),
        _SETTINGS.c.parameters,
        DeckFsrsParameters.parameters.label("deck_parameters"),  # a team deck's fit
        _count(
            rs.c.user_id == _USER,
            rs.c.deck_id == _DECK,
            rs.c.introduced_at >= bindparam("day_start"),
        ).label("introduced"),
        # Counted only for a deck with reviews due: otherwise the limit has nothing to limit.
        case(
            (
                exists().where(rs.c.user_id == _USER, rs.c.deck_id == _DECK, _REVIEW_DUE),
                _review_answers(_DECK, bindparam("reviewed_counted", REVIEWED_COUNTED)),
            ),
            else_=0,
        ).label("reviewed"),
        _count(rs.c.user_id == _USER, rs.c.deck_id == _DECK, _LEARNING_DUE).label("learning"),
        _count(rs.c.user_id == _USER, rs.c.deck_id == _DECK, _REVIEW_DUE).label("review"),
        _count(_CARDS.c.deck_id == _DECK, _CARDS.c.retired_at.is_(None), select_from=_CARDS).label(
            "live_cards"
        ),
        _count(rs.c.user_id == _USER, rs.c.deck_id == _DECK).label("states"),
        # States of live cards forgotten (new again): few, read from their partial index.
        _count(
            rs.c.user_id == _USER,
            rs.c.deck_id == _DECK,
            _FORGOTTEN,
            select_from=rs.join(
                _CARDS, (_CARDS.c.id == rs.c.card_id) & _CARDS.c.retired_at.is_(None)
            ),
        ).label("forgotten"),
        _count(_RETIRED, _has_state(), select_from=_CARDS).label("retired_states"),
        _count(_RETIRED, _has_state(_LEARNING_DUE), select_from=_CARDS).label("retired_learning"),
        _count(_RETIRED, _has_state(_REVIEW_DUE), select_from=_CARDS).label("retired_review"),
        _hidden_count(~_marked_state(rs.c.state != NEW_STATE)).label("hidden_new"),
        _hidden_count(_marked_state(_LEARNING_DUE)).label("hidden_learning"),
        _hidden_count(_marked_state(_REVIEW_DUE)).label("hidden_review"),
    )
    .join(Deck, Deck.id == _DECK)
    .join(_SETTINGS, _SETTINGS.c.user_id == _SUB.c.user_id)
    .outerjoin(DeckFsrsParameters, DeckFsrsParameters.deck_id == _DECK)
    .where(_SUB.c.user_id == _USER)
    .order_by(_SUB.c.created_at, Deck.slug)
)
_PLANS = Statement(_PLANS_SELECT)
_REVIEWED = Statement(
    select(_review_answers(bindparam("deck_id"), bindparam("review_limit")).label("reviewed"))
)
_CLOCK = Statement(select(User.timezone, User.day_start_hour).where(User.id == _USER))
_OWN_TEXT = aliased(CardText, name="own_text")
_DECK_TEXT = aliased(CardText, name="deck_text")
_TEXT_FIELDS = ("locale", "question", "answer", "explanation")


def _shown(query: Select[Any]) -> Statement:
    """The query's card (one row, `card_id` and `deck_id`) with what showing it needs: its
    key and its text in the person's locale, or else in the deck's, read along with it.

    Joined outside the query, so that the query's scan stops at its first row."""
    first = query.subquery("first")
    return Statement(
        select(
            first,
            _CARDS.c.key,
            *(getattr(_OWN_TEXT, f).label(f"own_{f}") for f in _TEXT_FIELDS),
            *(getattr(_DECK_TEXT, f).label(f"deck_{f}") for f in _TEXT_FIELDS),
        )
        .join(_CARDS, _CARDS.c.id == first.c.card_id)
        .join(_SUB, (_SUB.c.user_id == _USER) & (_SUB.c.deck_id == first.c.deck_id))
        .join(Deck, Deck.id == first.c.deck_id)
        .outerjoin(
            _OWN_TEXT,
            (_OWN_TEXT.card_id == first.c.card_id) & (_OWN_TEXT.locale == _SUB.c.locale),
        )
        .outerjoin(
            _DECK_TEXT,
            (_DECK_TEXT.card_id == first.c.card_id) & (_DECK_TEXT.locale == Deck.default_locale),
        )
    )


def _first_due(decks: int, *where: Any) -> Statement:
    """The first due state among `decks` decks, named `deck_0`, `deck_1`... (`_in_decks`)."""
    return _shown(
        select(*_STATE_COLUMNS)
        .select_from(rs.join(_CARDS, (_CARDS.c.id == rs.c.card_id) & _CARDS.c.retired_at.is_(None)))
        .where(
            rs.c.user_id == _USER,
            rs.c.deck_id.in_([bindparam(f"deck_{i}") for i in range(decks)]),
            *where,
            _not_hidden(rs.c.card_id),
        )
        .order_by(rs.c.due)
        .limit(1)
    )


def _in_decks(deck_ids: list[int]) -> dict[str, int]:
    return {f"deck_{i}": deck for i, deck in enumerate(deck_ids)}


# One statement per number of decks (compiled once each): a person studies a few decks.
@lru_cache(maxsize=64)
def _first_learning(decks: int) -> Statement:
    return _first_due(
        decks, rs.c.state.in_(LEARNING_STATES), rs.c.due <= bindparam("learn_ahead_until")
    )


@lru_cache(maxsize=64)
def _plans_of_decks(decks: int) -> Statement:
    return Statement(_PLANS_SELECT.where(_DECK.in_([bindparam(f"deck_{i}") for i in range(decks)])))


@lru_cache(maxsize=64)
def _first_review(decks: int) -> Statement:
    return _first_due(decks, rs.c.state == REVIEW_STATE, rs.c.due < bindparam("day_end"))


# An outer join rather than NOT EXISTS: SQLite runs it as a plain index probe per card,
# half the cost of a correlated subquery. Run only for a deck known to have new cards left.
_FIRST_NEW = _shown(
    select(_CARDS.c.id.label("card_id"), _CARDS.c.deck_id, _CARDS.c.position.label("new_position"))
    .select_from(_CARDS.outerjoin(rs, (rs.c.user_id == _USER) & (rs.c.card_id == _CARDS.c.id)))
    .where(
        _CARDS.c.deck_id == bindparam("deck_id"),
        _CARDS.c.retired_at.is_(None),
        rs.c.card_id.is_(None),
        _not_hidden(_CARDS.c.id),
    )
    .order_by(_CARDS.c.position)
    .limit(1)
)
# A deck's first forgotten card, in the order forgetting gave them, with what starting it
# over needs. Run only for a deck with some (its plan counts them).
_FIRST_FORGOTTEN = _shown(
    select(*_STATE_COLUMNS, rs.c.new_position)
    .select_from(rs.join(_CARDS, (_CARDS.c.id == rs.c.card_id) & _CARDS.c.retired_at.is_(None)))
    .where(
        rs.c.user_id == _USER,
        rs.c.deck_id == bindparam("deck_id"),
        _FORGOTTEN,
        _not_hidden(rs.c.card_id),
    )
    .order_by(rs.c.new_position, rs.c.card_id)
    .limit(1)
)


def clock(db: Executor, user_id: int) -> Any:
    """The user's `timezone` and `day_start_hour`; None for no such user."""
    return db.first(_CLOCK, {"user_id": user_id})


def plans(db: Executor, params: dict[str, Any], deck_ids: Collection[int] | None) -> list[Any]:
    """A row per subscribed deck (only those of `deck_ids` if given, in that order) with its
    settings and counts; `params`: user_id, day_start, day_end, learn_ahead_until, today (the
    study day)."""
    if deck_ids is None:
        return db.all(_PLANS, params)
    ordered = list(deck_ids)
    rows = db.all(_plans_of_decks(len(ordered)), {**params, **_in_decks(ordered)})
    # In the order asked for (a parent before its subdecks): new cards come deck by deck.
    place = {deck_id: i for i, deck_id in enumerate(ordered)}
    return sorted(rows, key=lambda row: place[row.deck_id])


def reviewed(db: Executor, user_id: int, deck_id: int, day_start: datetime, limit: int) -> int:
    """The review answers given in the deck today, counted up to `limit`."""
    params = {"user_id": user_id, "deck_id": deck_id, "day_start": day_start, "review_limit": limit}
    return int(db.first(_REVIEWED, params).reviewed)


def first_learning(
    db: Executor, user_id: int, deck_ids: list[int], until: datetime, today: date
) -> Any:
    """The learning card due first among the decks (by `until` at the latest), or None;
    `today`: the study day, for buried cards."""
    params = {"user_id": user_id, **_in_decks(deck_ids), "learn_ahead_until": until}
    params["today"] = today
    return db.first(_first_learning(len(deck_ids)), params)


def first_review(
    db: Executor, user_id: int, deck_ids: list[int], day_end: datetime, today: date
) -> Any:
    """The review card due first among the decks (before `day_end`), or None."""
    params = {"user_id": user_id, **_in_decks(deck_ids), "day_end": day_end, "today": today}
    return db.first(_first_review(len(deck_ids)), params)


def first_new(db: Executor, user_id: int, deck_id: int, today: date) -> Any:
    """The deck's first card the user has no state for (and did not hide), or None."""
    return db.first(_FIRST_NEW, {"user_id": user_id, "deck_id": deck_id, "today": today})


def first_forgotten(db: Executor, user_id: int, deck_id: int, today: date) -> Any:
    """The deck's first card the user forgot (and did not hide), with its state, or None."""
    return db.first(_FIRST_FORGOTTEN, {"user_id": user_id, "deck_id": deck_id, "today": today})
