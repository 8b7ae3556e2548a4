"""The answer path's statements, built and compiled once (`rawsql`): constructing a
statement costs more than running it. `study` runs them."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import (
    Table,
    and_,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy import cast as cast_as
from sqlalchemy.sql.elements import BindParameter

from .access import visible_decks
from .models import Card, Deck, ReviewLog, SchedulerSettings, Subscription, User
from .rawsql import Statement
from .state_rows import STATE_COLUMNS, rs

rl = cast(Table, ReviewLog.__table__)
_USER: BindParameter[int] = bindparam("user_id")
_CARD: BindParameter[int] = bindparam("card_id")
LOG_BY_REVIEW_ID = Statement(select(rl).where(rl.c.review_id == bindparam("review_id")))
_SUB = cast(Table, Subscription.__table__)
_SETTINGS = cast(Table, SchedulerSettings.__table__)
_USERS = cast(Table, User.__table__)


# The card, whether its deck is studied and the settings that apply, the state, and whether
# the review id is taken.
CARD_FOR_ANSWER = Statement(
    select(
        Card.id.label("card_id"),
        Card.deck_id,
        Card.retired_at,
        _SETTINGS.c.desired_retention,
        _SETTINGS.c.learning_steps,
        _SETTINGS.c.relearning_steps,
        _SETTINGS.c.maximum_interval,
        _SETTINGS.c.parameters,
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
        # Whether the review id was used already: then `LOG_BY_REVIEW_ID` says how.
        select(rl.c.id)
        .where(rl.c.review_id == bindparam("review_id"))
        .scalar_subquery()
        .label("used_review_id"),
    )
    .select_from(Card.__table__)
    .join(Deck.__table__, Deck.id == Card.deck_id)
    .join(_SETTINGS, _SETTINGS.c.user_id == _USER)
    .join(_USERS, _USERS.c.id == _USER)
    .outerjoin(_SUB, and_(_SUB.c.user_id == _USER, _SUB.c.deck_id == Card.deck_id))
    .outerjoin(rs, and_(rs.c.user_id == _USER, rs.c.card_id == Card.id))
    .where(Card.id == _CARD, visible_decks(_USER))
)


WRITTEN_COLUMNS = (*STATE_COLUMNS, "introduced_at")
LOG_COLUMNS = tuple(c.name for c in rl.c if c.name != "id")
INSERT_LOG = Statement(insert(rl))
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
INSERT_STATE = Statement(_STATE_INSERT)
UPDATE_STATE = Statement(_STATE_UPDATE)
RESTORE_STATE = Statement(_state_update(WRITTEN_COLUMNS))


def _log_after(state_written: Any) -> Statement:
    """One statement: `state_written` (a data-modifying CTE), then the log row if it wrote."""
    values = (cast_as(bindparam(f"l_{n}", type_=rl.c[n].type), rl.c[n].type) for n in LOG_COLUMNS)
    written = state_written.returning(rs.c.card_id).cte("state_written")
    return Statement(
        insert(rl).from_select(LOG_COLUMNS, select(*values).select_from(written)).add_cte(written)
    )


# PostgreSQL only: SQLite has no data-modifying CTEs.
ANSWER_INSERTING_STATE = _log_after(_STATE_INSERT)
ANSWER_UPDATING_STATE = _log_after(_STATE_UPDATE)
