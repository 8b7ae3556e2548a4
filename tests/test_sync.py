"""Deck sync on both databases: idempotent, keeps review state, retires, all or nothing."""

from __future__ import annotations

import shutil
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from flashcards.cli import main
from flashcards.decks.deckfile import load_deck_dir, load_decks
from flashcards.decks.sync import SyncReport, sync_deck
from flashcards.errors import DeckNameTaken
from flashcards.storage.engine import transaction
from flashcards.storage.models import (
    Card,
    CardText,
    Deck,
    DeckText,
    ReviewLog,
    ReviewState,
    Subscription,
    User,
)
from flashcards.storage.schema import Base
from tests.conftest import DECKS, T0

T1 = T0 + timedelta(days=1)
T2 = T0 + timedelta(days=2)
KEY = "tensor-parallelism"


def dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in primary-key order."""
    with engine.connect() as conn:
        return {
            table.name: [
                tuple(row) for row in conn.execute(select(table).order_by(*table.primary_key))
            ]
            for table in Base.metadata.sorted_tables
        }


@pytest.fixture
def deck_dir(tmp_path: Path) -> Path:
    """A copy of the shipped deck that a test may edit."""
    folder = tmp_path / "decks" / "eks-model-training"
    shutil.copytree(DECKS / "eks-model-training", folder)
    return folder


def sync_dir(engine: Engine, folder: Path, now: Any) -> list[SyncReport]:
    with transaction(engine) as session:
        return [sync_deck(session, source, now=now) for source in load_decks(folder)]


def card_id(session: Session, key: str = KEY) -> int:
    found = session.scalar(select(Card.id).where(Card.key == key))
    assert found is not None
    return found


def add_study(engine: Engine, key: str = KEY, locale: str = "ko") -> int:
    """A user who subscribed in `locale`, answered the card once, and has its state."""
    with transaction(engine) as session:
        user = User(email=f"{uuid.uuid4().hex}@example.com", password_hash="x")
        session.add(user)
        session.flush()
        card = session.get_one(Card, card_id(session, key))
        session.add(Subscription(user_id=user.id, deck_id=card.deck_id, locale=locale))
        session.add(
            ReviewState(
                user_id=user.id,
                card_id=card.id,
                deck_id=card.deck_id,
                state=2,
                step=None,
                stability=3.2,
                difficulty=5.1,
                due=T0 + timedelta(days=3),
                last_review=T0,
                reps=1,
                lapses=0,
                introduced_at=T0,
            )
        )
        session.flush()  # the log references the state
        session.add(
            ReviewLog(
                review_id=str(uuid.uuid4()),
                user_id=user.id,
                card_id=card.id,
                deck_id=card.deck_id,
                rating=3,
                reviewed_at=T0,
                duration_ms=1500,
                state=2,
                step=None,
                stability=3.2,
                difficulty=5.1,
                due=T0 + timedelta(days=3),
                reps=1,
                lapses=0,
            )
        )
        return user.id


def study_rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    rows = dump(engine)
    return {name: rows[name] for name in ("review_states", "review_logs", "users")}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def remove_card(folder: Path, key: str) -> None:
    """Drop the card `key` from every locale file of `folder`."""
    for path in folder.glob("*.deck"):
        blocks = path.read_text(encoding="utf-8").split("\n== ")
        kept = [b for b in blocks if not b.startswith(f"{key}\n")]
        assert len(kept) == len(blocks) - 1
        path.write_text("\n== ".join(kept), encoding="utf-8")


def test_first_sync_loads_fifteen_cards_in_three_locales(engine: Engine) -> None:
    (report,) = sync_dir(engine, DECKS, T0)
    assert report.created and len(report.added) == 15 and report.changed
    with Session(engine) as session:
        deck = session.scalars(select(Deck)).one()
        assert (deck.slug, deck.default_locale, deck.owner_user_id) == (
            "eks-model-training",
            "en",
            None,
        )
        assert deck.created_at == T0 == deck.updated_at
        keys = session.scalars(select(Card.key).order_by(Card.position)).all()
        assert keys == load_deck_dir(DECKS / "eks-model-training").keys
        assert len(session.scalars(select(CardText)).all()) == 45
        assert sorted(session.scalars(select(DeckText.locale))) == ["en", "es", "ko"]
        text = session.get_one(CardText, (card_id(session), "es"))
        assert text.question.startswith("¿Qué particiona el paralelismo de tensores")
        assert text.updated_at == T0


def test_second_sync_is_a_no_op(loaded_engine: Engine) -> None:
    before = dump(loaded_engine)
    (report,) = sync_dir(loaded_engine, DECKS, T1)
    assert not report.changed
    assert (report.added, report.updated, report.retired, report.restored) == ([], [], [], [])
    assert dump(loaded_engine) == before


def test_edited_text_is_updated_in_place_and_state_kept(
    loaded_engine: Engine, deck_dir: Path
) -> None:
    add_study(loaded_engine)
    studied = study_rows(loaded_engine)
    with Session(loaded_engine) as session:
        ids = {key: id_ for key, id_ in session.execute(select(Card.key, Card.id))}
    edit(deck_dir / "es.deck", "Las operaciones de tensores", "Las OPERACIONES de tensores")
    edit(deck_dir / "en.deck", "title: EKS model training quiz", "title: EKS training quiz")

    (report,) = sync_dir(loaded_engine, deck_dir, T1)
    assert report.updated == [KEY]
    assert report.deck_changed and not report.added and not report.retired
    assert study_rows(loaded_engine) == studied
    with Session(loaded_engine) as session:
        assert {key: id_ for key, id_ in session.execute(select(Card.key, Card.id))} == ids
        es = session.get_one(CardText, (ids[KEY], "es"))
        assert es.answer.startswith("Las OPERACIONES de tensores")
        assert es.updated_at == T1
        assert session.get_one(CardText, (ids[KEY], "ko")).updated_at == T0
        assert session.get_one(Card, ids[KEY]).updated_at == T1
        other = session.get_one(Card, ids["slurmctld-vs-slurmdbd"])
        assert other.updated_at == T0
        deck = session.scalars(select(Deck)).one()
        assert deck.updated_at == T1
        assert session.get_one(DeckText, (deck.id, "en")).title == "EKS training quiz"

    (again,) = sync_dir(loaded_engine, deck_dir, T2)
    assert not again.changed


def test_removed_card_is_retired_then_restored(loaded_engine: Engine, deck_dir: Path) -> None:
    add_study(loaded_engine)
    studied = study_rows(loaded_engine)
    remove_card(deck_dir, KEY)

    (report,) = sync_dir(loaded_engine, deck_dir, T1)
    assert report.retired == [KEY] and report.changed
    assert study_rows(loaded_engine) == studied
    with Session(loaded_engine) as session:
        card = session.get_one(Card, card_id(session))
        assert card.retired_at == T1
        # The history is shown with the card's texts, so they stay.
        assert len(session.scalars(select(CardText).where(CardText.card_id == card.id)).all()) == 3
        positions = session.scalars(
            select(Card.position).where(Card.retired_at.is_(None)).order_by(Card.position)
        ).all()
        assert positions == list(range(14))

    (still,) = sync_dir(loaded_engine, deck_dir, T2)
    assert not still.changed

    (back,) = sync_dir(loaded_engine, DECKS, T2)
    assert back.restored == [KEY] and not back.added
    assert study_rows(loaded_engine) == studied
    with Session(loaded_engine) as session:
        card = session.get_one(Card, card_id(session))
        assert card.retired_at is None and card.position == 0


def test_reordered_cards_move(loaded_engine: Engine, deck_dir: Path) -> None:
    before = load_deck_dir(deck_dir).keys
    path = deck_dir / "en.deck"
    head, *cards = path.read_text(encoding="utf-8").split("\n== ")
    cards[0], cards[1] = cards[1], cards[0]
    if not cards[0].endswith("\n"):
        cards[0] += "\n"
    path.write_text("\n== ".join([head, *cards]), encoding="utf-8")

    (report,) = sync_dir(loaded_engine, deck_dir, T1)
    assert sorted(report.moved) == sorted(before[:2]) and report.changed
    with Session(loaded_engine) as session:
        keys = session.scalars(select(Card.key).order_by(Card.position)).all()
    assert keys == [before[1], before[0], *before[2:]]


def test_removed_locale_drops_texts_and_moves_subscriptions(
    loaded_engine: Engine, deck_dir: Path
) -> None:
    user_id = add_study(loaded_engine, locale="ko")
    remove_card(deck_dir, "slurmctld-vs-slurmdbd")  # a retired card loses its ko text too
    (deck_dir / "ko.deck").unlink()

    (report,) = sync_dir(loaded_engine, deck_dir, T1)
    assert report.deck_changed and report.changed
    with Session(loaded_engine) as session:
        assert sorted(session.scalars(select(DeckText.locale))) == ["en", "es"]
        assert sorted(set(session.scalars(select(CardText.locale)))) == ["en", "es"]
        subscription = session.scalars(
            select(Subscription).where(Subscription.user_id == user_id)
        ).one()
        assert subscription.locale == "en"
        assert session.scalars(select(ReviewState)).one().user_id == user_id


def test_changed_default_locale_is_a_change(loaded_engine: Engine, deck_dir: Path) -> None:
    (deck_dir / "deck.toml").write_text('default_locale = "es"\n', encoding="utf-8")
    (report,) = sync_dir(loaded_engine, deck_dir, T1)
    assert report.changed and report.deck_changed
    with Session(loaded_engine) as session:
        deck = session.scalars(select(Deck)).one()
        assert (deck.default_locale, deck.updated_at) == ("es", T1)


def test_a_taken_slug_is_a_conflict(loaded_engine: Engine) -> None:
    before = dump(loaded_engine)
    user_id = add_study(loaded_engine)
    after_user = dump(loaded_engine)
    assert after_user != before
    (source,) = load_decks(DECKS)
    with pytest.raises(DeckNameTaken), transaction(loaded_engine) as session:
        sync_deck(session, source, now=T1, owner_user_id=user_id)
    assert dump(loaded_engine) == after_user


def _write_deck(root: Path, slug: str, en: str) -> Path:
    folder = root / slug
    folder.mkdir(parents=True)
    (folder / "deck.toml").write_text('default_locale = "en"\n', encoding="utf-8")
    (folder / "en.deck").write_text(en, encoding="utf-8")
    return folder


@pytest.mark.parametrize("broken_file", ["en.deck", "es.deck", "deck.toml"])
def test_invalid_file_leaves_the_database_unchanged(
    engine: Engine, cli: CliRunner, tmp_path: Path, broken_file: str
) -> None:
    root = tmp_path / "decks"
    shutil.copytree(DECKS, root)
    assert cli.invoke(main, ["decks", "sync", str(root)]).exit_code == 0
    add_study(engine)
    before = dump(engine)

    # A valid, changed deck sorts before the shipped one, whose folder gets a broken file.
    _write_deck(root, "aaa-first", "title: First\n\n== one\nQ?\n--\nA.\n")
    edit(root / "eks-model-training" / "es.deck", "Las operaciones", "Operaciones")
    broken = root / "eks-model-training" / broken_file
    if broken_file == "deck.toml":
        broken.write_text('default_locale = "en"\nstray\n', encoding="utf-8")
        where = f"{broken}:2: invalid TOML"
    else:
        lines = broken.read_text(encoding="utf-8").splitlines()
        number = next(i for i, line in enumerate(lines, 1) if line.startswith("== "))
        lines[number - 1] = "== Not A Key"
        broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
        where = f"{broken}:{number}: invalid card key 'Not A Key'"

    result = cli.invoke(main, ["decks", "sync", str(root)])
    assert result.exit_code != 0
    assert where in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # click's exit, not a crash
    assert dump(engine) == before


def test_non_utf8_file_through_the_cli(engine: Engine, cli: CliRunner, tmp_path: Path) -> None:
    root = tmp_path / "decks"
    folder = _write_deck(root, "latin", "title: Deck\n\n== one\nQ?\n--\nA.\n")
    (folder / "es.deck").write_bytes("title: Año\n".encode("latin-1"))
    before = dump(engine)
    result = cli.invoke(main, ["decks", "sync", str(root)])
    assert result.exit_code == 1
    assert f"{folder / 'es.deck'}:1: not UTF-8 text" in result.output
    assert dump(engine) == before


def test_invalid_deck_after_a_valid_changed_one(
    engine: Engine, cli: CliRunner, tmp_path: Path
) -> None:
    root = tmp_path / "decks"
    shutil.copytree(DECKS, root)
    assert cli.invoke(main, ["decks", "sync", str(root)]).exit_code == 0
    before = dump(engine)
    edit(
        root / "eks-model-training" / "en.deck",
        "The tensor operations and weights",
        "The TENSOR operations and weights",
    )
    remove_card(root / "eks-model-training", "slurmctld-vs-slurmdbd")
    broken = _write_deck(root, "zzz-broken", "title: Z\n\n== one\nQ?\n")

    result = cli.invoke(main, ["decks", "sync", str(root)])
    assert result.exit_code == 1
    assert f"{broken / 'en.deck'}:3: card 'one' needs a '--' line and an answer" in result.output
    assert dump(engine) == before


def test_a_failure_while_writing_rolls_everything_back(
    engine: Engine, cli: CliRunner, tmp_path: Path
) -> None:
    """Parsing passes; the second deck's slug belongs to a user: the first deck's writes go."""
    root = tmp_path / "decks"
    shutil.copytree(DECKS, root)
    assert cli.invoke(main, ["decks", "sync", str(root)]).exit_code == 0
    user_id = add_study(engine)
    with transaction(engine) as session:
        session.add(Deck(slug="zzz-mine", default_locale="en", owner_user_id=user_id))
    before = dump(engine)
    edit(
        root / "eks-model-training" / "en.deck",
        "The tensor operations and weights",
        "The TENSOR operations and weights",
    )
    _write_deck(root, "zzz-mine", "title: Mine\n\n== one\nQ?\n--\nA.\n")

    result = cli.invoke(main, ["decks", "sync", str(root)])
    assert result.exit_code == 1
    assert "Error: the deck name 'zzz-mine' is already taken" in result.output
    assert "Traceback" not in result.output
    assert dump(engine) == before
