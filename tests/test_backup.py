"""Backup and restore: exact round trips, a checksum that catches damage, an empty target only."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fsrs import Rating
from sqlalchemy import JSON, Engine, Text, cast, select, text, update

from flashcards.cli import main
from flashcards.people import accounts, web_sessions
from flashcards.srs import study, subscriptions
from flashcards.storage.backup import BackupError, backup, restore, verify
from flashcards.storage.engine import make_engine, transaction
from flashcards.storage.models import Card, Deck, ReviewLog, ReviewState, SchedulerSettings
from flashcards.storage.schema import Base
from flashcards.teams import invitations, membership
from tests.conftest import PG_URL, T0, Databases, load_shipped_decks, postgres_schema_url

# Per round: (days after T0, ratings for the three studied cards). Long gaps and Easy answers
# put cards in the review state with intervals of days, where fuzz applies.
ROUNDS = [
    (0, (Rating.Easy, Rating.Good, Rating.Easy)),
    (6, (Rating.Good, Rating.Good, Rating.Easy)),
    (30, (Rating.Hard, Rating.Again, Rating.Easy)),
    (95, (Rating.Good, Rating.Good, Rating.Good)),
]


@pytest.fixture
def new_database(databases: Databases, tmp_path: Path) -> Iterator[Callable[[str], Engine]]:
    """Makes further databases at head, with no rows, of the kind named."""
    engines: list[Engine] = []
    schemas: list[str] = []

    def make(kind: str) -> Engine:
        if kind == "sqlite":
            url = databases.sqlite(tmp_path / f"extra-{len(engines)}.sqlite3", migrated=True)
        else:
            assert PG_URL is not None
            schemas.append(databases.postgresql(migrated=True))
            url = postgres_schema_url(PG_URL, schemas[-1])
        eng = make_engine(url)
        engines.append(eng)
        return eng

    yield make
    for eng in engines:
        eng.dispose()
    for schema in schemas:
        databases.drop(schema)


def kind_of(engine: Engine) -> str:
    return engine.dialect.name


def seed_user(engine: Engine) -> tuple[int, list[int]]:
    """A user subscribed to the shipped deck, with custom settings; the cards they will study."""
    load_shipped_decks(engine)
    with transaction(engine) as s:
        user = accounts.create_user(
            s, "ana@example.com", "correct horse", now=T0, timezone="Asia/Seoul"
        )
        deck = s.scalars(select(Deck).order_by(Deck.id)).first()
        assert deck is not None
        subscriptions.subscribe(s, user.id, deck, "es", now=T0)
        accounts.issue_token(s, user.id, now=T0, name="phone")
        s.execute(
            update(SchedulerSettings)
            .where(SchedulerSettings.user_id == user.id)
            .values(desired_retention=0.87, learning_steps=[30, 300, 1800])
        )
        cards = list(s.scalars(select(Card.id).where(Card.deck_id == deck.id).order_by(Card.id)))
        return user.id, cards[:3]


def play(engine: Engine, user_id: int, cards: list[int], rounds: range) -> None:
    for r in rounds:
        days, ratings = ROUNDS[r]
        now = T0 + timedelta(days=days, minutes=r)
        for i, (card_id, rating) in enumerate(zip(cards, ratings, strict=True)):
            review_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"review/{r}/{card_id}"))
            with transaction(engine) as s:
                result = study.answer(
                    s, user_id, card_id, rating, review_id, now=now + timedelta(seconds=i)
                )
                assert result.created


def table_contents(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, typed; JSON columns as the database's own text."""
    contents = {}
    with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            columns = [cast(c, Text) if isinstance(c.type, JSON) else c for c in table.columns]
            pk = list(table.primary_key.columns)
            contents[table.name] = [tuple(r) for r in conn.execute(select(*columns).order_by(*pk))]
    return contents


def study_rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        states = conn.execute(
            select(ReviewState.__table__).order_by(ReviewState.user_id, ReviewState.card_id)
        ).all()
        logs = conn.execute(select(ReviewLog.__table__).order_by(ReviewLog.id)).all()
    return {"states": [tuple(r) for r in states], "logs": [tuple(r) for r in logs]}


