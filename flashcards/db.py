"""The old import path of what now lives in `flashcards.storage`, kept only for the modules
other branches are changing at the same time (the hot path's and the study views'); import
from `flashcards.storage` instead. To be removed once those branches are merged."""

from __future__ import annotations

from .storage.retry import LostRace, retrying, with_retries
from .storage.schema import MAX_ID, utcnow
from .storage.sqlite_writers import enter_writer_gate, leave_writer_gate

__all__ = [
    "MAX_ID",
    "LostRace",
    "enter_writer_gate",
    "leave_writer_gate",
    "retrying",
    "utcnow",
    "with_retries",
]
