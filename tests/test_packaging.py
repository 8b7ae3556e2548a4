"""The repository stands on its own: what tests read is inside it, and a wheel built from a
clean copy serves every language and migrates its database with no checkout beside it."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from click.testing import CliRunner

from flashcards.cli import main
from tests.conftest import DECKS, REPO, SEEDS

# What a fresh clone has not: the venv, built or run-time files, compiled catalogs.
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "instance",
    "test-artifacts",
    "*.egg-info",
    "*.mo",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
)


def test_the_seed_quizzes_are_part_of_the_repository() -> None:
    assert SEEDS.resolve().is_relative_to(REPO)
    assert sorted(p.name for p in SEEDS.iterdir()) == [
        "000_2a59eba2e9ee1c24.txt",
        "004_3c77d9b94ee3fd70.txt",
    ]


def test_a_decks_source_folder_is_not_a_deck(database_url: str, cli: CliRunner) -> None:
    assert cli.invoke(main, ["db", "upgrade"]).exit_code == 0
    # The seeds sit in the deck's folder; neither a sync of all decks nor of that one deck
    # takes them (or their folder) for a deck or a locale file.
    synced = cli.invoke(main, ["decks", "sync", str(DECKS)])
    assert synced.exit_code == 0, synced.output
    (line,) = synced.output.splitlines()
    assert line.startswith("eks-model-training: created (+15 added")
    again = cli.invoke(main, ["decks", "sync", str(DECKS / "eks-model-training")])
    assert again.exit_code == 0, again.output
    assert "eks-model-training: unchanged" in again.output
    listed = cli.invoke(main, ["decks", "list"])
    assert "locales: en, es, ko (default en)" in listed.output


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A wheel built from a clean copy of the checkout, installed into a folder of its own;
    yields the wheel and that folder."""
    root = tmp_path_factory.mktemp("wheel")
    clone = root / "clone"
    shutil.copytree(REPO, clone, ignore=NOT_IN_A_CLONE)
    pip = [sys.executable, "-m", "pip", "--quiet"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(root), "."],
        cwd=clone,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = root.glob("flashcards-*.whl")
    target = root / "site"
    installed = subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    shutil.rmtree(clone)  # nothing the installed package reads may come from the copy
    yield wheel, target


@pytest.mark.slow
def test_the_wheel_carries_compiled_catalogs_and_migrations(
    installed_wheel: tuple[Path, Path],
) -> None:
    wheel, _ = installed_wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    for locale in ("es", "ko"):
        assert f"flashcards/translations/{locale}/LC_MESSAGES/messages.mo" in names
    assert "flashcards/migrations/env.py" in names
    shipped = {Path(n).name for n in names if n.startswith("flashcards/migrations/versions/")}
    in_repo = {p.name for p in (REPO / "migrations" / "versions").glob("*.py")}
    assert shipped == in_repo


@pytest.mark.slow
def test_an_installed_wheel_migrates_and_serves_korean(
    installed_wheel: tuple[Path, Path], tmp_path: Path
) -> None:
    _, target = installed_wheel
    elsewhere = tmp_path / "elsewhere"  # no checkout here or above
    elsewhere.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(target),  # ahead of the test venv's editable checkout
        "FLASHCARDS_DATABASE_URL": f"sqlite:///{tmp_path / 'installed.sqlite3'}",
        "FLASHCARDS_SECRET_KEY": "test-secret",
    }
    flashcards = [sys.executable, "-c", "from flashcards.cli import main; main()"]

    def run(*args: str) -> str:
        done = subprocess.run(
            [*flashcards, *args], cwd=elsewhere, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    where = subprocess.run(
        [sys.executable, "-c", "import flashcards; print(flashcards.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(target)
    assert "is at head" in run("db", "upgrade")
    assert "eks-model-training: created (+15 added" in run("decks", "sync", str(DECKS))

    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [*flashcards, "serve", "--port", str(port), "--workers", "1"],
            cwd=elsewhere,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        pages = {locale: get_signin(port, locale, server, log) for locale in ("ko", "es")}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
    for locale, page in pages.items():
        assert f'<html lang="{locale}"' in page
        assert escape(translated("Sign in", locale)) in page


def translated(msgid: str, locale: str) -> str:
    """The checkout's own translation, whatever its wording today."""
    po = REPO / "translations" / locale / "LC_MESSAGES" / "messages.po"
    with po.open("rb") as handle:
        message = read_po(handle, locale=locale)[msgid]
    assert message is not None and message.string
    return str(message.string)


def get_signin(port: int, locale: str, server: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"server exited: {log.read_text()[-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/signin", headers={"Accept-Language": locale})
            response = conn.getresponse()
            body = response.read().decode()
            conn.close()
        except OSError:
            time.sleep(0.1)
            continue
        assert response.status == 200, body
        return body
    raise AssertionError(f"server did not start: {log.read_text()[-3000:]}")