def test_answers_continue_identically_after_backup_and_restore(
    engine: Engine, new_database: Callable[[str], Engine], tmp_path: Path
) -> None:
    user_id, cards = seed_user(engine)
    play(engine, user_id, cards, range(4))

    before = new_database(kind_of(engine))
    other_user, other_cards = seed_user(before)
    assert (other_user, other_cards) == (user_id, cards)
    play(before, user_id, cards, range(2))
    file = tmp_path / "mid.backup"
    backup(before, file)

    after = new_database(kind_of(engine))
    restore(after, file)
    assert table_contents(after) == table_contents(before)
    play(after, user_id, cards, range(2, 4))

    straight, resumed = study_rows(engine), study_rows(after)
    assert len(straight["logs"]) == 12
    # Every column, ids included: restore must also move PostgreSQL's sequences past them.
    assert resumed == straight
    # Fuzz applies to review intervals of three days or more: the comparison covered some.
    with engine.connect() as conn:
        fuzzed = conn.execute(
            select(ReviewLog.id).where(
                ReviewLog.state == 2, ReviewLog.stability >= 3, ReviewLog.reviewed_at > T0
            )
        ).all()
    assert fuzzed


def test_round_trip_keeps_every_value_exactly(
    loaded_engine: Engine, new_database: Callable[[str], Engine], tmp_path: Path
) -> None:
    engine = loaded_engine
    user_id, cards = seed_user_studying(engine)
    play(engine, user_id, cards, range(3))
    with transaction(engine) as s:
        # Floats in a JSON list must keep their exact text (other JSON columns hold nulls).
        s.execute(update(SchedulerSettings).values(parameters=[0.2120, 1.2931, 2.3065, 8.2956] * 5))
        # A signed-in browser: not data, and maybe signed out by the time of a restore.
        web_sessions.start(s, user_id, now=T0, lifetime=timedelta(days=31))
        team = membership.create_team(s, user_id, "Platform", now=T0)
        invitations.create_invitation(s, team.id, user_id, now=T0, label='März "β" \\ cohort')
    file = tmp_path / "all.backup"
    counts = backup(engine, file)
    assert counts["review_logs"] == 9 and "web_sessions" not in counts
    header = verify(file)
    with engine.connect() as conn:
        revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert header["alembic_revision"] == revision

    target = new_database(kind_of(engine))
    assert restore(target, file) == counts
    restored, original = table_contents(target), table_contents(engine)
    assert restored.pop("web_sessions") == [] and len(original.pop("web_sessions")) == 1
    assert restored == original
    # The restored database takes new rows: ids continue after the restored ones.
    with transaction(target) as s:
        new_user = accounts.create_user(s, "bo@example.com", "another password", now=T0)
        assert new_user.id > user_id


def seed_user_studying(engine: Engine) -> tuple[int, list[int]]:
    with transaction(engine) as s:
        user = accounts.create_user(s, "ana@example.com", "correct horse", now=T0)
        cards = list(s.scalars(select(Card.id).order_by(Card.id)))[:3]
        for deck in s.scalars(select(Deck).join(Card).where(Card.id.in_(cards)).distinct()):
            subscriptions.subscribe(s, user.id, deck, None, now=T0)
        return user.id, cards


