"""A card of a person's own deck added or edited on the web or through the API, a card of a
device's note (`adopted`) included. No Flask.

Such a card's text is what its note type's template makes of the note's fields, so an edit
is made to the note: when the card's question is one field and its answer one field (Basic,
Basic and reversed, most vocabulary note types), those fields take the new text, the note
is kept with a new modification time, and every device gets it at its next sync (a device's
older edit of the same note then loses, as on Anki's own server); the note's other cards
take their new text at once. Any other card (a Cloze deletion, a template that writes more
than one field) is edited in Anki (`CardOfAnkiNote`).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..anki.export_notes import checksum, note_guid, sort_field
from ..anki.planning import export_mark
from ..anki.reader import CLOZE, Notetype
from ..anki.sanitize import clean_html, has_formatting, html_to_text, text_to_html
from ..anki.structure import notetype_of
from ..anki.templates import ANSWER_RULE
from ..decks import own_decks
from ..decks.card_editing import check_texts, clean_tags, from_cloze
from ..errors import AnkiFieldFormatted, CardOfAnkiNote, InvalidInput
from ..srs.marks import LEECH_TAG
from ..storage.models import Card, CardText, Deck
from . import adopted_changes, kept, sessions, snapshot
from .device_rows_read import FIELD_SEPARATOR

# A side of a template that is one field alone: `{{Front}}`, no filter, section or text.
ONE_FIELD_RE = re.compile(r"^\s*\{\{\s*([^#/^{}:]+?)\s*\}\}\s*$")
FRONT_SIDE_RE = re.compile(r"\{\{\s*FrontSide\s*\}\}")
IMG_RE = re.compile(r"<img\b", re.IGNORECASE)
# A schema-11 note row's columns this changes.
NOTE_TAGS, NOTE_FIELDS, NOTE_SORT, NOTE_SUM = 5, 6, 7, 8
NOTE_MOD = kept.MOD_INDEX[snapshot.NOTE]
RECENT_NOTES = 50  # of a deck's cards, whose note types say which a new card takes


def edit_card(
    session: Session,
    user_id: int,
    slug: str,
    key: str,
    *,
    locale: str | None,
    question: str | None,
    answer: str | None,
    explanation: str | None,
    tags: list[str] | None,
    now: datetime,
) -> None:
    """`own_decks.edit_card`, for a card of a device's note too (see the module's doc)."""
    deck = own_decks.find_own_deck(session, user_id, slug)
    card = session.scalar(
        select(Card).where(Card.deck_id == deck.id, Card.key == key, Card.retired_at.is_(None))
    )
    if card is None or card.anki_ord is None or card.anki_note_id is None:
        own_decks.edit_card(
            session, user_id, slug, key, locale=locale, question=question, answer=answer,
            explanation=explanation, tags=tags, now=now,
        )  # fmt: skip
        return
    if locale not in (None, deck.default_locale):
        raise InvalidInput(f"the deck has no language '{locale}'", field="locale")
    if explanation:
        raise CardOfAnkiNote("a card of an Anki note has no explanation of its own here")
    note = _note(session, user_id, card)
    raw, notetype = _notetype(session, user_id, note[2])
    front, back = _fields_shown(notetype, card.anki_ord)
    names = notetype.fields
    fields = str(note[NOTE_FIELDS]).split(FIELD_SEPARATOR)
    fields += [""] * (len(names) - len(fields))
    current = session.get(CardText, (card.id, deck.default_locale))
    before = {front: _plain(current.question if current else ""),
              back: _plain(current.answer if current else "")}  # fmt: skip
    after = {
        front: before[front] if question is None else _plain(question),
        back: before[back] if answer is None else _plain(answer),
    }
    check_texts(after[front], after[back], "")
    changed = list(note)
    # A form sends both sides: only a side whose text changed is written (the other keeps
    # its HTML), and one whose HTML plain text cannot hold is edited in Anki, not flattened.
    edited = [name for name in (front, back) if after[name] != before[name]]
    for name in edited:
        index = names.index(name)
        if _loses_markup(fields[index]):
            raise AnkiFieldFormatted(
                "this side of the card has formatting or pictures the web does not keep: "
                "edit it in Anki"
            )
        fields[index] = text_to_html(after[name])
    if edited:
        changed[NOTE_FIELDS] = FIELD_SEPARATOR.join(fields)
        changed[NOTE_SORT], changed[NOTE_SUM] = _sort_and_checksum(raw, fields)
    if tags is not None and clean_tags(tags) != list(card.tags or ()):
        # The note's tags the web does not show (Anki's `leech`, our export's) stay.
        hidden = [t for t in str(note[NOTE_TAGS]).split() if t.lower() == LEECH_TAG
                  or export_mark(t)]  # fmt: skip
        shown = [*clean_tags(tags), *hidden]
        changed[NOTE_TAGS] = " ".join(["", *shown, ""]) if shown else ""
    if changed == note:
        return
    held_mod = note[NOTE_MOD] if isinstance(note[NOTE_MOD], int | float) else 0
    changed[NOTE_MOD] = max(int(now.timestamp()), int(held_mod) + 1)
    usn = sessions.collection(session, user_id, now).usn
    kept.keep(session, user_id, snapshot.NOTE, {card.anki_note_id: changed}, usn=usn, now=now)
    adopted_changes.retext(session, user_id, [changed], now)


def add_card(
    session: Session,
    user_id: int,
    slug: str,
    *,
    question: str,
    answer: str,
    explanation: str,
    tags: list[str] | None,
    now: datetime,
) -> list[str]:
    """`own_decks.add_card`: the new cards' keys. In a deck standing for a device's, the
    card is made a note of the note type most of the deck's editable cards are of (as
    Anki's Add offers the one last used), so devices get it as one of theirs, edited both
    ways as they are; with an explanation (which such a note has no field for), or no such
    note type, it stays a note of ours, as Cloze siblings do."""
    keys = own_decks.add_card(session, user_id, slug, question=question, answer=answer,
                              explanation=explanation, tags=tags, now=now)  # fmt: skip
    deck = own_decks.find_own_deck(session, user_id, slug)
    if deck.anki_deck_id is None or explanation.strip() or from_cloze(keys):
        return keys
    (key,) = keys
    chosen = _deck_note_type(session, user_id, deck.id)
    if chosen is None:
        return keys
    mid, raw, notetype = chosen
    front, back = _fields_shown(notetype, 0)
    card = session.scalars(select(Card).where(Card.deck_id == deck.id, Card.key == key)).one()
    text = session.get(CardText, (card.id, deck.default_locale))
    assert text is not None
    fields = [""] * len(notetype.fields)
    fields[notetype.fields.index(front)] = text_to_html(text.question)
    fields[notetype.fields.index(back)] = text_to_html(text.answer)
    nid = _free_id(session, user_id, int(now.timestamp() * 1000))
    usn = sessions.collection(session, user_id, now).usn
    note = [
        nid, note_guid(deck.slug, key, deck.default_locale), mid, int(now.timestamp()), usn,
        " ".join(["", *card.tags, ""]) if card.tags else "", FIELD_SEPARATOR.join(fields),
        *_sort_and_checksum(raw, fields), 0, "",
    ]  # fmt: skip
    kept.keep(session, user_id, snapshot.NOTE, {nid: note}, usn=usn, now=now)
    card.anki_note_id, card.anki_card_id, card.anki_ord = nid, nid, 0
    return keys


def _deck_note_type(
    session: Session, user_id: int, deck_id: int
) -> tuple[int, dict[str, Any], Notetype] | None:
    """The kept note type of one card, its question one field and its answer another, that
    most of the deck's recent cards are of."""
    recent = session.scalars(
        select(Card.anki_note_id)
        .where(Card.deck_id == deck_id, Card.anki_ord.is_not(None), Card.retired_at.is_(None))
        .order_by(Card.position.desc())
        .limit(RECENT_NOTES)
    ).all()
    notes = kept.payloads(session, user_id, snapshot.NOTE, {n for n in recent if n is not None})
    used = Counter(n[2] for n in notes.values() if isinstance(n, list) and len(n) > NOTE_SUM)
    found = kept.payloads(session, user_id, snapshot.NOTETYPE, used)
    for mid, _count in used.most_common():
        raw = found.get(mid)
        if not isinstance(raw, dict):
            continue
        try:
            read = notetype_of(raw)
            # One template alone: a device would make a note of more a card for each.
            if len(read.templates) == 1:
                _fields_shown(read, 0)
                return mid, raw, read
        except (KeyError, TypeError, ValueError, AttributeError, CardOfAnkiNote):
            continue  # a damaged note type, or one the web does not edit
    return None


