"""The one error this package raises for packages it cannot read or write."""

from __future__ import annotations

from typing import Literal

from ..errors import InvalidInput

Kind = Literal[
    "damaged", "not_a_package", "too_large", "unpacks_too_large", "too_many_notes",
    "too_many_cards", "too_many_decks", "too_many_reviews", "cloze_too_large",
    "templates_too_large", "unsupported_version", "media_quota",
    "nothing_to_import", "no_complete_language", "unknown_language",
]  # fmt: skip


class AnkiPackageError(InvalidInput):
    """A package that is corrupt, not Anki's, too large, or has nothing we can import.

    `kind` lets each edge word the problem in its own language without parsing `detail`.
    """

    def __init__(
        self,
        detail: str,
        *,
        kind: Kind = "damaged",
        count: int = 0,
        limit: int = 0,
        code: str = "",
    ) -> None:
        super().__init__(detail)
        self.kind: Kind = kind
        self.count = count
        self.limit = limit
        self.code = code  # the language code of an "unknown_language"
