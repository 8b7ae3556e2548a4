"""The one error this package raises for packages it cannot read or write, and a helper."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table

from ..db import Base
from ..errors import InvalidInput


class AnkiPackageError(InvalidInput):
    """A package that is corrupt, not Anki's, too large, or has nothing we can import."""


def table(model: type[Base]) -> Table:
    """A model's Core table, for bulk reads and writes without per-row ORM overhead."""
    return cast(Table, model.__table__)
