"""The one error this package raises for packages it cannot read or write."""

from __future__ import annotations

from ..errors import InvalidInput


class AnkiPackageError(InvalidInput):
    """A package that is corrupt, not Anki's, too large, or has nothing we can import."""
