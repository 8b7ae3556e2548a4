"""Which cards a package's notes become: texts per language under one key, their Anki cards,
tags and GUIDs, and the deck's default language. Nothing is written here (`importer`).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ..decks import cloze
from ..decks.cloze import MAX_CLOZE_CARDS
from ..decks.cloze_source import sibling_key
from ..decks.deckfile import KEY_RE, MAX_TEXT
from ..decks.locales import is_known_locale, unknown_locale_problem
from ..errors import InvalidInput
from . import schema
from .errors import AnkiPackageError
from .reader import CLOZE, AnkiCard, Collection, Note, Notetype
from .sanitize import CONTROL_RE, clean_html, has_formatting, html_to_text
from .templates import TooLarge, render_card

# Characters of all the cards made from Cloze notes (a deck of 10,000 notes of 300 characters
# with three deletions each makes 18 million).
MAX_CLOZE_TEXT = 50_000_000
# HTML rendered from card templates in all: each side is capped (MAX_RENDERED), but a few bytes
# of note under a template of hundreds of fields still make that much of every note. 50,000
# reversed notes of 500 characters a side make 100 million.
MAX_TEMPLATE_TEXT = 200_000_000
# The HTML a card template may make of one side: its text is capped at MAX_TEXT, and rendering
# stops there, since a hostile template makes megabytes of each note (its markup is not text,
# but a side this long of a real note is all but unheard of).
MAX_RENDERED = MAX_TEXT
# Planning a package's notes, as reading them (`reader.READ_SECONDS`), has a time budget: 50,000
# reversed notes (100,000 cards) of a few hundred characters plan in about 10 s on a shared
# two-core machine, a hostile package at most a few times that within the caps above.
PLAN_SECONDS = 60.0
MAX_GUID = 64  # Anki's own are 10 characters; a longer one is not kept (nor trusted)
LANG_TAG = "lang::"
# Our export's mark of the deck a note came from, "flashcards::<slug>": a tag of Anki's
# hierarchy, so that it reads as ours there, and is no tag of the cards here. Exports before
# it carried the slug alone.
DECK_TAG = "flashcards::"


def export_mark(tag: str, slug: str | None = None) -> bool:
    """Whether `tag` is one our export writes to say where a note came from: its language,
    or its deck (the bare `slug` too, as older exports wrote it)."""
    return tag.startswith((LANG_TAG, DECK_TAG)) or (slug is not None and tag == slug)


def marked_slugs(tags: set[str]) -> set[str]:
    """The deck slugs a package's tags may name as our export's mark: every tag, for the older
    exports' bare slugs, and each "flashcards::<slug>"'s slug."""
    return tags | {t.removeprefix(DECK_TAG) for t in tags if t.startswith(DECK_TAG)}


EXPLANATION_RE = re.compile(
    rf'<div class="{schema.EXPLANATION_CLASS}">(.*)</div>\s*$', re.DOTALL | re.IGNORECASE
)
Progress = Callable[[int, int], None]  # notes done, notes in all

SKIP_REASONS = {
    "no_notetype": "have no notetype",
    "empty_front": "have an empty first field",
    "duplicate": "repeat a card and language already imported",
    "too_many_deletions": f"are Cloze notes with more than {MAX_CLOZE_CARDS} deletion numbers",
    # The cap of every card text, as for deck files and a team's cards.
    "too_long": f"have a text longer than {MAX_TEXT} characters",
    # A package imported again into its deck: a new card needs the deck's language.
    "missing_language": "are new to the deck and have no text in its language",
    # A package imported again into a deck the person studies but does not own.
    "not_owned_new": "are new to a deck you study but do not own (only its makers add cards)",
    "not_owned_edited": (
        "were edited in Anki, in a deck you study but do not own: its texts stay as they are"
    ),
}


@dataclass
class PlannedCard:
    key: str
    texts: dict[str, tuple[str, str, str]]  # locale -> question, answer, explanation
    anki_cards: list[AnkiCard]
    tags: list[str]
    guids: dict[str, str] = field(default_factory=dict)  # locale -> its Anki note's guid
    # The cards of one Cloze note share it: siblings (`Card.note_key`).
    note_key: str | None = None


def _split_back(note_back: str, ours: bool) -> tuple[str, str]:
    if ours:
        match = EXPLANATION_RE.search(note_back)
        if match:
            return note_back[: match.start()], match.group(1)
    return note_back, ""


def _is_ours(fields: list[str]) -> bool:
    return tuple(fields[:3]) == schema.FIELDS


def _siblings_count(fields: list[str]) -> int:
    """How many cards a note of our siblings note type holds, 0 for another note type."""
    count = (len(fields) - 1) // 3
    return count if count >= 2 and tuple(fields) == schema.siblings_fields(count) else 0


def _given_key(html: str, longest: int = 100) -> str | None:
    """A key our export wrote in a field, if it is one (a package may hold anything)."""
    key = html_to_text(html)
    return key if KEY_RE.match(key) and len(key) <= longest else None


class _Planner:
    """Anki notes into the cards to make, merging a card's languages under its key."""

    def __init__(
        self,
        coll: Collection,
        default_locale: str,
        skipped: Counter[str],
        max_cards: int,
        by_template: bool = False,
    ) -> None:
        self.default_locale = default_locale
        self.by_template = by_template
        self.skipped = skipped
        # Notes are limited when the package is read; a Cloze note makes several cards.
        self.max_cards = max_cards
        self.unplanned = 0
        self.cloze_text = 0
        self.template_text = 0
        self.planned: dict[str, PlannedCard] = {}
        self.formatted = 0
        self.cloze_notes = 0
        self.first_locale: str | None = None
        self.cards_by_note: dict[int, list[AnkiCard]] = {}
        self.note_keys: set[tuple[str, str]] = set()  # (note key, language) of siblings
        for c in coll.cards:
            self.cards_by_note.setdefault(c.nid, []).append(c)

    def note(self, note: Note, nt: Notetype) -> None:
        fields = nt.fields
        # Anki's GUIDs are printable ASCII; one with a NUL could not even be stored.
        guid = note.guid if 0 < len(note.guid) <= MAX_GUID and note.guid.isprintable() else None
        if nt.kind == CLOZE:
            self._cloze(note, tuple(fields) == schema.CLOZE_FIELDS, guid)
            return
        cards = self.cards_by_note.get(note.id, [])
        siblings = _siblings_count(fields)
        if siblings:
            self._siblings(note, siblings, guid)
            return
        ours = _is_ours(fields)
        several = len(nt.templates) > 1 and len({c.ord for c in cards}) > 1
        if not ours and (several or (self.by_template and nt.templates)):
            self._templated(note, nt, guid)
            return
        locale = _note_locale(note, self.default_locale) if ours else self.default_locale
        if self.first_locale is None and ours:
            self.first_locale = locale
        back_html, explanation_html = _split_back(
            note.fields[1] if len(note.fields) > 1 else "", ours
        )
        key = _note_key(note, ours, self.planned, locale)
        front_html = note.fields[0] if note.fields else ""
        self._card(note, key, locale, (front_html, back_html, explanation_html), cards, guid)

    def _free_note_key(self, own: str, given: str | None, locale: str) -> tuple[str, bool]:
        """The note key `given` in a package of ours, unless a note already brought cards
        under it in `locale`: a copy of a note (Anki's "Create copy" copies the Key field) is
        kept under its own note id, as a Basic note is. Taken for `locale` then; and whether
        it is the given one."""
        kept = given is not None and (given, locale) not in self.note_keys
        key = given if kept and given is not None else own
        while (key, locale) in self.note_keys:
            key += "-x"
        self.note_keys.add((key, locale))
        return key, kept

    def _by_ord(self, note: Note) -> dict[int, list[AnkiCard]]:
        by_ord: dict[int, list[AnkiCard]] = {}
        for c in self.cards_by_note.get(note.id, []):
            by_ord.setdefault(c.ord, []).append(c)
        return by_ord

    def _sibling(
        self,
        note: Note,
        key: str,
        note_key: str,
        locale: str,
        htmls: tuple[str, str, str],
        cards: list[AnkiCard],
        guid: str | None,
    ) -> None:
        """One of a note's several cards: all of them share its note key (and guid)."""
        if len(self.planned) >= self.max_cards and key not in self.planned:
            self.unplanned += 1  # to say how many cards the package would make
            return
        self._card(note, key, locale, htmls, cards, guid)
        if key in self.planned:
            self.planned[key].note_key = note_key

    def _templated(self, note: Note, nt: Notetype, guid: str | None) -> None:
        """A note of Anki's with several card templates: each card a sibling, its sides
        rendered from its own template."""
        values = dict(zip(nt.fields, note.fields, strict=False))
        rendered = []
        for ord_, cards in sorted(self._by_ord(note).items()):
            if not 0 <= ord_ < len(nt.templates):
                continue
            try:
                sides = render_card(*nt.templates[ord_], values, limit=MAX_RENDERED)
            except TooLarge:
                # A hostile template (thousands of fields) makes no card a text could hold.
                self.skipped["too_long"] += 1
                return
            rendered.append((ord_, cards, sides))
            self.template_text += len(sides[0]) + len(sides[1])
            if self.template_text > MAX_TEMPLATE_TEXT:
                raise AnkiPackageError(
                    f"the package's card templates make more than {MAX_TEMPLATE_TEXT} characters"
                    " of cards",
                    kind="templates_too_large",
                    limit=MAX_TEMPLATE_TEXT,
                )
        formatted = self.formatted
        note_key, _ = self._free_note_key(f"anki-{note.id}", None, self.default_locale)
        for ord_, cards, (question, answer) in rendered:
            key = f"{note_key}-t{ord_ + 1}"
            self._sibling(
                note, key, note_key, self.default_locale, (question, answer, ""), cards, guid
            )
        self.formatted = min(self.formatted, formatted + 1)  # counted per note, not per card

    def _siblings(self, note: Note, count: int, guid: str | None) -> None:
        """A note of our siblings note type: front, back and key of each card."""
        locale = _note_locale(note, self.default_locale)
        if self.first_locale is None:
            self.first_locale = locale
        values = note.fields + [""] * (3 * count + 1 - len(note.fields))
        note_key, given = self._free_note_key(f"anki-{note.id}", _given_key(values[-1]), locale)
        by_ord = self._by_ord(note)
        for i in range(count):
            front, back_html, key_html = values[3 * i : 3 * i + 3]
            if not front:
                continue
            key = (_given_key(key_html) if given else None) or f"{note_key}-t{i + 1}"
            back, explanation = _split_back(back_html, True)
            htmls = (front, back, explanation)
            self._sibling(note, key, note_key, locale, htmls, by_ord.get(i, []), guid)

    def _cloze(self, note: Note, ours: bool, guid: str | None) -> None:
        text = note.fields[0] if note.fields else ""
        parsed = cloze.Cloze(text)
        numbers = parsed.numbers()
        if not numbers:
            self.skipped["empty_front"] += 1  # Anki shows such a note no card either
            return
        if len(numbers) > MAX_CLOZE_CARDS:
            self.skipped["too_many_deletions"] += 1
            return
        if len(self.planned) + len(numbers) > self.max_cards:
            self.unplanned += len(numbers)  # to say how many cards the package would make
            return
        # Each card holds the whole text twice: a small package of long notes with many
        # deletions would otherwise make gigabytes of cards.
        self.cloze_text += 2 * len(text) * len(numbers)
        if self.cloze_text > MAX_CLOZE_TEXT:
            raise AnkiPackageError(
                f"the package's Cloze notes make more than {MAX_CLOZE_TEXT} characters of cards",
                kind="cloze_too_large",
                limit=MAX_CLOZE_TEXT,
            )
        self.cloze_notes += 1
        locale = self.default_locale
        given = None
        if ours:
            # Our own Cloze notes: a language and key of their own, kept as they were.
            locale = _note_locale(note, self.default_locale)
            if self.first_locale is None:
                self.first_locale = locale
            given = _given_key(note.fields[2], 95) if len(note.fields) > 2 else None
        note_key, _ = self._free_note_key(f"anki-{note.id}", given, locale)
        extra = note.fields[1] if len(note.fields) > 1 else ""
        whole = parsed.answer()
        if len(html_to_text(whole)) > MAX_TEXT:
            self.skipped["too_long"] += 1  # once for the note, not for each of its cards
            return
        by_ord = self._by_ord(note)
        formatted = self.formatted
        for number in numbers:
            htmls = (parsed.question(number), whole, extra)
            # The note's guid on each card: they go out together as that note again.
            key = sibling_key(note_key, number)
            self._card(note, key, locale, htmls, by_ord.get(number - 1, []), guid)
            if key in self.planned:
                self.planned[key].note_key = note_key
        self.formatted = min(self.formatted, formatted + 1)  # counted per note, not per card

    def _card(
        self,
        note: Note,
        key: str,
        locale: str,
        htmls: tuple[str, str, str],
        cards: list[AnkiCard],
        guid: str | None,
    ) -> None:
        clean = [clean_html(h) for h in htmls]
        front, back, explanation = (html_to_text(c, already_clean=True) for c in clean)
        if not front:
            self.skipped["empty_front"] += 1
            return
        if max(len(front), len(back), len(explanation)) > MAX_TEXT:
            self.skipped["too_long"] += 1
            return
        if any(has_formatting(c) for c in clean):
            self.formatted += 1
        entry = self.planned.get(key)
        if entry is None:
            # A control character (a NUL above all, which PostgreSQL cannot store) is no
            # part of a tag Anki itself would write.
            cleaned = (CONTROL_RE.sub("", t) for t in note.tags if not export_mark(t))
            tags = [t for t in cleaned if t]
            entry = self.planned[key] = PlannedCard(key, {}, [], tags)
        if locale in entry.texts:
            self.skipped["duplicate"] += 1
            return
        entry.texts[locale] = (front, back, explanation)
        if guid is not None:
            entry.guids[locale] = guid
        entry.anki_cards.extend(sorted(cards, key=lambda c: c.ord))


