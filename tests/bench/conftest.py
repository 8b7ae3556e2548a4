"""Benchmark harness: servers as subprocesses, wrk runs, medians, worker memory.

`make bench` runs this directory; files named `bench_*.py` are collected. Knobs:
BENCH_SECONDS (per run, default 5), BENCH_RUNS (default 3), BENCH_WORKERS (default: what
`flashcards serve` picks), BENCH_LARGE_USERS (default 10000, for the 1,000,000-state run).
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flashcards.cli.serve import default_workers

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BIN = Path(sys.executable).parent
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "0")) or default_workers()
CONNECTIONS = 8


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Module | None:
    # A file named on the command line is collected by pytest itself; don't add it twice.
    if parent.session.isinitpath(file_path):
        return None
    if file_path.suffix == ".py" and file_path.name.startswith("bench_"):
        module: pytest.Module = pytest.Module.from_parent(parent, path=file_path)
        return module
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, argv: list[str], env: dict[str, str], log: Path, probe: str) -> None:
        self.port = free_port()
        argv = [a.replace("{port}", str(self.port)) for a in argv]
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                argv,
                env={**os.environ, **env},
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()[-3000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", probe)
                conn.getresponse().read()
                conn.close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def worker_rss_mib(self) -> list[float]:
        """Resident memory of each worker (children of the gunicorn master)."""
        sizes = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                status = (proc / "status").read_text()
            except OSError:
                continue
            ppid = re.search(r"^PPid:\s+(\d+)", status, re.M)
            rss = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
            if ppid and rss and int(ppid.group(1)) == self.process.pid:
                sizes.append(round(int(rss.group(1)) / 1024, 1))
        return sorted(sizes)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def flashcards_server(database_url: str, log: Path) -> Server:
    return Server(
        [str(BIN / "flashcards"), "serve", "--port", "{port}", "--workers", str(WORKERS)],
        {"FLASHCARDS_DATABASE_URL": database_url, "FLASHCARDS_SECRET_KEY": "bench"},
        log,
        "/api/v1/study/next",
    )


def ceiling_server(db_path: Path, log: Path) -> Server:
    return Server(
        [
            str(BIN / "gunicorn"),
            "--bind",
            "127.0.0.1:{port}",
            "--workers",
            str(WORKERS),
            "--threads",
            "1",
            "--graceful-timeout",
            "10",
            "tests.bench.ceiling:app",
        ],
        {"BENCH_CEILING_DB": str(db_path)},
        log,
        "/item/1",
    )


@dataclass
class WrkResult:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    statuses: dict[int, int]
    socket_errors: str

    @property
    def errors(self) -> int:
        bad = sum(n for code, n in self.statuses.items() if code >= 300)
        return bad + (1 if self.socket_errors else 0)


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def wrk(url: str, mode: str, seconds: int, env: dict[str, str] | None = None) -> WrkResult:
    out = subprocess.run(
        [
            "/usr/bin/wrk",
            "-t2",
            f"-c{CONNECTIONS}",
            f"-d{seconds}s",
            "--latency",
            "--timeout",
            "10s",
            "-s",
            str(HERE / "wrk.lua"),
            url,
        ],
        env={**os.environ, "BENCH_MODE": mode, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s|m)\b", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s|m)\b", out)
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    statuses_line = re.search(r"STATUSES (.*)", out)
    statuses = {}
    if statuses_line:
        for part in statuses_line.group(1).split():
            code, n = part.split("=")
            statuses[int(code)] = int(n)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    assert p50 and p99
    return WrkResult(
        rps,
        _ms(*p50.groups()),
        _ms(*p99.groups()),
        requests,
        statuses,
        socket_errors.group(1) if socket_errors else "",
    )


def median(results: list[WrkResult], attr: str) -> float:
    return float(statistics.median(getattr(r, attr) for r in results))


def report(title: str, lines: list[str]) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n=== {title} === (load average {load} on {os.cpu_count()} cores)")
    for line in lines:
        print("  " + line)
    sys.stdout.flush()


@pytest.fixture(scope="session")
def ceiling(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tests.bench.ceiling import make_db

    tmp = tmp_path_factory.mktemp("ceiling")
    make_db(str(tmp / "ceiling.sqlite3"))
    server = ceiling_server(tmp / "ceiling.sqlite3", tmp / "ceiling.log")
    wrk(server.url, "ceiling", 2)  # warm-up
    yield server
    server.stop()
