"""Direct connections kept per worker thread between requests (see `rawsql`)."""

from __future__ import annotations

import threading
import time
import weakref

from sqlalchemy import Engine

from .rawsql import DirectConnection


class KeptConnections:
    """One DirectConnection per thread, kept from one request to the next.

    Checking a connection out of SQLAlchemy's pool and back in costs about as much as one of
    our queries, on every request; a worker thread serves one request at a time, so it can
    keep its own. Between requests a kept connection holds no transaction (`release`). Like
    the pool's, connections are replaced after `recycle` seconds, and after being lost. A
    thread's connection goes back to the pool when the thread ends (servers that start a
    thread per request), and `close_all` (the engine's disposal, the app's end) closes them.
    """

    def __init__(self, engine: Engine, *, recycle: float = 1800) -> None:
        self._engine = engine
        self._recycle = recycle
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: set[DirectConnection] = set()

    def acquire(self) -> DirectConnection:
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and (
            held.connection.closed or time.monotonic() - held.connection.opened > self._recycle
        ):
            self._forget(held.connection)
            del self._local.held
            held = None
        if held is None:
            connection = DirectConnection(self._engine)
            with self._lock:
                self._open.add(connection)
            held = self._local.held = _Held(connection)
            # Thread-local values are dropped when their thread ends: then this runs.
            weakref.finalize(held, self._forget, connection)
        return held.connection

    def release(self, connection: DirectConnection) -> None:
        if not connection.reset():
            self._forget(connection)

    def _forget(self, connection: DirectConnection) -> None:
        with self._lock:
            self._open.discard(connection)
        connection.close()

    def close_all(self) -> None:
        with self._lock:
            connections, self._open = self._open, set()
        for connection in connections:
            # Closed for good: a disposed pool would keep a returned connection open.
            connection.close(discard=True)


class _Held:
    """A thread's kept connection; its finalizer hands the connection back."""

    def __init__(self, connection: DirectConnection) -> None:
        self.connection = connection
