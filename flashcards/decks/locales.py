"""Which locale codes are accepted: the one rule for every place a deck's language enters.

Deck files, CSV and quiz uploads, Anki packages (their `lang::` tags and `?locale=`) and
the API all ask `is_known_locale`; the settings take only the interface's own languages
(`settings.SUPPORTED_LOCALES`), all of them known. A language is formatted by Babel wherever
it is named (the library, a deck's page, an export), so a code Babel cannot format would
break every page of everyone who sees the deck; the pages fall back to the code itself
(`display_name`) for one stored before this rule.
"""

from __future__ import annotations

import re
from functools import lru_cache

from babel import Locale, UnknownLocaleError

from ..errors import InvalidInput

# Babel's own spelling: a language, and optionally a territory ("pt_BR").
LOCALE_RE = re.compile(r"^[a-z]{2,3}(_[A-Z]{2})?$")


def is_known_locale(code: object) -> bool:
    """Whether `code` names a language (and territory) that Babel has data for.

    Babel's `Locale.parse` fills in what it can guess: "en_ZZ" parses as English in the
    United States and "und" as English, so the parsed language and territory must be the
    ones asked for.
    """
    # fullmatch: `$` would let "en\n" through.
    return isinstance(code, str) and LOCALE_RE.fullmatch(code) is not None and _known(code)


@lru_cache(maxsize=1024)
def _known(code: str) -> bool:
    language, _, territory = code.partition("_")
    try:
        parsed = Locale.parse(code)
    except (ValueError, UnknownLocaleError):
        return False
    return parsed.language == language and (parsed.territory or "") == territory


class UnknownLocale(InvalidInput):
    """A language code Babel does not know; `code` is the one given, `line` its line in an
    upload (CSV), if any."""

    def __init__(self, code: str, *, field: str = "locale", line: int | None = None) -> None:
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{unknown_locale_problem(code)}", field=field)
        self.code = code
        self.line = line


def unknown_locale_problem(code: str) -> str:
    """The problem with `code`, in the words every edge uses (a CLI line, a deck file's)."""
    shown = code if len(code) <= 40 else code[:40] + "..."
    # repr: a control character in the code is shown, not sent to a terminal.
    return f"{shown!r} is not a language code we know (e.g. en, es, ko, pt_BR)"


def check_locale(code: object, *, field: str = "locale", line: int | None = None) -> str:
    """`code` if it is known, else UnknownLocale naming it."""
    if not is_known_locale(code):
        raise UnknownLocale(str(code), field=field, line=line)
    assert isinstance(code, str)
    return code


def display_name(code: str, in_locale: str) -> str:
    """`code`'s language named in `in_locale` ("inglés"), or the code itself when Babel
    does not know it (a deck stored before the rule above) or has no name for it."""
    if not is_known_locale(code):
        return code
    try:
        name = Locale.parse(code).get_display_name(in_locale)
    except (ValueError, UnknownLocaleError):
        return code
    return str(name or code)
