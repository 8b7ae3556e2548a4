"""`flashcards db/decks/serve` through click's runner, on the test database."""

from __future__ import annotations

import shutil
from contextlib import ExitStack
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from flashcards.cli import main
from flashcards.cli.serve import worker_app
from flashcards.decks.deckfile import load_deck_dir
from flashcards.decks.quizfile import parse_quiz
from flashcards.http.request_db import CONNECTIONS_PER_THREAD
from flashcards.storage.models import Card, CardText, Deck
from tests.conftest import DECKS, SEEDS

SPANISH = SEEDS / "000_2a59eba2e9ee1c24.txt"
KOREAN = SEEDS / "004_3c77d9b94ee3fd70.txt"
MALFORMED = "Quiz\nSubtitle\n1. Q?\nRespuesta\nA.\n2. Q2?\nA2 without a marker.\n"


def run(cli: CliRunner, *args: str) -> Result:
    return cli.invoke(main, list(args))


def assert_clean_failure(result: Result) -> str:
    """Non-zero exit, one 'Error: ...' line, no traceback; returns that line."""
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_db_upgrade_sync_and_list(database_url: str, cli: CliRunner) -> None:
    upgraded = run(cli, "db", "upgrade")
    assert upgraded.exit_code == 0, upgraded.output
    assert "is at head" in upgraded.output
    assert run(cli, "db", "upgrade").exit_code == 0  # again: nothing to do, no error

    synced = run(cli, "decks", "sync", str(DECKS))
    assert synced.exit_code == 0, synced.output
    assert "eks-model-training: created (+15 added" in synced.output
    again = run(cli, "decks", "sync", str(DECKS))
    assert "eks-model-training: unchanged (+0 added, 0 updated, 0 retired" in again.output

    listed = run(cli, "decks", "list")
    assert listed.exit_code == 0, listed.output
    (line,) = listed.output.splitlines()
    assert line.startswith("eks-model-training\t15 cards\tlocales: en, es, ko (default en)\t")
    assert line.endswith("EKS model training quiz")


def test_list_without_decks(engine: Engine, cli: CliRunner) -> None:
    result = run(cli, "decks", "list")
    assert result.exit_code == 0
    assert "No decks" in result.output


def test_sync_on_an_unmigrated_database_is_a_clean_error(database_url: str, cli: CliRunner) -> None:
    line = assert_clean_failure(run(cli, "decks", "sync", str(DECKS)))
    assert "flashcards db upgrade" in line


def test_sync_of_a_missing_folder(engine: Engine, cli: CliRunner, tmp_path: Path) -> None:
    line = assert_clean_failure(run(cli, "decks", "sync", str(tmp_path / "nope")))
    assert line == f"Error: {tmp_path / 'nope'}: no such folder"


def test_sync_of_a_folder_without_decks(engine: Engine, cli: CliRunner, tmp_path: Path) -> None:
    result = run(cli, "decks", "sync", str(tmp_path))
    assert result.exit_code == 0
    assert result.output == f"No decks under {tmp_path} (a deck is a folder with a deck.toml).\n"


def test_import_both_seeds_into_one_deck_then_sync(
    engine: Engine, cli: CliRunner, tmp_path: Path
) -> None:
    decks = tmp_path / "decks"
    es = run(cli, "decks", "import-quiz", str(SPANISH), "--locale", "es", "--decks-dir", str(decks))
    assert es.exit_code == 0, es.output
    folder = decks / "cuestionario-sobre-entrenamiento-de-modelos-en-eks"
    assert f"Wrote {folder / 'es.deck'} (15 cards)." in es.output
    assert (folder / "deck.toml").read_text() == 'default_locale = "es"\n'

    slug = folder.name
    ko = run(
        cli,
        "decks",
        "import-quiz",
        str(KOREAN),
        "--locale",
        "ko",
        "--deck",
        slug,
        "--decks-dir",
        str(decks),
    )
    assert ko.exit_code == 0, ko.output
    deck = load_deck_dir(folder)
    assert sorted(deck.locales) == ["es", "ko"]
    assert deck.keys == [f"q{n:02d}" for n in range(1, 16)]
    assert [c.key for c in deck.locales["ko"].cards] == deck.keys
    ko_quiz = parse_quiz(KOREAN.read_text(encoding="utf-8"))
    assert deck.locales["ko"].cards[2].question == ko_quiz.items[2].question
    assert deck.locales["ko"].title == "EKS 모델 훈련 퀴즈"

    synced = run(cli, "decks", "sync", str(decks))
    assert synced.exit_code == 0, synced.output
    with Session(engine) as session:
        (db_deck,) = session.scalars(select(Deck)).all()
        assert (db_deck.slug, db_deck.default_locale) == (slug, "es")
        # One card per question, with both languages on it.
        assert len(session.scalars(select(Card)).all()) == 15
        assert len(session.scalars(select(CardText)).all()) == 30


