"""Failure-counting rate limits (sign-in attempts), in process or shared through Redis.

A key (e.g. email and client address) may fail `limit` times in a fixed window that starts at
its first failure; after that `check` reports how long to wait. Success resets the key. With
several app instances, Redis makes them share the counts.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from .errors import TooManyRequests

log = logging.getLogger(__name__)


class RateLimited(TooManyRequests):
    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Backend(Protocol):
    def failures(self, key: str) -> tuple[int, float]:
        """Failures counted for the key and seconds until its window ends (0 if none)."""

    def add_failure(self, key: str, window: int) -> None: ...

    def reset(self, key: str) -> None: ...


class MemoryBackend:
    """One process's counts; enough for a single instance, lost on restart."""

    # Bounds memory when someone sprays attempts at many different keys.
    MAX_KEYS = 100_000

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, float]] = {}  # key -> (failures, window end)

    def failures(self, key: str) -> tuple[int, float]:
        now = self._clock()
        with self._lock:
            count, end = self._counts.get(key, (0, 0.0))
            if end <= now:
                self._counts.pop(key, None)
                return 0, 0.0
            return count, end - now

    def add_failure(self, key: str, window: int) -> None:
        now = self._clock()
        with self._lock:
            count, end = self._counts.get(key, (0, 0.0))
            if end <= now:
                count, end = 0, now + window
            self._counts[key] = (count + 1, end)
            if len(self._counts) > self.MAX_KEYS:
                self._prune(now)

    def reset(self, key: str) -> None:
        with self._lock:
            self._counts.pop(key, None)

    def _prune(self, now: float) -> None:
        for k in [k for k, (_, end) in self._counts.items() if end <= now]:
            del self._counts[k]
        # Still full of live keys: drop the oldest windows rather than grow without bound.
        while len(self._counts) > self.MAX_KEYS:
            del self._counts[next(iter(self._counts))]


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


def make_limiter(redis_url: str | None, *, limit: int, window: int) -> Limiter:
    backend: Backend = RedisBackend.from_url(redis_url) if redis_url else MemoryBackend()
    return Limiter(backend, limit=limit, window=window)
