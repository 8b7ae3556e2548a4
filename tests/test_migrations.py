from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, delete, func, insert, inspect, select, text
from sqlalchemy.exc import IntegrityError

from flashcards.storage import migrate
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import (
    Card,
    Deck,
    ReviewLog,
    Subscription,
    Team,
    TeamAssignment,
    TeamInvitation,
    TeamMember,
    User,
)
from flashcards.storage.schema import Base

from .conftest import T0
from .factories import answer, card_ids, make_deck, make_user, subscribe


@pytest.fixture
def freshly_migrated(database_url: str) -> Iterator[Engine]:
    """An empty database migrated here by the real migrations, not a clone of the run's one."""
    engine = make_engine(database_url)
    assert inspect(engine).get_table_names() == []
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


def differences_from_the_models(engine: Engine) -> list[Any]:
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


def test_models_and_migrations_agree(freshly_migrated: Engine) -> None:
    assert differences_from_the_models(freshly_migrated) == []


def test_each_test_gets_the_database_the_migrations_make(engine: Engine) -> None:
    """The clone every other test starts from (see conftest) is the whole schema, at head."""
    assert differences_from_the_models(engine) == []
    with engine.connect() as conn:
        assert MigrationContext.configure(conn).get_current_heads() == (
            ScriptDirectory.from_config(migrate.alembic_config(engine)).get_current_head(),
        )
        for table in Base.metadata.sorted_tables:
            assert conn.execute(select(func.count()).select_from(table)).scalar() == 0


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
    # The deck is made with today's models, whose card texts have columns 0004 lacks.
    with transaction(engine) as s:
        deck = make_deck(s, "d", cards=3)
        first, second, never_answered = card_ids(s, deck.id)
        user_id = make_user(s)
        subscribe(s, user_id, deck)
        # Answered before going down: today's answer reads columns and tables 0004 lacks.
        answer(s, user_id, first, "good", now=T0)
        answer(s, user_id, second, "again", now=T0)
        deck_id = deck.id
    migrate.downgrade(engine, "0004")
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


def test_a_team_pace_moves_apart_from_the_persons_own_setting_in_0006(engine: Engine) -> None:
    with transaction(engine) as s:  # today's models, before the schema goes back to 0005
        assigned, other = make_deck(s, "assigned", cards=1).id, make_deck(s, "other", cards=1).id
    migrate.downgrade(engine, "0005")
    with transaction(engine) as s:
        paced, own = make_user(s, "paced@example.com"), make_user(s, "own@example.com")
        team = Team(name="T", created_at=T0)
        s.add(team)
        s.flush()
        s.add(TeamMember(team_id=team.id, user_id=paced, role="member", joined_at=T0))
        s.add(TeamAssignment(team_id=team.id, deck_id=assigned, due_date=T0.date(), created_at=T0))
        # The 0005 table has no paced column, which the model now maps: plain SQL.
        for user_id, deck_id, new_per_day in (
            (paced, assigned, 7),
            (own, assigned, 5),
            (paced, other, 3),
        ):
            s.execute(
                text(
                    "INSERT INTO subscriptions (user_id, deck_id, locale, created_at, new_per_day)"
                    " VALUES (:u, :d, 'en', :t, :n)"
                ),
                {"u": user_id, "d": deck_id, "t": T0, "n": new_per_day},
            )
    migrate.upgrade(engine)

    def values() -> set[tuple[int, int, int | None, int | None]]:
        with transaction(engine) as s:
            rows = s.execute(
                select(
                    Subscription.user_id,
                    Subscription.deck_id,
                    Subscription.new_per_day,
                    Subscription.paced_new_per_day,
                )
            ).all()
            return {(r[0], r[1], r[2], r[3]) for r in rows}

    # Only the member's subscription to the deck her team paces held a pace; the others are
    # people's own settings and stay.
    assert values() == {
        (paced, assigned, None, 7),
        (own, assigned, 5, None),
        (paced, other, 3, None),
    }
    migrate.downgrade(engine, "0005")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT user_id, deck_id, new_per_day FROM subscriptions"))
        assert set(map(tuple, rows)) == {
            (paced, assigned, 7),
            (own, assigned, 5),
            (paced, other, 3),
        }
    migrate.upgrade(engine)


def test_invitations_made_before_0010_keep_working_with_an_empty_label(engine: Engine) -> None:
    migrate.downgrade(engine, "0009")
    with transaction(engine) as s:
        lead = make_user(s, "lead@example.com")
        team = Team(name="T", created_at=T0)
        s.add(team)
        s.flush()
        # The 0009 table has no label column, which the model now maps: plain SQL.
        s.execute(
            text(
                "INSERT INTO team_invitations (team_id, token_hash, created_by, created_at,"
                " expires_at, max_uses, uses) VALUES (:team, :hash, :lead, :t, :t, 5, 2)"
            ),
            {"team": team.id, "hash": "a" * 64, "lead": lead, "t": T0},
        )
    migrate.upgrade(engine)
    with transaction(engine) as s:
        rows = s.execute(
            select(TeamInvitation.token_hash, TeamInvitation.uses, TeamInvitation.label)
        ).all()
        assert [tuple(r) for r in rows] == [("a" * 64, 2, "")]
        # The rebuilt table (SQLite) keeps its constraints: the hash is still unique.
        s.add(
            TeamInvitation(
                team_id=team.id, token_hash="a" * 64, created_at=T0, expires_at=T0, label="x"
            )
        )
        with pytest.raises(IntegrityError):
            s.flush()
        s.rollback()
    migrate.downgrade(engine, "0009")
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(text("SELECT uses FROM team_invitations"))] == [(2,)]
