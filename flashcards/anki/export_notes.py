"""A deck's cards as Anki notes, cards and revlog rows, one (sub)deck per language.

A card alone is a note of our front/back type. Siblings (cards of one deck sharing a note
key: the deletions of a Cloze note, the cards of a note with several templates) go out as one
note, so that Anki buries them as siblings too: a Cloze note when their texts give the note's
Cloze text back (`siblings.cloze_source`), otherwise a note with a card template per sibling.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from ..decks.cloze_source import cloze_number, cloze_source
from . import schema
from .planning import DECK_TAG, LANG_TAG
from .sanitize import text_to_html
from .scheduling_out import SchedulingContext, card_columns, revlog_rows

Progress = Callable[[int, int], None]


class CardRow(NamedTuple):
    """The columns of a card a note is made of (plain tuples: their attributes cost a tenth
    of a database row's, and a deck has tens of thousands)."""

    id: int
    key: str
    position: int
    tags: list[str]
    note_key: str | None
    anki_note_id: int | None  # the ids of the note a device added the card as, if it did
    anki_card_id: int | None
    anki_ord: int | None  # a card of a note of the device's own note type: which one


class TextRow(NamedTuple):
    """The columns of a card's text in one language a note is made of."""

    card_id: int
    locale: str
    question: str
    answer: str
    explanation: str
    updated_at: datetime
    anki_guid: str | None


LOCALE_SLOTS = 64  # note id = base + card id * slots + language index


def note_id(card_id: int, locale_index: int = 0) -> int:
    """A card's note id (and its Anki card's) in one language: the language's index in the
    low bits, so the note of the export's first language (the deck's default unless the
    export names its languages) sorts first; our importer takes that one as the default.
    Siblings share the note id of the first of them. A card a device added keeps that
    device's ids in the first language instead (`NoteWriter.group`)."""
    return schema.ID_BASE + card_id * LOCALE_SLOTS + locale_index


def card_of(note_id: int) -> int:
    """The card of a note (`note_id`'s inverse)."""
    return (note_id - schema.ID_BASE) // LOCALE_SLOTS


def note_guid(slug: str, key: str, locale: str) -> str:
    """Stable per card (or siblings' note key) and language: edits keep the guid, so Anki
    updates the note."""
    digest = hashlib.sha256(f"flashcards\x1f{slug}\x1f{key}\x1f{locale}".encode()).hexdigest()
    return digest[:20]


def exported_guid(slug: str, key: str, note_key: str | None, locale: str, *, alone: bool) -> str:
    """The GUID our export gives a card's note in `locale` when its text has none of Anki's:
    a card going out alone its own key's (two siblings going out apart must not share one,
    or Anki would take them for one note), siblings going out as one note their note key's."""
    return note_guid(slug, key if alone or note_key is None else note_key, locale)


def back_field(answer: str, explanation: str) -> str:
    # Back holds the answer and, in a div of its own, the explanation: a Basic-like two-sided
    # note stays complete for Anki users and importers that read "first field front, second
    # field back", while the class lets CSS set it apart and our importer split it again.
    back = text_to_html(answer)
    if explanation.strip():
        back += f'<div class="{schema.EXPLANATION_CLASS}">{text_to_html(explanation)}</div>'
    return back


def sort_field(text: str) -> str:
    return " ".join(text.split())


def checksum(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


@dataclass
class NoteWriter:
    """Collects the rows of one export. `shown(card, locale)` is the card's text in that
    language's (sub)deck or None; `studied_in(card)` the language whose note carries the
    card's progress."""

    slug: str
    sched: SchedulingContext | None
    shown: Callable[[int, str], Any]
    studied_in: Callable[[int], str | None]
    deck_ids: dict[str, int]
    usn: int
    mod_ms: int
    notes: list[tuple[Any, ...]] = field(default_factory=list)
    cards: list[tuple[Any, ...]] = field(default_factory=list)
    revlog: list[tuple[Any, ...]] = field(default_factory=list)
    notetypes: dict[int, dict[str, Any]] = field(default_factory=dict)
    card_of: dict[int, int] = field(default_factory=dict)  # Anki card id -> our card id

    def __post_init__(self) -> None:
        self._use(schema.notetype(self.mod_ms // 1000))

    def _use(self, notetype: dict[str, Any]) -> int:
        self.notetypes.setdefault(notetype["id"], notetype)
        return int(notetype["id"])

    def group(self, cards: Sequence[Any], locale: str, locale_index: int) -> None:
        """One note in `locale` for `cards` (one card, or siblings in their order)."""
        present = [(c, t) for c in cards if (t := self.shown(c.id, locale)) is not None]
        if not present:
            return
        first, first_text = present[0]
        lang = first_text.locale  # guid and tag name the text's language, maybe not the deck's
        nid, device_cid = note_id(first.id, locale_index), None
        if (
            locale_index == 0
            and len(present) == 1
            and first.anki_note_id is not None
            and first.anki_ord is None
        ):
            # A note a device added keeps its ids, in its card's first language.
            nid, device_cid = first.anki_note_id, first.anki_card_id
        if len(present) == 1:
            fields, ntid, ords = self._single(first, first_text), schema.NOTETYPE_ID, [0]
            guid = first_text.anki_guid or exported_guid(
                self.slug, first.key, first.note_key, lang, alone=True
            )
            sort_text = first_text.question
        else:
            note_key = first.note_key or first.key
            guid = first_text.anki_guid or exported_guid(
                self.slug, first.key, note_key, lang, alone=False
            )
            made = self._cloze(present, note_key)
            if made is None:
                made = self._multi(present, note_key)
            fields, ntid, ords, sort_text = made
        tags: dict[str, None] = dict.fromkeys([DECK_TAG + self.slug, LANG_TAG + lang])
        for card, _text in present:
            # With progress, the person's own tags and `leech` go with the card's: Anki keeps
            # tags on notes, so a note has its siblings' together.
            card_tags = self.sched.tags(card.id, card.tags) if self.sched else card.tags
            tags.update(dict.fromkeys(card_tags))
        mod = max(int(t.updated_at.timestamp()) for _c, t in present)
        sfld = sort_field(sort_text)
        self.notes.append(
            (nid, guid, ntid, mod, self.usn, " ".join(["", *tags, ""]),
             "\x1f".join(fields), sfld, checksum(sfld), 0, "")
        )  # fmt: skip
        for (card, _text), ord_ in zip(present, ords, strict=True):
            cid = device_cid or note_id(card.id, locale_index)
            self.card_of[cid] = card.id
            studied = self.sched if self.studied_in(card.id) == locale else None
            columns = card_columns(studied, card.id, card.position)
            self.cards.append((cid, nid, self.deck_ids[locale], ord_, mod, self.usn, *columns))
            if studied is not None:
                self.revlog.extend(revlog_rows(studied, card.id, cid))

    def _single(self, card: Any, text: Any) -> list[str]:
        return [
            text_to_html(text.question),
            back_field(text.answer, text.explanation),
            text_to_html(card.key),
        ]

    def _cloze(
        self, present: list[tuple[Any, Any]], note_key: str
    ) -> tuple[list[str], int, list[int], str] | None:
        numbers = [cloze_number(card.key) for card, _t in present]
        answers = {(t.answer, t.explanation) for _c, t in present}
        if None in numbers or len(set(numbers)) != len(numbers) or len(answers) != 1:
            return None
        questions = {n: t.question for n, (_c, t) in zip(numbers, present, strict=True) if n}
        answer, explanation = answers.pop()
        source = cloze_source(questions, answer)
        if source is None:
            return None
        ntid = self._use(schema.cloze_notetype(self.mod_ms // 1000))
        fields = [text_to_html(source), text_to_html(explanation), text_to_html(note_key)]
        return fields, ntid, [n - 1 for n in numbers if n], answer

    def _multi(
        self, present: list[tuple[Any, Any]], note_key: str
    ) -> tuple[list[str], int, list[int], str]:
        ntid = self._use(schema.siblings_notetype(len(present), self.mod_ms // 1000))
        fields = [f for card, text in present for f in self._single(card, text)]
        fields.append(text_to_html(note_key))
        return fields, ntid, list(range(len(present))), present[0][1].question


def sibling_groups(cards: Sequence[Any], together: bool) -> list[list[Any]]:
    """The cards (in deck order) as notes: each alone, or with `together` siblings as one,
    placed where the first of them is. A group larger than a note type may hold goes out
    card by card."""
    if not together:
        return [[c] for c in cards]
    by_note: dict[str, list[Any]] = {}
    for card in cards:
        if card.note_key is not None:
            by_note.setdefault(card.note_key, []).append(card)
    groups: list[list[Any]] = []
    for card in cards:
        siblings = by_note.get(card.note_key) if card.note_key is not None else None
        if siblings is None or len(siblings) > schema.MAX_SIBLINGS:
            groups.append([card])
        elif siblings[0] is card:
            groups.append(siblings)
    return groups