def plan_cards(
    coll: Collection,
    default_locale: str,
    skipped: Counter[str],
    max_cards: int,
    progress: Progress | None = None,
    *,
    by_template: bool = False,
) -> _Planner:
    """The cards `coll`'s notes make. `by_template`: every card of a note type not ours
    shows what its own template does (as on the device it comes from); else a note with one
    card is its first two fields, as a package's Basic notes."""
    planner = _Planner(coll, default_locale, skipped, max_cards, by_template)
    deadline = time.monotonic() + PLAN_SECONDS
    for done, note in enumerate(coll.notes, 1):
        if done % 100 == 0:
            if time.monotonic() > deadline:
                raise AnkiPackageError(
                    f"making cards of the package's notes took over {PLAN_SECONDS:.0f} s; a real"
                    " package of this size takes a fraction of that"
                )
            if progress is not None:
                progress(done, len(coll.notes))
        nt = coll.notetypes.get(note.mid)
        if nt is None:
            skipped["no_notetype"] += 1
            continue
        planner.note(note, nt)
    made = len(planner.planned) + planner.unplanned
    if made > max_cards:
        raise AnkiPackageError(
            f"the package's notes make {made} cards (a Cloze note one per deletion number),"
            f" over the limit of {max_cards}",
            kind="too_many_cards",
            count=made,
            limit=max_cards,
        )
    return planner


