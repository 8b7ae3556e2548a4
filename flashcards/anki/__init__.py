"""Anki interop: `.apkg` packages out of and into our decks, with review state if asked.

Plain Python over a session, like the rest of the domain: nothing here commits, reads the
clock or imports Flask. The `anki` package is AGPL and is used by the tests only; the SQLite
collection is written and read here with the standard library.
"""

from __future__ import annotations

from .errors import AnkiPackageError
from .export import ExportedPackage, export_deck
from .import_report import ImportedDeck, ImportReport
from .importer import import_package, read_for_import

__all__ = [
    "AnkiPackageError", "ExportedPackage", "ImportReport", "ImportedDeck", "export_deck",
    "import_package", "read_for_import",
]  # fmt: skip
