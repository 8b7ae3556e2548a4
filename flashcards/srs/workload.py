"""A person's `load_balance.Workload`, read from the database: their settings and due counts.

The due counts are read only when an answer's interval is balanced (a review interval of 3 to
90 days), and each day once per request: a preview's three balanced outcomes share the read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from ..hot_sql.due_counts import due_counts
from ..hot_sql.rawsql import Executor, Statement, executor
from ..storage.models import SchedulerSettings
from .days import Clock, day_start, study_date
from .load_balance import NORMAL_WEEK, Workload

_SETTINGS = Statement(
    select(SchedulerSettings.load_balancing, SchedulerSettings.easy_days).where(
        SchedulerSettings.user_id == bindparam("user_id")
    )
)


def workload(
    db: Session | Executor,
    user_id: int,
    now: datetime,
    clock: Clock,
    *,
    load_balancing: bool,
    easy_days: Sequence[float] | None,
) -> Workload | None:
    """The workload for answers at `now`; None when the person turned load balancing off."""
    if not load_balancing:
        return None
    conn = executor(db)
    today = study_date(now, *clock)
    known: dict[int, int] = {}

    def counts(low: int, high: int) -> list[int]:
        missing = [d for d in range(low, high + 1) if d not in known]
        if missing:
            first, last = missing[0], missing[-1]
            start = day_start(today + timedelta(days=first), *clock)
            end = day_start(today + timedelta(days=last + 1), *clock)
            found = due_counts(conn, user_id, start, end, last - first + 1)
            known.update(zip(range(first, last + 1), found, strict=True))
        return [known[d] for d in range(low, high + 1)]

    week = tuple(easy_days) if easy_days and len(easy_days) == 7 else NORMAL_WEEK
    return Workload(today=today, easy_days=week, due_counts=counts)


def person_workload(
    session: Session | Executor, user_id: int, now: datetime, clock: Clock
) -> Workload | None:
    """`workload` with the person's own settings, read here (the study pages' previews)."""
    conn = executor(session)
    row = conn.first(_SETTINGS, {"user_id": user_id})
    if row is None:
        return workload(conn, user_id, now, clock, load_balancing=True, easy_days=None)
    return workload(
        conn, user_id, now, clock, load_balancing=row.load_balancing, easy_days=row.easy_days
    )
