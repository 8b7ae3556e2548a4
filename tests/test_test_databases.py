"""The PostgreSQL fixture's reuse of schemas: a schema handed to the next test holds exactly
what a freshly migrated one holds, and one a test changed is never handed on."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from flashcards.storage.engine import make_engine
from flashcards.storage.models import User

from .conftest import PG_URL, Databases, postgres_schema_url
from .factories import make_user


@pytest.fixture
def postgres(databases: Databases) -> Databases:
    if not PG_URL:
        pytest.skip("PostgreSQL run skipped: set FLASHCARDS_TEST_DATABASE_URL to enable it")
    return databases


def rows_and_next_id(url: str) -> tuple[int, int, str]:
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            users = session.scalar(select(func.count()).select_from(User)) or 0
            new_id = make_user(session)
            version = session.connection().exec_driver_sql(
                "SELECT version_num FROM alembic_version"
            )
            return users, new_id, version.scalar_one()
    finally:
        engine.dispose()


def test_a_released_schema_comes_back_empty_with_head_rows_and_sequences(
    postgres: Databases,
) -> None:
    assert PG_URL is not None
    while postgres.emptied:  # the pool, so that the schema asked for next is a new one
        postgres.drop(postgres.emptied.pop())
    schema = postgres.postgresql(migrated=True)
    url = postgres_schema_url(PG_URL, schema)
    fresh = rows_and_next_id(url)
    engine = make_engine(url)
    with Session(engine) as session:
        for _ in range(3):
            make_user(session)
        session.commit()
    engine.dispose()

    postgres.release(schema)
    assert postgres.postgresql(migrated=True) == schema
    # Same rows as a fresh schema: no users, head's alembic version, and ids start over.
    assert rows_and_next_id(url) == fresh
    postgres.drop(schema)


def test_a_schema_whose_tables_changed_is_dropped(postgres: Databases) -> None:
    assert PG_URL is not None
    while postgres.emptied:  # the pool, so that the schema asked for next is a new one
        postgres.drop(postgres.emptied.pop())
    schema = postgres.postgresql(migrated=True)
    with postgres.postgres_admin().begin() as conn:
        conn.exec_driver_sql(f'ALTER TABLE "{schema}".users ADD COLUMN extra integer')
    postgres.release(schema)
    assert postgres.emptied == []
    with postgres.postgres_admin().connect() as conn:
        left = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_namespace WHERE nspname = %(s)s", {"s": schema}
        )
        assert left.scalar_one() == 0