def test_import_reuses_the_keys_of_an_existing_deck(cli: CliRunner, tmp_path: Path) -> None:
    decks = tmp_path / "decks"
    shutil.copytree(DECKS / "eks-model-training", decks / "eks-model-training")
    (decks / "eks-model-training" / "es.deck").unlink()
    args = ["decks", "import-quiz", str(SPANISH), "--locale", "es"]
    result = run(cli, *args, "--deck", "eks-model-training", "--decks-dir", str(decks))
    assert result.exit_code == 0, result.output
    deck = load_deck_dir(decks / "eks-model-training")
    shipped = load_deck_dir(DECKS / "eks-model-training")
    assert [c.key for c in deck.locales["es"].cards] == shipped.keys
    assert deck.default_locale == "en"
    text = (decks / "eks-model-training" / "es.deck").read_text(encoding="utf-8")
    assert text.startswith("# Imported from 000_2a59eba2e9ee1c24.txt.\n")


def test_import_refuses_to_overwrite_without_force(cli: CliRunner, tmp_path: Path) -> None:
    args = ["decks", "import-quiz", str(KOREAN), "--locale", "ko", "--deck", "eks"]
    args += ["--decks-dir", str(tmp_path)]
    assert run(cli, *args).exit_code == 0
    target = tmp_path / "eks" / "ko.deck"
    target.write_text("edited by hand", encoding="utf-8")

    line = assert_clean_failure(run(cli, *args))
    assert line == f"Error: {target} exists; use --force to overwrite it"
    assert target.read_text(encoding="utf-8") == "edited by hand"

    forced = run(cli, *args, "--force")
    assert forced.exit_code == 0, forced.output
    assert target.read_text(encoding="utf-8").startswith("# Imported from")


def test_malformed_quiz_is_a_one_line_error(cli: CliRunner, tmp_path: Path) -> None:
    quiz = tmp_path / "bad.txt"
    quiz.write_text(MALFORMED, encoding="utf-8")
    result = run(
        cli, "decks", "import-quiz", str(quiz), "--locale", "es", "--decks-dir", str(tmp_path)
    )
    line = assert_clean_failure(result)
    assert line.startswith(f"Error: {quiz}:7: expected the answer marker line")
    assert list(tmp_path.iterdir()) == [quiz]  # nothing written


def test_import_errors_for_bad_input(cli: CliRunner, tmp_path: Path) -> None:
    quiz = tmp_path / "quiz.txt"
    quiz.write_bytes("Título\n1. ¿P?\nRespuesta\nR.\n".encode("latin-1"))
    line = assert_clean_failure(
        run(cli, "decks", "import-quiz", str(quiz), "--locale", "es", "--decks-dir", str(tmp_path))
    )
    assert line.startswith(f"Error: {quiz}:1: not UTF-8 text")

    quiz.write_text("Quiz\n1. # not a comment?\nAnswer\nA.\n", encoding="utf-8")
    line = assert_clean_failure(
        run(cli, "decks", "import-quiz", str(quiz), "--locale", "en", "--decks-dir", str(tmp_path))
    )
    assert line.startswith(f"Error: {quiz}:2: ")

    for bad in (["--locale", "Spanish"], ["--locale", "es", "--deck", "../escape"]):
        result = run(cli, "decks", "import-quiz", str(quiz), *bad, "--decks-dir", str(tmp_path))
        assert result.exit_code == 2 and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quiz.txt"]


