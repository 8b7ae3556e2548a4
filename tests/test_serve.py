"""`flashcards serve` as a deployment runs it: what its responses say about the server, and
the warnings it prints for settings that leave a deployment weaker than it looks."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from flashcards.config import is_loopback, startup_warnings
from tests.conftest import REPO
from tests.test_servers import FLASHCARDS, Server, free_port

STRONG_KEY = "k" * 32


@pytest.mark.slow
def test_responses_do_not_name_the_server_software(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the database plays no part in this")
    server = Server(database_url, tmp_path / "server.log", workers=1)
    try:
        for method, path in [
            ("GET", "/api/v1/health"),
            ("GET", "/signin"),
            ("GET", "/no-such-page"),
            ("POST", "/api/v1/tokens"),
        ]:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request(method, path)
            response = conn.getresponse()
            response.read()
            conn.close()
            headers = response.getheaders()
            servers = [value for name, value in headers if name.lower() == "server"]
            assert servers == ["flashcards"], (path, headers)
            everything = " ".join(f"{name}: {value}" for name, value in headers).lower()
            assert "gunicorn" not in everything and "werkzeug" not in everything
    finally:
        server.stop()


@pytest.mark.slow
def test_serve_warns_of_a_short_key_and_plain_cookies_on_an_open_address(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the database plays no part in this")
    port = free_port()
    env = {
        **os.environ,
        "FLASHCARDS_DATABASE_URL": database_url,
        "FLASHCARDS_SECRET_KEY": "short",
    }
    env.pop("FLASHCARDS_SECURE_COOKIES", None)
    process = subprocess.Popen(
        [FLASHCARDS, "serve", "--host", "0.0.0.0", "--port", str(port), "--workers", "1"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        # The warnings come before gunicorn starts; once it answers, they have been printed.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and process.poll() is None:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/api/v1/health")
                conn.getresponse().read()
                conn.close()
                break
            except OSError:
                time.sleep(0.1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    stderr = err.decode()
    lines = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    assert len(lines) == 2, stderr
    assert "FLASHCARDS_SECRET_KEY is 5 bytes; use at least 32" in lines[0]
    assert "0.0.0.0" in lines[1] and "FLASHCARDS_SECURE_COOKIES" in lines[1]
    assert b"Serving flashcards" in out  # a warning, not a refusal


def test_no_warnings_for_a_long_key_or_a_loopback_bind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLASHCARDS_SECRET_KEY", STRONG_KEY)
    assert startup_warnings({"SESSION_COOKIE_SECURE": False}, "127.0.0.1") == []
    assert startup_warnings({"SESSION_COOKIE_SECURE": True}, "0.0.0.0") == []
    monkeypatch.setenv("FLASHCARDS_SECRET_KEY", STRONG_KEY[:-1])
    assert len(startup_warnings({"SESSION_COOKIE_SECURE": True}, "::1")) == 1
    # A key generated into the instance folder is long enough; nothing to say about it.
    monkeypatch.delenv("FLASHCARDS_SECRET_KEY")
    assert startup_warnings({"SESSION_COOKIE_SECURE": True}, "localhost") == []


def test_more_connections_than_postgresql_allows_by_default_are_warned_of(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FLASHCARDS_SECRET_KEY", STRONG_KEY)
    config = {"SESSION_COOKIE_SECURE": True, "DATABASE_URL": "postgresql+psycopg://db/cards"}
    assert startup_warnings(config, "127.0.0.1", connections=27) == []
    (warning,) = startup_warnings(config, "127.0.0.1", connections=9 * 8 * 3)
    assert "216 connections" in warning
    # SQLite has no connection limit to speak of.
    config["DATABASE_URL"] = "sqlite:///cards.sqlite3"
    assert startup_warnings(config, "127.0.0.1", connections=9 * 8 * 3) == []


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.0.2.10", False),
        ("flashcards.example.org", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