def _free_id(session: Session, user_id: int, wanted: int) -> int:
    """An Anki note and card id (a time in ms, as Anki makes them) no note or card of the
    person's has: `wanted`, or the next one free."""
    owned = select(Deck.id).where(Deck.owner_user_id == user_id)
    taken = {
        *session.scalars(select(Card.anki_note_id).where(Card.deck_id.in_(owned),
                                                         Card.anki_note_id >= wanted)),
        *session.scalars(select(Card.anki_card_id).where(Card.deck_id.in_(owned),
                                                         Card.anki_card_id >= wanted)),
        *kept.ids_from(session, user_id, (snapshot.NOTE, snapshot.CARD), wanted),
    }  # fmt: skip
    while wanted in taken:
        wanted += 1
    return wanted


def _plain(text: str) -> str:
    """A side's text as the web keeps it (a form sends line breaks as CRLF)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _loses_markup(html: str) -> bool:
    """Whether a field's HTML holds more than our plain text does: formatting, or a picture
    that is not a local file (plain text keeps those as [image:] tokens)."""
    clean = clean_html(html)
    pictures = len(IMG_RE.findall(clean))
    return has_formatting(clean) or pictures != html_to_text(clean, already_clean=True).count(
        "[image:"
    )


def editable(session: Session, user_id: int, deck_id: int, key: str) -> bool:
    """Whether the web edits this card (one of a device's note: see the module's doc)."""
    card = session.scalar(select(Card).where(Card.deck_id == deck_id, Card.key == key))
    if card is None or card.anki_ord is None:
        return True
    try:
        _fields_shown(
            _notetype(session, user_id, _note(session, user_id, card)[2])[1], card.anki_ord
        )
    except CardOfAnkiNote:
        return False
    return True


def _note(session: Session, user_id: int, card: Card) -> list[Any]:
    nid = card.anki_note_id
    note = kept.payloads(session, user_id, snapshot.NOTE, [nid or 0]).get(nid or 0)
    if not isinstance(note, list) or len(note) <= NOTE_SUM:
        raise CardOfAnkiNote("this card's note is not kept here: edit it in Anki")
    return note


def _notetype(session: Session, user_id: int, mid: Any) -> tuple[dict[str, Any], Notetype]:
    """The note type as kept, and as read (a damaged one is edited in Anki)."""
    found = kept.payloads(session, user_id, snapshot.NOTETYPE, [mid]).get(mid)
    if not isinstance(found, dict):
        raise CardOfAnkiNote("this card's note type is not kept here: edit it in Anki")
    try:
        return found, notetype_of(found)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise CardOfAnkiNote("this card's note type is not one the web reads") from None


def _sort_and_checksum(raw: dict[str, Any], fields: list[str]) -> tuple[str, int]:
    """A note's sort field (its note type's `sortf`) and first field's checksum, as Anki
    writes them."""
    index = raw.get("sortf")
    if not (type(index) is int and 0 <= index < len(fields)):
        index = 0
    return sort_field(html_to_text(fields[index])), checksum(sort_field(html_to_text(fields[0])))


def _fields_shown(notetype: Notetype, ord_: int) -> tuple[str, str]:
    """The fields the card's question and answer are, or CardOfAnkiNote."""
    if notetype.kind == CLOZE or not 0 <= ord_ < len(notetype.templates):
        raise CardOfAnkiNote("this card's text is made from its note in a way edited in Anki")
    question, answer = notetype.templates[ord_]
    rule = ANSWER_RULE.search(answer)
    answer = answer[rule.end() :] if rule is not None else FRONT_SIDE_RE.sub("", answer)
    front, back = ONE_FIELD_RE.match(question), ONE_FIELD_RE.match(answer)
    if front is None or back is None or front.group(1) == back.group(1):
        raise CardOfAnkiNote("this card's text is made from its note in a way edited in Anki")
    if not {front.group(1), back.group(1)} <= set(notetype.fields):
        raise CardOfAnkiNote("this card's note type names a field it does not have")
    return front.group(1), back.group(1)