def test_import_with_a_different_question_count(cli: CliRunner, tmp_path: Path) -> None:
    decks = tmp_path / "decks"
    shutil.copytree(DECKS / "eks-model-training", decks / "eks-model-training")
    quiz = tmp_path / "short.txt"
    quiz.write_text("Quiz\n1. Q?\nAnswer\nA.\n", encoding="utf-8")
    args = ["decks", "import-quiz", str(quiz), "--locale", "fr", "--deck", "eks-model-training"]
    line = assert_clean_failure(run(cli, *args, "--decks-dir", str(decks)))
    assert "the quiz has 1 questions but the deck has 15 cards" in line
    assert not (decks / "eks-model-training" / "fr.deck").exists()


def _commands(group: click.Group, prefix: list[str]) -> list[list[str]]:
    found = [prefix]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _commands(command, [*prefix, name])
        else:
            found.append([*prefix, name])
    return found


@pytest.mark.parametrize(
    "command",
    [" ".join(c) for c in _commands(main, []) if c[:1] in ([], ["db"], ["decks"], ["serve"])],
)
def test_help(command: str) -> None:
    result = CliRunner().invoke(main, [*command.split(), "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ")


def test_every_command_has_help() -> None:
    for command in _commands(main, []):
        result = CliRunner().invoke(main, [*command, "--help"])
        assert result.exit_code == 0, (command, result.output)


def test_serve_help_lists_its_options() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--host", "--port", "--workers"):
        assert option in result.output
    assert CliRunner().invoke(main, ["serve", "--port", "0"]).exit_code == 2


def test_a_served_workers_pool_fits_its_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLASHCARDS_DATABASE_URL", f"sqlite:///{tmp_path / 'worker.sqlite3'}")
    monkeypatch.setenv("FLASHCARDS_SECRET_KEY", "test-secret")
    engine = worker_app(8).extensions["flashcards.engine"]
    try:
        with ExitStack() as held:
            # Each thread may hold its kept connection, its session's and a rate limit's at
            # once: all of them at the same time are handed out without waiting (a pool too
            # small would time out here).
            connections = [
                held.enter_context(engine.connect()) for _ in range(CONNECTIONS_PER_THREAD * 8)
            ]
            assert all(c.exec_driver_sql("SELECT 1").scalar() == 1 for c in connections)
    finally:
        engine.dispose()


def test_serve_reports_a_bad_setting_before_starting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHCARDS_SECRET_KEY", "x")
    monkeypatch.setenv("FLASHCARDS_SIGNUP_OPEN", "maybe")
    result = CliRunner().invoke(main, ["serve", "--port", "5999"])
    line = assert_clean_failure(result)
    assert line == "Error: FLASHCARDS_SIGNUP_OPEN must be true or false, not 'maybe'"
    assert "Serving" not in result.output


def test_a_file_that_cannot_be_written_is_one_line_not_a_traceback(
    cli: CliRunner, engine: Engine, tmp_path: Path
) -> None:
    result = cli.invoke(main, ["backup", str(tmp_path / "no-such-folder" / "x.backup")])
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "no-such-folder" in result.output


def test_a_one_card_deck_is_listed_as_one_card(
    tmp_path: Path, database_url: str, cli: CliRunner
) -> None:
    folder = tmp_path / "decks" / "tiny"
    folder.mkdir(parents=True)
    (folder / "deck.toml").write_text('default_locale = "en"\n')
    (folder / "en.deck").write_text("title: Tiny\n\n== only\nQ?\n--\nA.\n")
    assert run(cli, "db", "upgrade").exit_code == 0
    synced = run(cli, "decks", "sync", str(tmp_path / "decks"))
    assert synced.exit_code == 0, synced.output
    (line,) = run(cli, "decks", "list").output.splitlines()
    assert line.startswith("tiny\t1 card\tlocales: en (default en)\t")
