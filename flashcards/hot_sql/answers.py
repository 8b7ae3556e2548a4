"""The answer's statements: its one read, and its writes (`study` decides which)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Table,
    and_,
    bindparam,
    extract,
    func,
    insert,
    literal_column,
    select,
    true,
    update,
)
from sqlalchemy import cast as cast_as
from sqlalchemy.sql.elements import BindParameter

from ..decks.access import visible_decks
from ..srs.state_rows import STATE_COLUMNS, rs
from ..storage.models import (
    ApiToken,
    Card,
    Deck,
    DeckFsrsParameters,
    ReviewLog,
    SchedulerSettings,
    StudyOptions,
    Subscription,
    User,
)
from .rawsql import Executor, Statement

rl = cast(Table, ReviewLog.__table__)
_USER: BindParameter[int] = bindparam("user_id")
_CARD: BindParameter[int] = bindparam("card_id")
_LOG_BY_REVIEW_ID = Statement(select(rl).where(rl.c.review_id == bindparam("review_id")))
_SUB = cast(Table, Subscription.__table__)
_SETTINGS = cast(Table, SchedulerSettings.__table__)
_USERS = cast(Table, User.__table__)
_OPTIONS = cast(Table, StudyOptions.__table__)
_TOKENS = cast(Table, ApiToken.__table__)
_TEAM_FITS = cast(Table, DeckFsrsParameters.__table__)


def _answer_read(*, by_token: bool, with_loads: bool) -> Statement:
    """The answer's one read: the caller (by user id, or by the hash of their API token), and
    the card, whether its deck is studied and the settings that apply, the state, and whether
    the review id is taken. One row per caller; the card's columns are NULL when the caller
    can see no such card. `with_loads` adds what the load balancer may ask of the person's due
    cards (see `_due_hours`)."""
    user = _USERS.c.id
    if by_token:
        caller: Any = _TOKENS.join(_USERS, _USERS.c.id == _TOKENS.c.user_id)
        who = _TOKENS.c.token_hash == bindparam("token_hash")
    else:
        caller, who = _USERS, _USERS.c.id == _USER
    card = Card.__table__.join(Deck.__table__, Deck.id == Card.deck_id)
    source = (
        caller.join(_SETTINGS, _SETTINGS.c.user_id == user)
        .outerjoin(card, and_(Card.id == _CARD, visible_decks(user)))
        .outerjoin(_SUB, and_(_SUB.c.user_id == user, _SUB.c.deck_id == Card.deck_id))
        .outerjoin(rs, and_(rs.c.user_id == user, rs.c.card_id == Card.id))
        .outerjoin(_OPTIONS, _OPTIONS.c.user_id == user)
    )
    columns: list[Any] = [
        user.label("user_id"),
        Card.id.label("card_id"),  # None: no such card the caller can see
        Card.deck_id,
        Card.retired_at,
        Card.note_key,
        _SETTINGS.c.desired_retention,
        _SETTINGS.c.learning_steps,
        _SETTINGS.c.relearning_steps,
        _SETTINGS.c.maximum_interval,
        _SETTINGS.c.parameters,
        Deck.owner_team_id.label("deck_team_id"),
        # A team deck may have parameters of its own, for those without personal ones.
        select(_TEAM_FITS.c.parameters)
        .where(_TEAM_FITS.c.deck_id == Deck.id, Deck.owner_team_id.is_not(None))
        .scalar_subquery()
        .label("team_parameters"),
        _SUB.c.desired_retention.label("sub_desired_retention"),
        _SUB.c.learning_steps.label("sub_learning_steps"),
        _SUB.c.relearning_steps.label("sub_relearning_steps"),
        _SUB.c.maximum_interval.label("sub_maximum_interval"),
        _SUB.c.deck_id.label("subscribed_deck_id"),  # None: the card's deck is not studied
        *(rs.c[name] for name in STATE_COLUMNS),
        rs.c.introduced_at,
        rs.c.version,
        # The person's clock: FSRS counts the time since the last review in study days.
        _USERS.c.timezone,
        _USERS.c.day_start_hour,
        # Sibling burying and leeches (NULL: Anki's defaults, see answer_effects.Options).
        _OPTIONS.c.bury_new,
        _OPTIONS.c.bury_reviews,
        _OPTIONS.c.bury_interday,
        _OPTIONS.c.leech_threshold,
        _OPTIONS.c.leech_suspend,
        # Whether the review id was used already: then `_LOG_BY_REVIEW_ID` says how.
        select(rl.c.id)
        .where(rl.c.review_id == bindparam("review_id"))
        .scalar_subquery()
        .label("used_review_id"),
    ]
    if with_loads:
        hours = _due_hours(user)
        source = source.outerjoin(hours, true())
        columns += [
            _SETTINGS.c.load_balancing,
            _SETTINGS.c.easy_days,
            hours.c.due_hours,
            hours.c.due_cards,
        ]
    return Statement(select(*columns).select_from(source).where(who))


def _due_hours(user: Any) -> Any:
    """How many of the person's cards fall due in each hour (numbered from 1970) from
    `loads_from` to `loads_to`, as two arrays; read only if they balance. PostgreSQL only.

    Hours, not days: where the person's days begin is known only from this very row (their
    timezone), and every zone's day start falls on a whole hour (`srs.answer_loads`).
    """
    due = rs.alias("due_soon")
    hour = cast_as(
        func.floor(extract("epoch", due.c.due) / literal_column("3600")), BigInteger
    ).label("hour")
    per_hour = (
        select(hour, func.count().label("cards"))
        .where(
            _SETTINGS.c.load_balancing.is_(true()),
            due.c.user_id == user,
            due.c.due >= bindparam("loads_from", type_=rs.c.due.type),
            due.c.due < bindparam("loads_to", type_=rs.c.due.type),
        )
        .group_by(hour)
        .correlate(_SETTINGS, _USERS)
        .lateral("per_hour")
    )
    return select(
        func.array_agg(per_hour.c.hour).label("due_hours"),
        func.array_agg(per_hour.c.cards).label("due_cards"),
    ).lateral("loads")


WRITTEN_COLUMNS = (*STATE_COLUMNS, "introduced_at")
LOG_COLUMNS = tuple(c.name for c in rl.c if c.name != "id")
_INSERT_LOG = Statement(insert(rl))
# Bind names must differ from column names in INSERT ... VALUES and UPDATE, hence the prefix.
_STATE_INSERT = insert(rs).values(
    user_id=bindparam("b_user_id"),
    card_id=bindparam("b_card_id"),
    deck_id=bindparam("b_deck_id"),
    version=bindparam("b_new_version"),
    **{c: bindparam(f"b_{c}") for c in WRITTEN_COLUMNS},
)


def _state_update(columns: tuple[str, ...]) -> Any:
    return (
        update(rs)
        .where(
            rs.c.user_id == bindparam("b_user_id"),
            rs.c.card_id == bindparam("b_card_id"),
            rs.c.version == bindparam("b_version"),
        )
        .values(version=bindparam("b_new_version"), **{c: bindparam(f"b_{c}") for c in columns})
    )


# An answer never moves when its card was introduced, so its UPDATE leaves introduced_at out:
# SQLite rewrites the entry of every index whose column an UPDATE assigns, changed or not,
# and that one is a page more to write per answer. Undo restores everything.
_STATE_UPDATE = _state_update(STATE_COLUMNS)
_INSERT_STATE_ROW = Statement(_STATE_INSERT)
_UPDATE_STATE_ROW = Statement(_STATE_UPDATE)
_RESTORE_STATE_ROW = Statement(_state_update(WRITTEN_COLUMNS))
# A forgotten card's first answer: introduced again, and no longer waiting among the new cards.
_RESTART_STATE_ROW = Statement(_state_update((*WRITTEN_COLUMNS, "new_position")))


def _log_after(state_written: Any) -> Statement:
    """One statement: `state_written` (a data-modifying CTE), then the log row if it wrote."""
    values = (cast_as(bindparam(f"l_{n}", type_=rl.c[n].type), rl.c[n].type) for n in LOG_COLUMNS)
    written = state_written.returning(rs.c.card_id).cte("state_written")
    return Statement(
        insert(rl).from_select(LOG_COLUMNS, select(*values).select_from(written)).add_cte(written)
    )


# PostgreSQL only: SQLite has no data-modifying CTEs.
_ANSWER_INSERTING_STATE = _log_after(_STATE_INSERT)
_ANSWER_UPDATING_STATE = _log_after(_STATE_UPDATE)


_READS = {
    (by_token, with_loads): _answer_read(by_token=by_token, with_loads=with_loads)
    for by_token in (False, True)
    for with_loads in (False, True)
}


def answer_read(
    db: Executor,
    caller: int | str,
    card_id: int,
    review_id: str,
    loads: tuple[datetime, datetime] | None = None,
) -> Any:
    """The row `study.prepare_answer` computes from, for a user id or the hash of an API
    token; None: no such caller. With `loads` (a range of whole hours), the due counts of
    the person's cards in that range, by hour (`due_hours`, `due_cards`), if they balance."""
    params: dict[str, Any] = {"card_id": card_id, "review_id": review_id}
    if isinstance(caller, str):
        params["token_hash"] = caller
    else:
        params["user_id"] = caller
    if loads is not None:
        params["loads_from"], params["loads_to"] = loads
    return db.first(_READS[isinstance(caller, str), loads is not None], params)


