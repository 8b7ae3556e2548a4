"""Reading a team deck's upload, a quiz text or a CSV, into cards; and its limits.

Every refusal is an error carrying its line and reason as data (`DeckFileError.reason`,
`TooManyCards.count`), so the web words it in the person's language, the API returns it as
problem members and the CLI as its line, none of them reading an English message.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import replace

from ..decks.deckfile import KEY_RE, MAX_TEXT, MAX_TITLE, CardSource, LocaleSource, refuse_nul
from ..decks.locales import check_locale
from ..decks.quizfile import parse_quiz, quiz_to_locale
from ..errors import DeckFileError, InvalidInput, TooManyCards, UploadTooLarge
from .roles import clean_text

FORMATS = ("quiz", "csv")
CSV_COLUMNS = ("front", "back", "key", "locale", "explanation")
MAX_CARDS = 5000
# A 5,000-card deck with explanations runs to a few MiB of text; more is not a deck.
MAX_UPLOAD_BYTES = 4 * 1024 * 1024
UPLOAD = "upload"  # the path an upload's errors name, as a file's name its own


def check_size(size: int) -> None:
    """An upload of `size` bytes (UTF-8) is refused above MAX_UPLOAD_BYTES."""
    if size > MAX_UPLOAD_BYTES:
        raise UploadTooLarge(size, MAX_UPLOAD_BYTES)


def check_card_count(count: int) -> None:
    if count > MAX_CARDS:
        raise TooManyCards(count, MAX_CARDS)


def _line_error(line: int | None, problem: str, reason: str, **facts: str | int) -> DeckFileError:
    return DeckFileError(UPLOAD, line, problem, reason=reason, facts=facts, field="content")


def parse_csv(text: str, default_locale: str) -> dict[str, list[CardSource]]:
    """Cards per locale from CSV: front, back, optional key, locale and explanation.

    A first row naming the columns sets their order; without one the order is front, back,
    key, locale. Cards without a key are numbered per locale (q01, q02, ...), so the n-th
    card of each language is the same card.
    """
    # newline="" as the csv module asks: a lone "\r" is then a line break, not a csv.Error.
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    rows: list[tuple[int, list[str]]] = []
    try:
        for row in reader:
            if any(c.strip() for c in row):
                # The line the row ends on: a quoted cell may span several.
                rows.append((reader.line_num, row))
    except csv.Error as exc:  # e.g. a cell over the csv module's field size limit
        raise _line_error(reader.line_num, str(exc), "csv-syntax") from None
    if not rows:
        raise _line_error(None, "the CSV has no rows", "empty")
    header = [c.strip().lower() for c in rows[0][1]]
    if "front" in header and "back" in header:
        unknown = [c for c in header if c not in CSV_COLUMNS]
        if unknown:
            raise _line_error(
                rows[0][0],
                f"unknown CSV column '{unknown[0]}'",
                "unknown-column",
                column=unknown[0],
            )
        columns, body = header, rows[1:]
    else:
        columns, body = list(CSV_COLUMNS[:4]), rows
    _check_rows_per_locale(columns, body, default_locale)
    by_locale: dict[str, list[CardSource]] = {}
    keys: dict[str, set[str]] = {}  # per locale: a set, as a CSV may have 100,000s of rows
    for line, row in body:
        values = dict(zip(columns, (c.strip() for c in row), strict=False))
        if len(row) > len(columns):
            raise _line_error(
                line,
                f"{len(row)} cells where the columns are {len(columns)}",
                "extra-cells",
                cells=len(row),
                columns=len(columns),
            )
        if not values.get("front", ""):
            raise _line_error(line, "the front is empty", "empty-front")
        if not values.get("back", ""):
            raise _line_error(line, "the back is empty", "empty-back")
        front, back = values["front"], values["back"]
        if max(len(front), len(back), len(values.get("explanation", ""))) > MAX_TEXT:
            raise _line_error(
                line, f"a text is longer than {MAX_TEXT} characters", "too-long", limit=MAX_TEXT
            )
        locale = check_locale(values.get("locale") or default_locale, field="content", line=line)
        cards = by_locale.setdefault(locale, [])
        key = values.get("key") or f"q{len(cards) + 1:02d}"
        if not KEY_RE.match(key):
            raise _line_error(
                line, f"invalid key '{key}' (use a-z, 0-9, '-', '_')", "invalid-key", key=key[:100]
            )
        taken = keys.setdefault(locale, set())
        if key in taken:
            raise _line_error(
                line,
                f"duplicate key '{key}' in {locale}",
                "duplicate-key",
                key=key,
                locale=locale,
            )
        taken.add(key)
        cards.append(CardSource(key, front, back, values.get("explanation", ""), line))
    if not by_locale:
        # A header row alone: a deck needs at least one card.
        raise _line_error(
            None, "the CSV has no cards, only the row naming its columns", "header-only"
        )
    return by_locale


def _check_rows_per_locale(
    columns: list[str], body: list[tuple[int, list[str]]], default_locale: str
) -> None:
    """Too many cards is said before any line's problem, and without checking each row of
    a file that may have a million."""
    if len(body) <= MAX_CARDS:
        return
    at = columns.index("locale") if "locale" in columns else None
    counts = Counter(
        (row[at].strip() if at is not None and at < len(row) else "") or default_locale
        for _line, row in body
    )
    check_card_count(max(counts.values()))


def _check_title(title: str) -> str:
    at = title.find("\x00")
    if at >= 0:
        raise InvalidInput("a NUL character is not text", field="title")
    return clean_text(title, field="title", max_length=MAX_TITLE)


def parse_upload(
    fmt: str,
    content: str,
    locale: str,
    title: str | None,
    keys: list[str] | None = None,
    *,
    exact: bool = True,
) -> list[LocaleSource]:
    """The locales an upload provides.

    `keys`: the deck's current keys, given to the quiz's questions in order. With `exact`
    (a translation) the numbers must match; without (a new version of the default language)
    extra questions get new keys and missing ones are retired.
    """
    check_locale(locale)
    # The one limit for every edge (a file, a pasted text, a JSON body), counted as UTF-8.
    check_size(len(content.encode("utf-8", "surrogatepass")))
    refuse_nul(content, UPLOAD)
    if title is not None:
        title = _check_title(title)
    if fmt == "quiz":
        quiz = parse_quiz(content, path=UPLOAD)
        check_card_count(len(quiz.items))
        if keys is not None and not exact:
            keys = _positional_keys(keys, len(quiz.items))
        source = quiz_to_locale(quiz, locale, keys, path=UPLOAD)
        return [replace(source, title=_check_title(title or source.title))]
    if fmt == "csv":
        if title is None:
            raise InvalidInput("a CSV upload needs a title", field="title")
        parsed = parse_csv(content, locale)
        check_card_count(max(len(cards) for cards in parsed.values()))
        return [LocaleSource(loc, title, "", tuple(cards)) for loc, cards in parsed.items()]
    raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", field="format")


def _positional_keys(existing: list[str], count: int) -> list[str]:
    """Question n keeps the key of the deck's n-th card, so re-uploads keep progress."""
    keys = existing[:count]
    taken = set(existing)
    number = 0
    while len(keys) < count:
        number += 1
        key = f"q{number:02d}"
        if key not in taken:
            keys.append(key)
            taken.add(key)
    return keys
