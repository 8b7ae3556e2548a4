"""Failure-counting rate limits (sign-in attempts), counted in the database or in Redis.

A key (e.g. email and client address) may fail `limit` times in a fixed window that starts at
its first failure; after that `check` reports how long to wait. Success resets the key. Both
backends are shared by every worker process and app instance: counts kept in one process
would let each of them grant the full allowance.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

from sqlalchemy import Engine, Table, case, delete, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from .db import utcnow
from .errors import TooManyRequests
from .models import RateLimitCount

log = logging.getLogger(__name__)


_COUNTS = cast(Table, RateLimitCount.__table__)


class RateLimited(TooManyRequests):
    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Backend(Protocol):
    def failures(self, key: str) -> tuple[int, float]:
        """Failures counted for the key and seconds until its window ends (0 if none)."""

    def add_failure(self, key: str, window: int) -> None: ...

    def reset(self, key: str) -> None: ...


class DatabaseBackend:
    """Counts in the service's own database (`rate_limits`), one short transaction each."""

    def __init__(
        self, reader: Engine, writer: Engine, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self._reader = reader
        self._writer = writer  # on SQLite, the engine whose transactions take the write lock
        self._clock = clock

    def failures(self, key: str) -> tuple[int, float]:
        now = self._clock()
        with self._reader.connect() as conn:
            row = conn.execute(
                select(_COUNTS.c.failures, _COUNTS.c.window_ends).where(_COUNTS.c.key == key)
            ).first()
        if row is None or row.window_ends <= now:
            return 0, 0.0
        return int(row.failures), (row.window_ends - now).total_seconds()

    def add_failure(self, key: str, window: int) -> None:
        now = self._clock()
        ends = now + timedelta(seconds=window)
        insert = sqlite_insert if self._writer.dialect.name == "sqlite" else postgresql_insert
        expired = _COUNTS.c.window_ends <= now
        upsert = (
            insert(_COUNTS)
            .values(key=key, failures=1, window_ends=ends)
            .on_conflict_do_update(
                index_elements=[_COUNTS.c.key],
                # An expired window starts again at this failure; a live one counts it.
                set_={
                    "failures": case((expired, 1), else_=_COUNTS.c.failures + 1),
                    "window_ends": case((expired, ends), else_=_COUNTS.c.window_ends),
                },
            )
        )
        with self._writer.begin() as conn:
            # Someone spraying attempts at many keys leaves rows that no one resets.
            conn.execute(delete(_COUNTS).where(_COUNTS.c.window_ends <= now, _COUNTS.c.key != key))
            conn.execute(upsert)

    def reset(self, key: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(delete(_COUNTS).where(_COUNTS.c.key == key))


class RedisBackend:
    """Counts in Redis, shared by every instance; the window is the key's expiry."""

    def __init__(self, client: Any, prefix: str = "flashcards:ratelimit:") -> None:
        self._redis = client
        self._prefix = prefix

    @classmethod
    def from_url(cls, url: str) -> RedisBackend:
        import redis

        return cls(redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2))

    def close(self) -> None:
        self._redis.close()

    def failures(self, key: str) -> tuple[int, float]:
        pipe = self._redis.pipeline()
        pipe.get(self._prefix + key)
        pipe.pttl(self._prefix + key)
        count, pttl = pipe.execute()
        if count is None or pttl is None or pttl < 0:
            return 0, 0.0
        return int(count), pttl / 1000

    def add_failure(self, key: str, window: int) -> None:
        # SET NX starts the window only on the first failure; INCR keeps the expiry.
        pipe = self._redis.pipeline()
        pipe.set(self._prefix + key, 0, ex=window, nx=True)
        pipe.incr(self._prefix + key)
        pipe.execute()

    def reset(self, key: str) -> None:
        self._redis.delete(self._prefix + key)


class Limiter:
    def __init__(self, backend: Backend, *, limit: int, window: int) -> None:
        self.backend = backend
        self.limit = limit
        self.window = window

    @staticmethod
    def key(*parts: str) -> str:
        # Hashed: keys built from client input have a fixed size in memory and in Redis.
        joined = "\x00".join(parts).encode("utf-8", "surrogatepass")
        return hashlib.sha256(joined).hexdigest()

    def check(self, key: str) -> None:
        """Raise RateLimited (429, with seconds to wait) when the key used up its failures."""
        try:
            count, remaining = self.backend.failures(key)
        except Exception:
            # Redis down: letting sign-in work beats locking everyone out; the KDF still
            # makes guessing slow.
            log.exception("rate limit backend unavailable; not limiting")
            return
        if count >= self.limit:
            raise RateLimited(
                "too many failed attempts; try again later",
                retry_after=max(1, math.ceil(remaining)),
            )

    def failed(self, key: str) -> None:
        try:
            self.backend.add_failure(key, self.window)
        except Exception:
            log.exception("rate limit backend unavailable; failure not counted")

    def succeeded(self, key: str) -> None:
        try:
            self.backend.reset(key)
        except Exception:
            log.exception("rate limit backend unavailable; key not reset")