def complete_language(planned: list[PlannedCard], asked: str | None, preferred: list[str]) -> str:
    """The deck's default language: one with a text for every card, since a person whose
    own language lacks a card is shown it in this one. `asked`, the caller's, or else the
    first of `preferred` that is complete, or else any."""
    have = Counter(loc for p in planned for loc in p.texts)
    complete = sorted(loc for loc, n in have.items() if n == len(planned))
    if asked is not None:
        if asked in complete:
            return asked
        raise InvalidInput(
            f"the package has a text in '{asked}' for {have[asked]} of its {len(planned)}"
            " cards, and the deck's language needs one for every card (languages with every"
            f" card: {', '.join(complete) or 'none'})",
            field="locale",
        )
    for loc in (*preferred, *complete):
        if loc in complete:
            return loc
    raise AnkiPackageError(
        "no language in the package has a text for every card, so the deck would have no"
        f" language to show them in ({', '.join(f'{loc}: {n}' for loc, n in sorted(have.items()))}"
        f" of {len(planned)} cards)",
        kind="no_complete_language",
    )


def _note_locale(note: Note, default_locale: str) -> str:
    for tag in note.tags:
        if tag.startswith(LANG_TAG):
            code = tag[len(LANG_TAG) :]
            if not is_known_locale(code):
                # Taken as the default language, the note would replace or duplicate the
                # card's text in it; taken as it is, no page could name its language.
                raise AnkiPackageError(
                    f"a note is tagged {tag}: {unknown_locale_problem(code)}",
                    kind="unknown_language",
                    code=code,
                )
            return code
    return default_locale


def _note_key(note: Note, ours: bool, planned: dict[str, PlannedCard], locale: str) -> str:
    if ours and len(note.fields) > 2:
        key = html_to_text(note.fields[2])
        if KEY_RE.match(key) and (key not in planned or locale not in planned[key].texts):
            return key
    key = f"anki-{note.id}"
    while key in planned:
        key += "-x"
    return key