def test_sqlite_backup_moves_to_postgresql(
    tmp_path: Path, new_database: Callable[[str], Engine], database_url: str
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("runs once, with the PostgreSQL parameter")
    source = new_database("sqlite")
    user_id, cards = seed_user(source)
    play(source, user_id, cards, range(4))
    file = tmp_path / "move.backup"
    backup(source, file)
    target = new_database("postgresql")
    restore(target, file)
    assert table_contents(target) == table_contents(source)


def test_damaged_truncated_or_foreign_files_are_refused(
    loaded_engine: Engine, new_database: Callable[[str], Engine], tmp_path: Path
) -> None:
    file = tmp_path / "good.backup"
    backup(loaded_engine, file)
    content = gzip.decompress(file.read_bytes())
    target = new_database(kind_of(loaded_engine))

    damaged = tmp_path / "damaged.backup"
    damaged.write_bytes(gzip.compress(content.replace(b"tensor", b"tenser", 1)))
    with pytest.raises(BackupError, match="checksum mismatch"):
        restore(target, damaged)

    lines = content.splitlines(keepends=True)
    misshapen = tmp_path / "misshapen.backup"
    misshapen.write_bytes(gzip.compress(b"".join([lines[0], b'{"x": 1}\n', *lines[2:]])))
    with pytest.raises(BackupError, match="damaged line"):
        restore(target, misshapen)

    truncated = tmp_path / "truncated.backup"
    truncated.write_bytes(gzip.compress(content[: content.rindex(b"\n", 0, -1) + 1]))
    with pytest.raises(BackupError, match="truncated"):
        restore(target, truncated)

    cut = tmp_path / "cut.backup"
    cut.write_bytes(file.read_bytes()[:-40])
    with pytest.raises(BackupError, match="not a readable backup"):
        restore(target, cut)

    foreign = tmp_path / "foreign.backup"
    foreign.write_bytes(b"PK\x03\x04 not gzip")
    with pytest.raises(BackupError, match="not a readable backup"):
        restore(target, foreign)

    assert all(rows == [] for rows in table_contents(target).values())
    restore(target, file)
    assert table_contents(target) == table_contents(loaded_engine)


def _resigned(tmp: Path, name: str, header: Any, rows: list[Any]) -> Path:
    """A backup as a faulty writer might make one: whatever it holds, correctly checksummed."""
    lines = [json.dumps(item).encode() + b"\n" for item in (header, *rows)]
    trailer = json.dumps({"sha256": hashlib.sha256(b"".join(lines)).hexdigest()}).encode()
    path = tmp / name
    path.write_bytes(gzip.compress(b"".join(lines) + trailer + b"\n"))
    return path


def test_checksummed_but_malformed_backups_are_refused(
    loaded_engine: Engine, new_database: Callable[[str], Engine], tmp_path: Path
) -> None:
    file = tmp_path / "good.backup"
    backup(loaded_engine, file)
    lines = gzip.decompress(file.read_bytes()).splitlines()
    header, rows = json.loads(lines[0]), [json.loads(line) for line in lines[1:-1]]
    target = new_database(kind_of(loaded_engine))
    deck = next(i for i, row in enumerate(rows) if row[0] == "decks")
    bad_row = [*rows[:deck], ["decks", rows[deck][1][:-1]], *rows[deck + 1 :]]
    bad_time = copy.deepcopy(rows)
    columns = next(t["columns"] for t in header["tables"] if t["name"] == "decks")
    bad_time[deck][1][columns.index("created_at")] = "yesterday"
    cases = {
        "no tables": ({k: v for k, v in header.items() if k != "tables"}, [], "header is damaged"),
        "tables not a list": ({**header, "tables": "x"}, [], "header is damaged"),
        "a table without rows": (
            {**header, "tables": [{"name": "users", "columns": ["id"]}]}, [], "header is damaged"
        ),
        "version as text": ({**header, "version": "1"}, rows, "version '1'"),
        "a row too short": (header, bad_row, "does not fit"),
        "an unreadable time": (header, bad_time, "does not fit"),
    }  # fmt: skip
    for name, (head, body, words) in cases.items():
        with pytest.raises(BackupError, match=words):
            restore(target, _resigned(tmp_path, f"{len(name)}.backup", head, body))
        assert all(r == [] for r in table_contents(target).values()), name
    restore(target, _resigned(tmp_path, "resigned.backup", header, rows))  # the helper is fair
    assert table_contents(target) == table_contents(loaded_engine)


def test_restore_refuses_a_database_with_rows(loaded_engine: Engine, tmp_path: Path) -> None:
    file = tmp_path / "x.backup"
    backup(loaded_engine, file)
    before = table_contents(loaded_engine)
    with pytest.raises(BackupError, match="not empty"):
        restore(loaded_engine, file)
    assert table_contents(loaded_engine) == before


def test_cli_backup_and_restore(
    cli: CliRunner,
    loaded_engine: Engine,
    new_database: Callable[[str], Engine],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    file = tmp_path / "cli.backup"
    result = cli.invoke(main, ["backup", str(file)])
    assert result.exit_code == 0, result.output
    assert "Backed up" in result.output
    again = cli.invoke(main, ["backup", str(file)])
    assert again.exit_code != 0 and "--force" in again.output
    refused = cli.invoke(main, ["restore", str(file)])
    assert refused.exit_code == 1
    assert "not empty" in refused.output and "Traceback" not in refused.output
    missing = cli.invoke(main, ["restore", str(tmp_path / "nope.backup")])
    assert missing.exit_code == 1 and "no such file" in missing.output

    target = new_database(kind_of(loaded_engine))
    monkeypatch.setenv("FLASHCARDS_DATABASE_URL", target.url.render_as_string(hide_password=False))
    restored = cli.invoke(main, ["restore", str(file)])
    assert restored.exit_code == 0, restored.output
    assert table_contents(target) == table_contents(loaded_engine)
