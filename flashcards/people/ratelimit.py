"""Rate limits (sign-in attempts, sign-ups, API tokens), counted in the database or in Redis.

A key (e.g. email and client address) has `limit` attempts in a fixed window that starts at
its first attempt. An attempt is reserved before the work it limits (the slow password
check, the account made): one atomic increment that either takes a place in the window or
is refused with how long to wait, so that however many requests arrive at once, on however
many workers and instances, at most `limit` of them get past. Where a rule says a success
does not count, the caller gives its place back (`refund`) or forgives the key (`reset`).
Both backends are shared by every worker process and app instance: counts kept in one
process would let each of them grant the full allowance.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol, cast

from sqlalchemy import Engine, Table, case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from ..errors import FlashcardsError
from ..storage.models import RateLimitCount
from ..storage.schema import utcnow

log = logging.getLogger(__name__)


_COUNTS = cast(Table, RateLimitCount.__table__)
# Expired rows dropped per reservation: enough to keep up with any rate of new keys.
_PRUNE_BATCH = 100


class RateLimited(FlashcardsError):
    """No place left in a limit's window; `retry_after` is the seconds until one frees."""

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Backend(Protocol):
    def reserve(self, key: str, limit: int, window: int) -> float | None:
        """Take one of the key's `limit` places in its window (starting the window if none
        is open): None when taken, else the seconds until the window ends (nothing taken)."""

    def refund(self, key: str) -> None:
        """Give one place back to the key's open window (none below zero)."""

    def reset(self, key: str) -> None:
        """Forget the key: its next attempt opens a new window."""


