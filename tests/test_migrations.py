from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, delete, insert, inspect, select
from sqlalchemy.exc import IntegrityError

from flashcards import migrate
from flashcards.db import Base, transaction
from flashcards.models import Card, Deck, ReviewLog, User

from .conftest import T0
from .factories import answer, card_ids, make_deck, make_user


def test_models_and_migrations_agree(engine: Engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_upgrade_builds_every_table_and_downgrade_removes_them(engine: Engine) -> None:
    tables = set(inspect(engine).get_table_names())
    assert set(Base.metadata.tables) <= tables
    migrate.downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    migrate.upgrade(engine)
    assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())


def test_timestamps_come_back_aware_utc(engine: Engine) -> None:
    created = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    with transaction(engine) as s:
        s.add(User(email="a@example.com", password_hash="x", created_at=created))
    with transaction(engine) as s:
        user = s.scalar(select(User))
        assert user is not None
        assert user.created_at == created
        assert user.created_at.tzinfo is not None
        assert user.created_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_review_logs_keep_their_history_and_follow_their_state_from_0005(engine: Engine) -> None:
    migrate.downgrade(engine, "0004")
    with transaction(engine) as s:
        user_id = make_user(s)
        deck = make_deck(s, "d", cards=3)
        first, second, never_answered = card_ids(s, deck.id)
        answer(s, user_id, first, "good", now=T0)
        answer(s, user_id, second, "again", now=T0)
        deck_id = deck.id
    migrate.upgrade(engine)

    def logs() -> list[int]:
        with transaction(engine) as s:
            return sorted(s.scalars(select(ReviewLog.card_id)))

    assert logs() == [first, second]
    references = inspect(engine).get_foreign_keys("review_logs")
    assert [(r["referred_table"], r["constrained_columns"]) for r in references] == [
        ("review_states", ["user_id", "card_id"])
    ]
    # Down and up again with the history in place: the three references come back, and go.
    migrate.downgrade(engine, "0004")
    old_references = inspect(engine).get_foreign_keys("review_logs")
    assert sorted(r["referred_table"] for r in old_references) == ["cards", "decks", "users"]
    assert logs() == [first, second]
    migrate.upgrade(engine)
    # A log needs its card's state...
    with pytest.raises(IntegrityError), transaction(engine) as s:
        log = s.scalars(select(ReviewLog).where(ReviewLog.card_id == first)).one()
        row = {c.name: getattr(log, c.name) for c in ReviewLog.__table__.c if c.name != "id"}
        s.execute(insert(ReviewLog), {**row, "card_id": never_answered, "review_id": "x"})
    assert logs() == [first, second]
    # ...and deleting what the state belongs to still deletes the history.
    with transaction(engine) as s:
        s.execute(delete(Card).where(Card.id == first))
    assert logs() == [second]
    with transaction(engine) as s:
        s.execute(delete(Deck).where(Deck.id == deck_id))
    assert logs() == []
