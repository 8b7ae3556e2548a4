"""The old import path of what now lives in `flashcards.storage`, kept only for the hot
path's modules (`rawsql`, `study`) that another branch is rewriting at the same time; import
from `flashcards.storage` instead. To be removed once that branch is merged."""

from __future__ import annotations

from .storage.retry import LostRace
from .storage.sqlite_writers import enter_writer_gate, leave_writer_gate

__all__ = ["LostRace", "enter_writer_gate", "leave_writer_gate"]
