from __future__ import annotations

from datetime import UTC, datetime

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect, select

from flashcards import migrate
from flashcards.db import Base, transaction
from flashcards.models import User


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