def log_of_review_id(db: Executor, review_id: str) -> Any:
    """The log row of the answer with this review id, or None."""
    return db.first(_LOG_BY_REVIEW_ID, {"review_id": review_id})


def insert_log(db: Executor, log: dict[str, Any]) -> None:
    db.execute(_INSERT_LOG, log)


def insert_state(db: Executor, params: dict[str, Any]) -> None:
    """A card's first state (`b_`-prefixed parameters: see `_STATE_INSERT`)."""
    db.execute(_INSERT_STATE_ROW, params)


def update_state(
    db: Executor, params: dict[str, Any], *, restore: bool = False, restart: bool = False
) -> bool:
    """Whether the state still had the version read and is now written; `restore` (undo)
    writes introduced_at too; `restart` (a forgotten card's answer) also new_position."""
    if restart:
        return db.execute(_RESTART_STATE_ROW, {**params, "b_new_position": None}) == 1
    return db.execute(_RESTORE_STATE_ROW if restore else _UPDATE_STATE_ROW, params) == 1


def write_state_and_log(db: Executor, params: dict[str, Any], *, first: bool) -> bool:
    """The state (inserted if `first`) and the log (`l_`-prefixed), in one statement: whether
    the state was written. PostgreSQL only."""
    statement = _ANSWER_INSERTING_STATE if first else _ANSWER_UPDATING_STATE
    return db.execute(statement, params) == 1
