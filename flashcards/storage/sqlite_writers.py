"""SQLite's writers: a first-come-first-served queue for the write lock, and the checkpointer
that copies the WAL into the database file off every request's path."""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
from typing import Any

from sqlalchemy.engine import URL, make_url

# SQLite checkpoints (see leave_writer_gate): ours every this many write transactions of a
# process, SQLite's own only when the WAL reaches this many pages. Small and often: while a
# checkpoint syncs the database file, answers wait, longer the more it copies (fewer
# checkpoints raised the answers' p99 latency; many more cost throughput).
CHECKPOINT_EVERY = 20
SQLITE_AUTOCHECKPOINT_PAGES = 10_000
logger = logging.getLogger(__name__)


def writer_gate_path(url: str | URL) -> str | None:
    """The file SQLite writers queue on (see `enter_writer_gate`); None for other databases."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return f"{parsed.database}.writers"


def enter_writer_gate(info: dict[str, Any], path: str) -> None:
    """Queue for SQLite's write lock on a file lock of our own.

    SQLite's busy handler polls with sleeps of up to 100 ms, so writers waiting on it wake
    late and in no order; waiters on a file lock wake as soon as it is free, first come
    first served. The kernel drops the lock of a killed process.
    """
    fd = info.get("gate_fd")
    if fd is None:
        fd = info["gate_fd"] = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    info["gate_held"] = True
    info["gate_path"] = path


def leave_writer_gate(info: dict[str, Any]) -> None:
    """Let the next writer in, once the transaction has ended; now and then, checkpoint.

    SQLite's automatic checkpoint runs inside COMMIT, while the gate is still held, so every
    writer of every process waited for its fsync, and the answer that triggered it took that
    much longer. Every `CHECKPOINT_EVERY` write transactions of a process, a thread of its
    own checkpoints instead; SQLite's own is kept, set far higher, as a backstop. Wake-ups
    that come while a checkpoint runs make one more, so a slow disk gets fewer, larger ones.
    """
    if not info.pop("gate_held", False):
        return
    fcntl.flock(info["gate_fd"], fcntl.LOCK_UN)
    checkpointer_for(info["gate_path"]).count_write()


def close_writer_gate(info: dict[str, Any]) -> None:
    """Leave the gate and close its file, for a connection that is being closed."""
    leave_writer_gate(info)
    fd = info.pop("gate_fd", None)
    if fd is not None:
        os.close(fd)


class Checkpointer:
    """Checkpoints one SQLite database's WAL on a daemon thread, off every request's path."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.writes = 0
        self.done = 0  # checkpoints run, for tests and curious operators
        self.wake = threading.Event()
        self.pid: int | None = None

    def count_write(self) -> None:
        self.writes += 1
        if self.writes < CHECKPOINT_EVERY:
            return
        self.writes = 0
        if self.pid != os.getpid():  # first use, or a forked worker: threads do not survive
            self.pid = os.getpid()
            threading.Thread(target=self.run, name="sqlite-checkpoint", daemon=True).start()
        self.wake.set()

    def run(self) -> None:
        connection = sqlite3.connect(self.database, isolation_level=None, timeout=30)
        while True:
            self.wake.wait()
            self.wake.clear()
            try:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error as exc:  # the backstop will checkpoint; say so and go on
                logger.warning("WAL checkpoint of %s failed: %s", self.database, exc)
            self.done += 1


# One per database file of this process, by the path of its writer gate.
checkpointers: dict[str, Checkpointer] = {}


def checkpointer_for(gate_path: str) -> Checkpointer:
    checkpointer = checkpointers.get(gate_path)
    if checkpointer is None:
        checkpointer = checkpointers[gate_path] = Checkpointer(gate_path.removesuffix(".writers"))
    return checkpointer
