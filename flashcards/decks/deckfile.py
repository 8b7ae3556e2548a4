"""The human-editable deck format in `decks/`.

A deck is a folder `decks/<slug>/` holding `deck.toml` (`default_locale = "en"`) and one
`<locale>.deck` file per language::

    # comment
    title: EKS model training quiz
    description: 15 questions on ...

    == card-key
    Question text
    --
    Short answer
    --
    Optional explanation

The default locale lists every card; other locales may leave cards out (they fall back to
the default text) but may not add any. Errors name `file:line`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DeckFileError
from .locales import LOCALE_RE, is_known_locale, unknown_locale_problem

KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")
SLUG_RE = KEY_RE
HEADER_FIELDS = {"title", "description"}
MAX_TEXT = 20_000
MAX_TITLE = 200  # DeckText.title's column length
LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")
TOML_LINE_RE = re.compile(r"at line (\d+)")


@dataclass(frozen=True)
class CardSource:
    key: str
    question: str
    answer: str
    explanation: str = ""
    line: int = 0
    # The key of the Cloze text an upload made this card from, one of its deletions: the
    # cards of one text are siblings, one note (`card_editing.keep_notes`).
    note: str | None = None


@dataclass(frozen=True)
class LocaleSource:
    locale: str
    title: str
    description: str
    cards: tuple[CardSource, ...]
    path: str = ""


@dataclass(frozen=True)
class DeckSource:
    slug: str
    default_locale: str
    locales: dict[str, LocaleSource] = field(default_factory=dict)

    @property
    def keys(self) -> list[str]:
        return [card.key for card in self.locales[self.default_locale].cards]


def refuse_nul(text: str, path: str) -> None:
    """PostgreSQL cannot store NUL in text (a DataError at the first write); SQLite would."""
    at = text.find("\x00")
    if at >= 0:
        line = len(LINE_BREAK_RE.findall(text, 0, at)) + 1
        raise DeckFileError(path, line, "a NUL character is not text", reason="nul")


def parse_locale_file(text: str, *, locale: str, path: str = "<deck>") -> LocaleSource:
    refuse_nul(text, path)
    header: dict[str, str] = {}
    cards: list[CardSource] = []
    seen: dict[str, int] = {}
    # The card being read: its key, first line, and blocks of lines (question, answer, expl.).
    key: str | None = None
    key_line = 0
    blocks: list[list[str]] = []
    separators: list[int] = []  # line numbers of the current card's '--' lines

    def finish(end_line: int) -> None:
        if key is None:
            return
        texts = ["\n".join(block).strip() for block in blocks]
        if len(texts) < 2:
            raise DeckFileError(path, key_line, f"card '{key}' needs a '--' line and an answer")
        if len(texts) > 3:
            raise DeckFileError(
                path,
                separators[2],
                f"card '{key}' has a third '--' line (a card is question, answer, explanation)",
            )
        for name, text in zip(("question", "answer"), texts, strict=False):
            if not text:
                raise DeckFileError(path, key_line, f"card '{key}' has an empty {name}")
        if any(len(t) > MAX_TEXT for t in texts):
            raise DeckFileError(
                path, key_line, f"card '{key}' is longer than {MAX_TEXT} characters"
            )
        cards.append(
            CardSource(key, texts[0], texts[1], texts[2] if len(texts) == 3 else "", key_line)
        )

    # Only real line breaks count, so that line numbers are the ones an editor shows.
    lines = LINE_BREAK_RE.split(text.removeprefix("\ufeff"))
    if lines and lines[-1] == "":
        lines.pop()
    title_line = 1
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if line.startswith("=="):
            finish(number)
            key = line[2:].strip()
            key_line = number
            if not KEY_RE.match(key):
                raise DeckFileError(
                    path, number, f"invalid card key '{key}' (use a-z, 0-9, '-' and '_')"
                )
            if key in seen:
                raise DeckFileError(
                    path, number, f"duplicate card key '{key}' (first on line {seen[key]})"
                )
            seen[key] = number
            blocks = [[]]
            separators = []
        elif key is None:
            if not line.strip():
                continue
            name, sep, value = line.partition(":")
            name = name.strip().lower()
            if not sep or name not in HEADER_FIELDS:
                raise DeckFileError(
                    path,
                    number,
                    "expected 'title: ...' or 'description: ...' before the first '== key' line",
                )
            if name in header:
                raise DeckFileError(path, number, f"'{name}' is given twice")
            header[name] = value.strip()
            if name == "title":
                title_line = number
                if not header[name]:
                    raise DeckFileError(path, number, "the title is empty")
                if len(header[name]) > MAX_TITLE:
                    raise DeckFileError(
                        path, number, f"the title is longer than {MAX_TITLE} characters"
                    )
        elif line.strip() == "--":
            blocks.append([])
            separators.append(number)
        else:
            blocks[-1].append(line)
    finish(len(lines))

    if not header.get("title"):
        raise DeckFileError(path, 1, "missing 'title: ...' header")
    if not cards:
        raise DeckFileError(path, title_line, "no cards (a card starts with a '== key' line)")
    return LocaleSource(locale, header["title"], header.get("description", ""), tuple(cards), path)


def render_locale_file(source: LocaleSource, comment: str = "") -> str:
    lines = [f"# {comment}"] if comment else []
    lines.append(f"title: {source.title}")
    if source.description:
        lines.append(f"description: {source.description}")
    for card in source.cards:
        lines += ["", f"== {card.key}", card.question, "--", card.answer]
        if card.explanation:
            lines += ["--", card.explanation]
    return "\n".join(lines) + "\n"


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DeckFileError(str(path), None, exc.strerror or "cannot be read") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DeckFileError(str(path), line, f"not UTF-8 text ({exc.reason})") from None


def read_default_locale(folder: Path) -> str:
    """The default locale named by `folder/deck.toml`."""
    manifest = folder / "deck.toml"
    try:
        meta = tomllib.loads(read_text(manifest))
    except tomllib.TOMLDecodeError as exc:
        # TOMLDecodeError has `lineno` only from Python 3.14; before, the line is in the text.
        found = TOML_LINE_RE.search(str(exc))
        line = getattr(exc, "lineno", None) or (int(found.group(1)) if found else None)
        raise DeckFileError(str(manifest), line, f"invalid TOML: {exc}") from None
    default_locale = meta.get("default_locale")
    if not isinstance(default_locale, str) or not LOCALE_RE.match(default_locale):
        raise DeckFileError(str(manifest), None, 'needs default_locale = "<locale>" (e.g. "en")')
    if not is_known_locale(default_locale):
        raise DeckFileError(
            str(manifest), None, f"default_locale: {unknown_locale_problem(default_locale)}"
        )
    return default_locale


def load_deck_dir(folder: Path) -> DeckSource:
    slug = folder.name
    if not SLUG_RE.match(slug):
        raise DeckFileError(str(folder), None, "a deck folder's name must be a slug (a-z, 0-9, -)")
    default_locale = read_default_locale(folder)

    locales: dict[str, LocaleSource] = {}
    for path in sorted(folder.glob("*.deck")):
        locale = path.stem
        if not is_known_locale(locale):
            raise DeckFileError(str(path), None, unknown_locale_problem(locale))
        locales[locale] = parse_locale_file(read_text(path), locale=locale, path=str(path))
    if default_locale not in locales:
        raise DeckFileError(str(folder), None, f"no {default_locale}.deck for the default locale")

    default_keys = {c.key for c in locales[default_locale].cards}
    for source in locales.values():
        for card in source.cards:
            if card.key not in default_keys:
                raise DeckFileError(
                    source.path,
                    card.line,
                    f"card '{card.key}' is not in {default_locale}.deck, the default locale",
                )
    return DeckSource(slug, default_locale, locales)


def load_decks(root: Path) -> list[DeckSource]:
    """Every deck folder under `root` (or `root` itself if it is a deck folder)."""
    if (root / "deck.toml").exists():
        return [load_deck_dir(root)]
    if not root.is_dir():
        raise DeckFileError(str(root), None, "no such folder")
    return [load_deck_dir(p.parent) for p in sorted(root.glob("*/deck.toml"))]
