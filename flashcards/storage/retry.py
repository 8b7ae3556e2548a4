"""The one retry policy: work that lost a race runs again after a short random wait."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from ..errors import TooMuchContention

T = TypeVar("T")
logger = logging.getLogger(__name__)


class LostRace(Exception):
    """Another transaction changed what this one read, and won: run the work again."""


# PostgreSQL's "try the transaction again" SQLSTATEs: serialization_failure, deadlock_detected.
PG_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
# Attempts and backoff between them. Full jitter (a random wait up to a ceiling that doubles)
# spreads the losers of one race apart, so that they do not all collide again on the next
# attempt, as immediate retries did: eight parallel answers to one card ran out of five.
RETRY_ATTEMPTS = 8
RETRY_FIRST_DELAY = 0.002  # seconds: a hot-path answer takes about a millisecond
RETRY_MAX_DELAY = 0.064  # all the waits together stay well under a second


def is_lost_race(exc: BaseException) -> bool:
    """Whether `exc` means another transaction won a race and the work is worth running
    again: our own version checks, and the database's serialization and lock conflicts."""
    if isinstance(exc, LostRace):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if getattr(exc.orig, "sqlstate", None) in PG_RETRY_SQLSTATES:
        return True
    # A WAL snapshot that another writer outdated fails at once, without the busy handler's
    # wait. A plain SQLITE_BUSY has already waited the busy timeout: not retried here, it is
    # the "database unavailable" 503 (`database_unavailable`).
    return getattr(exc.orig, "sqlite_errorname", None) == "SQLITE_BUSY_SNAPSHOT"


def backoff(attempt: int, rng: Callable[[], float] = random.random) -> float:
    """The wait in seconds after failed attempt number `attempt` (from 1): a random fraction
    of a ceiling that doubles from RETRY_FIRST_DELAY up to RETRY_MAX_DELAY."""
    ceiling: float = min(RETRY_MAX_DELAY, RETRY_FIRST_DELAY * 2.0 ** (attempt - 1))
    return rng() * ceiling


def with_retries(
    work: Callable[[], T],
    *,
    retry_on: tuple[type[BaseException], ...] = (),
    attempts: int = RETRY_ATTEMPTS,
    rollback: Callable[[], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """The one retry policy: run `work`; when it loses a race (`is_lost_race`, or one of the
    caller's `retry_on`, such as the IntegrityError of a racing insert), `rollback`, wait
    `backoff` and run it again, at most `attempts` times in all. Any other error passes at
    once. Gives up with TooMuchContention (a 503 with Retry-After), never the last conflict.

    The uncontended path costs one call and a `try`: no statement, no clock read.
    """
    attempt = 1
    while True:
        try:
            return work()
        except Exception as exc:
            if not (isinstance(exc, retry_on) or is_lost_race(exc)):
                raise
            if rollback is not None:
                rollback()
            if attempt >= attempts:
                logger.warning("gave up after %d attempts, each lost a race: %s", attempts, exc)
                raise TooMuchContention() from exc
            sleep(backoff(attempt))
            attempt += 1


def retrying(
    session: Session,
    work: Callable[[], T],
    *,
    retry_on: tuple[type[BaseException], ...] = (),
    attempts: int = RETRY_ATTEMPTS,
) -> T:
    """Run `work` and commit, under `with_retries`: a lost race rolls back and runs it again."""

    def committed() -> T:
        result = work()
        session.commit()
        return result

    return with_retries(committed, retry_on=retry_on, attempts=attempts, rollback=session.rollback)