class DatabaseBackend:
    """Counts in the service's own database (`rate_limits`), one short transaction each."""

    def __init__(
        self, reader: Engine, writer: Engine, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self._reader = reader  # kept for callers that built it with two engines
        self._writer = writer  # on SQLite, the engine whose transactions take the write lock
        self._clock = clock

    def attempts(self, key: str) -> tuple[int, float]:
        """Attempts counted for the key and seconds until its window ends ((0, 0) if none)."""
        now = self._clock()
        with self._reader.connect() as conn:
            row = conn.execute(
                select(_COUNTS.c.failures, _COUNTS.c.window_ends).where(_COUNTS.c.key == key)
            ).first()
        if row is None or row.window_ends <= now:
            return 0, 0.0
        return int(row.failures), (row.window_ends - now).total_seconds()

    def reserve(self, key: str, limit: int, window: int) -> float | None:
        now = self._clock()
        ends = now + timedelta(seconds=window)
        insert = sqlite_insert if self._writer.dialect.name == "sqlite" else postgresql_insert
        expired = _COUNTS.c.window_ends <= now
        upsert = (
            insert(_COUNTS)
            .values(key=key, failures=1, window_ends=ends)
            .on_conflict_do_update(
                index_elements=[_COUNTS.c.key],
                # An expired window starts again at this attempt; a live one counts it.
                set_={
                    "failures": case((expired, 1), else_=_COUNTS.c.failures + 1),
                    "window_ends": case((expired, ends), else_=_COUNTS.c.window_ends),
                },
            )
            .returning(_COUNTS.c.failures, _COUNTS.c.window_ends)
        )
        # Someone spraying attempts at many keys leaves rows that no one resets. SKIP LOCKED
        # (PostgreSQL; SQLite has one writer at a time anyway): the prune never waits for
        # another reservation, so two of them cannot deadlock on each other's rows.
        stale = (
            select(_COUNTS.c.key)
            .where(expired, _COUNTS.c.key != key)
            .limit(_PRUNE_BATCH)
            .with_for_update(skip_locked=True)
        )
        with self._writer.begin() as conn:
            # The increment locks the key's row (PostgreSQL) or the database (SQLite) until
            # the commit: concurrent reservations of one key queue here, and each sees the
            # count the ones before it left.
            count, window_ends = conn.execute(upsert).one()
            refused = count > limit
            if refused:
                # Undone before anyone can see it: a refusal takes no place.
                conn.execute(
                    update(_COUNTS)
                    .where(_COUNTS.c.key == key)
                    .values(failures=_COUNTS.c.failures - 1)
                )
            conn.execute(delete(_COUNTS).where(_COUNTS.c.key.in_(stale)))
        return (window_ends - now).total_seconds() if refused else None

    def refund(self, key: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(
                update(_COUNTS)
                .where(
                    _COUNTS.c.key == key,
                    _COUNTS.c.failures > 0,
                    _COUNTS.c.window_ends > self._clock(),
                )
                .values(failures=_COUNTS.c.failures - 1)
            )

    def reset(self, key: str) -> None:
        with self._writer.begin() as conn:
            conn.execute(delete(_COUNTS).where(_COUNTS.c.key == key))


# One script, so that the increment, the window's expiry and the check are one step for
# Redis: no other client's command runs in between. A key left without an expiry (never by
# this script, but by hand) gets the window, so it cannot block forever.
_RESERVE = """
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
if count > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return ttl
end
return -1
"""
# Only an open window is refunded: DECR on a key gone would make one without an expiry.
_REFUND = """
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 and redis.call('PTTL', KEYS[1]) > 0 then
  redis.call('DECR', KEYS[1])
end
return 0
"""


class RedisBackend:
    """Counts in Redis, shared by every instance; the window is the key's expiry."""

    def __init__(self, client: Any, prefix: str = "flashcards:ratelimit:") -> None:
        self._redis = client
        self._prefix = prefix
        self._reserve = client.register_script(_RESERVE)
        self._refund = client.register_script(_REFUND)

    @classmethod
    def from_url(cls, url: str) -> RedisBackend:
        import redis

        return cls(redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2))

    def close(self) -> None:
        self._redis.close()

    def attempts(self, key: str) -> tuple[int, float]:
        """Attempts counted for the key and seconds until its window ends ((0, 0) if none)."""
        pipe = self._redis.pipeline()
        pipe.get(self._prefix + key)
        pipe.pttl(self._prefix + key)
        count, pttl = pipe.execute()
        if count is None or pttl is None or pttl < 0:
            return 0, 0.0
        return int(count), pttl / 1000

    def reserve(self, key: str, limit: int, window: int) -> float | None:
        ttl = int(self._reserve(keys=[self._prefix + key], args=[limit, window * 1000]))
        return None if ttl < 0 else ttl / 1000

    def refund(self, key: str) -> None:
        self._refund(keys=[self._prefix + key])

    def reset(self, key: str) -> None:
        self._redis.delete(self._prefix + key)


class Limiter:
    def __init__(
        self,
        backend: Backend,
        *,
        limit: int,
        window: int,
        detail: str = "too many failed attempts; try again later",
    ) -> None:
        self.backend = backend
        self.limit = limit
        self.window = window
        self.detail = detail

    @staticmethod
    def key(*parts: str) -> str:
        # Hashed: keys built from client input have a fixed size in memory and in Redis.
        joined = "\x00".join(parts).encode("utf-8", "surrogatepass")
        return hashlib.sha256(joined).hexdigest()

    def reserve(self, key: str) -> None:
        """Count an attempt before making it; RateLimited (429, with the seconds to wait)
        when the key's window has no place left, and then nothing is counted."""
        try:
            wait = self.backend.reserve(key, self.limit, self.window)
        except Exception:
            # Redis down: letting sign-in work beats locking everyone out; the KDF still
            # makes guessing slow.
            log.exception("rate limit backend unavailable; not limiting")
            return
        if wait is not None:
            raise RateLimited(self.detail, retry_after=max(1, math.ceil(wait)))

    def refund(self, key: str) -> None:
        """The attempt reserved did not count after all (a rule's success)."""
        try:
            self.backend.refund(key)
        except Exception:
            log.exception("rate limit backend unavailable; attempt not refunded")

    def reset(self, key: str) -> None:
        """Forgive every attempt of the key (a successful sign-in)."""
        try:
            self.backend.reset(key)
        except Exception:
            log.exception("rate limit backend unavailable; key not reset")
