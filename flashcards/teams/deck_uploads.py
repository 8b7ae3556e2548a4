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

from ..decks.cloze import MAX_CLOZE_CARDS, Cloze, back_extra
from ..decks.cloze_source import sibling_key
from ..decks.deckfile import KEY_RE, MAX_TEXT, MAX_TITLE, CardSource, LocaleSource, refuse_nul
from ..decks.locales import check_locale
from ..decks.quizfile import parse_quiz, quiz_to_locale
from ..errors import DeckFileError, InvalidInput, TooManyCards, TooManyDeletions, UploadTooLarge
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
    key, locale. Rows without a key are numbered per locale (q01, q02, ...), so the n-th
    row of each language is the same card.

    A front written with Anki's Cloze deletions ("{{c1::Paris}} is in {{c2::France}}") makes
    a card for each deletion number, as `card_editing.add_cards` does and as Anki's CSV
    import into a Cloze note type does with its Text and Back Extra: the back is optional,
    and with the explanation what the cards show besides the text. The row's key is their
    stem ("q01-c1", "q01-c2"), so a re-upload finds each number's card again.
    """
    # newline="" as the csv module asks: a lone "\r" is then a line break, not a csv.Error.
    # strict: a quotation mark left open is an error at the end of the file, and a stray
    # one an error on its line, not a cell that silently swallows the rows after it.
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    starts = 1  # the line the row being read starts on
    try:
        for row in reader:
            if any(c.strip() for c in row):
                # The line the row ends on: a quoted cell may span several.
                rows.append((reader.line_num, row))
            starts = reader.line_num + 1
    except csv.Error as exc:  # also a cell over the csv module's field size limit
        raise _line_error(starts, str(exc), "csv-syntax") from None
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
    rows_of: Counter[str] = Counter()  # per locale, for the keys of rows without one
    cards_of: Counter[str] = Counter()  # per locale: a Cloze row makes several
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
        front, back = values.get("front", ""), values.get("back", "")
        explanation = values.get("explanation", "")
        if not front:
            raise _line_error(line, "the front is empty", "empty-front")
        cloze = Cloze(front)
        is_cloze = bool(cloze.numbers() or cloze.unclosed)
        if not back and not is_cloze:
            raise _line_error(line, "the back is empty", "empty-back")
        if max(len(front), len(back), len(explanation)) > MAX_TEXT:
            raise _too_long(line)
        locale = check_locale(values.get("locale") or default_locale, field="content", line=line)
        rows_of[locale] += 1
        key = values.get("key") or f"q{rows_of[locale]:02d}"
        taken = keys.setdefault(locale, set())
        _check_key(line, key, locale, taken)
        numbers: list[int] = []
        if is_cloze:
            numbers = _cloze_numbers(line, cloze)
            explanation = back_extra(back, explanation)
            if len(explanation) > MAX_TEXT:  # the back and the explanation, as one text
                raise _too_long(line)
            for number in numbers:
                _check_key(line, sibling_key(key, number), locale, taken)
        cards_of[locale] += len(numbers) or 1
        if cards_of[locale] > MAX_CARDS:
            # Still read, for its line's problems, but not made: a few long rows of many
            # deletions would make gigabytes of cards.
            continue
        cards = by_locale.setdefault(locale, [])
        if not is_cloze:
            cards.append(CardSource(key, front, back, explanation, line))
            continue
        whole = cloze.answer().strip()
        for number in numbers:
            question = cloze.question(number).strip()
            cards.append(
                CardSource(sibling_key(key, number), question, whole, explanation, line, key)
            )
    if not cards_of:
        # A header row alone: a deck needs at least one card.
        raise _line_error(
            None, "the CSV has no cards, only the row naming its columns", "header-only"
        )
    check_card_count(max(cards_of.values()))
    return by_locale


def _too_long(line: int) -> DeckFileError:
    return _line_error(
        line, f"a text is longer than {MAX_TEXT} characters", "too-long", limit=MAX_TEXT
    )


def _check_key(line: int, key: str, locale: str, taken: set[str]) -> None:
    """`key` is one and new in its language's keys so far; then taken."""
    if not KEY_RE.match(key):
        raise _line_error(
            line, f"invalid key '{key}' (use a-z, 0-9, '-', '_')", "invalid-key", key=key[:100]
        )
    if key in taken:
        raise _line_error(
            line, f"duplicate key '{key}' in {locale}", "duplicate-key", key=key, locale=locale
        )
    taken.add(key)


def _cloze_numbers(line: int, cloze: Cloze) -> list[int]:
    """The deletion numbers of a row whose front is a Cloze text, a card each."""
    if cloze.unclosed:
        number = cloze.unclosed[0]
        raise _line_error(
            line,
            f"the Cloze deletion {{{{c{number}:: is not closed with }}}}",
            "cloze-unclosed",
            number=number,
        )
    try:
        numbers = cloze.card_numbers()
    except TooManyDeletions as exc:
        raise _line_error(line, exc.detail, "too-many-deletions", limit=MAX_CLOZE_CARDS) from None
    if not cloze.answer().strip():
        # "{{c1::}}": nothing shown once its deletions are, as a front with no text.
        raise _line_error(line, "the front is empty", "empty-front")
    return numbers


def _check_rows_per_locale(
    columns: list[str], body: list[tuple[int, list[str]]], default_locale: str
) -> None:
    """Too many cards is said before any line's problem, and without checking each row of
    a file that may have a million: each row makes a card at least."""
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
