"""Core tables of our models, for bulk reads and writes without per-row ORM overhead."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from ..storage.schema import Base


def table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)
