"""The shipped nginx example in front of a real `flashcards serve`: slow clients wait in nginx,
not in a worker, and client addresses reach the rate limits through X-Forwarded-For.

Needs Debian's nginx; without it these tests skip, unless FLASHCARDS_REQUIRE_NGINX=1 (CI),
where a missing nginx is a failure.
"""

from __future__ import annotations

import grp
import http.client
import json
import os
import pwd
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select

from flashcards.cli import main
from flashcards.deploy import nginx_config
from flashcards.storage.models import ReviewLog
from tests.test_servers import Server, free_port, seed

pytestmark = pytest.mark.slow
NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
WORKERS = 2
SLOW_CLIENTS = 4  # more than the workers, as in the audit


@pytest.fixture
def nginx_binary() -> str:
    if NGINX is None:
        if os.environ.get("FLASHCARDS_REQUIRE_NGINX") == "1":
            pytest.fail("FLASHCARDS_REQUIRE_NGINX=1 but nginx is not installed")
        pytest.skip("nginx tests skipped: nginx is not installed (apt-get install nginx)")
    return NGINX


@contextmanager
def nginx(binary: str, upstream_port: int, tmp_path: Path) -> Iterator[int]:
    """nginx in the foreground with the shipped site, all its files under `tmp_path`."""
    port = free_port()
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    site = prefix / "flashcards.conf"
    site.write_text(nginx_config(f"127.0.0.1:{upstream_port}", f"127.0.0.1:{port}"))
    # As root, nginx would hand its worker to "nobody", who cannot enter pytest's
    # owner-only temporary folders; as anyone else it keeps its own user.
    user = ""
    if os.geteuid() == 0:
        user = f"user {pwd.getpwuid(0).pw_name} {grp.getgrgid(0).gr_name};"
    conf = prefix / "nginx.conf"
    conf.write_text(
        f"""
        daemon off;
        master_process on;
        worker_processes 1;
        {user}
        pid {prefix}/nginx.pid;
        error_log {prefix}/error.log info;
        events {{ worker_connections 256; }}
        http {{
            access_log {prefix}/access.log;
            client_body_temp_path {prefix}/client_body;
            proxy_temp_path {prefix}/proxy;
            fastcgi_temp_path {prefix}/fastcgi;
            uwsgi_temp_path {prefix}/uwsgi;
            scgi_temp_path {prefix}/scgi;
            include {site};
        }}
        """
    )
    log = (prefix / "stderr.log").open("wb")
    process = subprocess.Popen(
        [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            if process.poll() is not None:
                raise AssertionError(
                    f"nginx exited: {(prefix / 'stderr.log').read_text()}"
                    f"{(prefix / 'error.log').read_text()}"
                )
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError("nginx did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def slow_clients(port: int, count: int, stack: ExitStack) -> None:
    """Clients that send their headers and 1 byte of a 100-byte body, then wait."""
    for _ in range(count):
        sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=5))
        sock.sendall(
            b"POST /api/v1/tokens HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
    time.sleep(0.5)  # long enough for each to be accepted and start waiting on its body


def timed_health(port: int, timeout: float) -> tuple[int, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/api/v1/health")
        response = conn.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    finally:
        conn.close()


def sign_in(port: int, source: str, forwarded_for: str) -> int:
    """A wrong password from the client address `source` (a loopback address of its own)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        body = json.dumps({"email": "ana@example.com", "password": "wrong horse"})
        headers = {"Content-Type": "application/json", "X-Forwarded-For": forwarded_for}
        conn.request("POST", "/api/v1/tokens", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_slow_clients_wait_in_nginx_and_answers_pass_through(
    nginx_binary: str,
    database_url: str,
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, token, cards = seed(engine)
    monkeypatch.setenv("FLASHCARDS_TRUSTED_PROXIES", "1")
    monkeypatch.setenv("FLASHCARDS_SIGNIN_ATTEMPTS", "2")
    server = Server(database_url, tmp_path / "server.log", workers=WORKERS)
    try:
        with nginx(nginx_binary, server.port, tmp_path) as port:
            with ExitStack() as stack:
                slow_clients(port, SLOW_CLIENTS, stack)
                status, took = timed_health(port, timeout=5)
                assert status == 200
                assert took < 1.0, f"health took {took:.2f} s behind {SLOW_CLIENTS} slow clients"

            # A real answer through the proxy.
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            review_id = str(uuid.uuid4())
            conn.request(
                "POST",
                "/api/v1/reviews",
                body=json.dumps({"card_id": cards[0], "rating": 3, "review_id": review_id}),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            response = conn.getresponse()
            assert response.status == 201, response.read()
            conn.close()
            with engine.connect() as db:
                stored = db.execute(select(ReviewLog.review_id)).scalars().all()
            assert stored == [uuid.UUID(review_id)] or stored == [review_id]

            # Sign-in limits count per client: nginx passes the address it sees, and drops a
            # forged X-Forwarded-For, so a client can neither dodge its count nor spend
            # another's.
            assert [sign_in(port, "127.0.0.2", f"198.51.100.{i}") for i in range(3)] == [
                401,
                401,
                429,
            ]
            assert sign_in(port, "127.0.0.3", "127.0.0.2") == 401
    finally:
        server.stop()


def test_without_the_proxy_slow_clients_hold_every_worker(
    database_url: str, engine: Engine, tmp_path: Path
) -> None:
    """Why the proxy is required: the same slow clients, sent straight to the server."""
    if not database_url.startswith("sqlite"):
        pytest.skip("the database plays no part in this")
    server = Server(database_url, tmp_path / "server.log", workers=WORKERS)
    try:
        assert timed_health(server.port, timeout=5)[0] == 200
        with ExitStack() as stack:
            slow_clients(server.port, SLOW_CLIENTS, stack)
            with pytest.raises(TimeoutError):
                timed_health(server.port, timeout=2)
    finally:
        server.stop()


def test_cli_prints_the_shipped_example_filled_in() -> None:
    result = CliRunner().invoke(
        main, ["deploy", "nginx", "--upstream", "127.0.0.1:8000", "--listen", "8080"]
    )
    assert result.exit_code == 0, result.output
    assert "server 127.0.0.1:8000;" in result.output
    assert "listen 8080;" in result.output
    assert "proxy_request_buffering on;" in result.output
    assert "@UPSTREAM@" not in result.output and "@LISTEN@" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["--upstream", "127.0.0.1:8000; include /etc/passwd"],
        ["--listen", "80 default_server; }"],
        ["--server-name", "a{b"],
    ],
)
def test_cli_refuses_addresses_that_would_inject_nginx_syntax(args: list[str]) -> None:
    result = CliRunner().invoke(main, ["deploy", "nginx", *args])
    assert result.exit_code != 0
    assert "must be" in result.output
    assert "Traceback" not in result.output
