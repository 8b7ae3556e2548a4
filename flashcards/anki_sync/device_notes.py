"""A device's new notes, edits and deletions, taken where the person may edit the cards
here: a deck of their own, or a team deck they lead (`srs.cards.edit_place`), through the
same edit as the web's (`card_editing.set_card`), so everyone's progress stays. No Flask.

A note added on the device, of our note type, in such a deck becomes a card of it, keeping
the note's and its card's ids (`ids`); one added elsewhere (a shipped deck, a deck made
on the device) stays on the device.

A note is one card in the language the person studies its deck in (the sync sends each deck
in that one language). Its Front becomes the question and its Back the answer, with the
explanation split off again from the div our export puts it in; formatting Anki keeps and
plain text does not (bold, colours) stays on the device. A note deleted on the device
retires its card. Notes of decks the person may not edit here (a shipped deck, a team's they
study) keep the device's edit on the device alone, and come back if deleted there.
As with marks (`device_marks`), a note changed on both sides since the device's last sync
keeps ours and is sent again.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.planning import EXPLANATION_RE, export_mark
from ..anki.sanitize import html_to_text
from ..decks import card_editing
from ..errors import FlashcardsError
from ..hot_sql import marks as sql
from ..hot_sql.rawsql import executor
from ..srs import card_actions
from ..srs.cards import edit_place, may_edit_deck
from ..srs.marks import LEECH_TAG, marks_from_row
from ..storage.models import Card, CardText, Deck, Subscription
from . import ids, kept, snapshot
from .wire import bad_request, is_whole

# A note row of the protocol (schema 11): id, guid, mid, mod, usn, tags, flds, sfld, csum,
# flags, data.
ROW_LENGTH = 11
ID, GUID, MID, TAGS, FIELDS = 0, 1, 2, 5, 6


def parse_rows(entries: object) -> list[list[object]]:
    """[note id, [Front, Back], guid, tags] of each note of our note type in a chunk (400 for
    a malformed row); notes of other types are not ours to read."""
    if not isinstance(entries, list):
        raise bad_request("a chunk's notes must be a list")
    out: list[list[object]] = []
    for entry in entries:
        if not isinstance(entry, list | tuple) or len(entry) < ROW_LENGTH:
            raise bad_request(f"a note row has {ROW_LENGTH} values")
        nid, guid, mid, tags, fields = (entry[i] for i in (ID, GUID, MID, TAGS, FIELDS))
        if not is_whole(nid) or not all(isinstance(v, str) for v in (guid, tags, fields)):
            raise bad_request("a note row's id is a whole number, its guid, tags and fields text")
        parts = fields.split("\x1f")
        if mid == schema.NOTETYPE_ID and len(parts) == len(schema.FIELDS):
            out.append([nid, parts[:2], guid, tags])
    return out


def texts_of(front: str, back: str) -> tuple[str, str, str]:
    """A note's Front and Back as our question, answer and explanation."""
    match = EXPLANATION_RE.search(back)
    answer, explanation = (back[: match.start()], match.group(1)) if match else (back, "")
    return html_to_text(front), html_to_text(answer), html_to_text(explanation)


def apply(
    session: Session,
    user_id: int,
    rows: Iterable[list[object]],
    sent: set[int],
    now: datetime,
) -> int:
    """Each edited note's texts, where the person may edit them; how many changed here or
    are to be sent again (`sent`: the notes this sync sent the device)."""
    again: list[tuple[int, int]] = []
    changed = 0
    rows = list(rows)
    ours = ids.cards_of(session, user_id, (r[0] for r in rows if isinstance(r[0], int)), notes=True)
    for nid, fields, _guid, tags in rows:
        assert isinstance(nid, int) and isinstance(fields, list) and isinstance(tags, str)
        if nid not in ours:
            continue  # not a note of ours (one added on the device and not taken)
        if nid in sent:
            again.append((snapshot.NOTE, nid))
            continue
        changed += _retag(session, user_id, ours[nid], tags.split(), now=now)
        try:
            changed += _edit(session, user_id, ours[nid], *texts_of(*fields), now=now)
        except FlashcardsError:
            # Text the web would refuse too (empty, too long): ours is sent back instead.
            again.append((snapshot.NOTE, nid))
    snapshot.forget(session, user_id, again)
    return changed + len(again)


def _retag(session: Session, user_id: int, card_id: int, tags: list[str], *, now: datetime) -> int:
    """The person's own tags on the card (`card_actions.add_tag`) as the device's note has
    them: its tags but the card's own (the deck's), our export's (`export_mark`) and `leech`
    (leech detection's). A tag we refuse stays on the device alone."""
    row = session.execute(
        select(Card.tags, Deck.slug).join(Deck, Deck.id == Card.deck_id).where(Card.id == card_id)
    ).first()
    if row is None:
        return 0
    ours = {*(row.tags or ()), LEECH_TAG}
    wanted = [t for t in dict.fromkeys(tags) if t not in ours and not export_mark(t, row.slug)]
    have = marks_from_row(sql.mark(executor(session), user_id, card_id)).tags
    changes = 0
    added = [(t, card_actions.add_tag) for t in wanted if t not in have]
    removed = [(t, card_actions.remove_tag) for t in have if t not in wanted]
    for tag, change in added + removed:
        try:
            change(session, user_id, [card_id], tag, now=now)
        except FlashcardsError:
            continue
        changes = 1
    return changes


def _edit(
    session: Session,
    user_id: int,
    card_id: int,
    question: str,
    answer: str,
    explanation: str,
    *,
    now: datetime,
) -> int:
    editable = _editable(session, user_id, card_id)
    if editable is None:
        return 0
    deck, key = editable
    locale = session.scalar(
        select(Subscription.locale).where(
            Subscription.user_id == user_id, Subscription.deck_id == deck.id
        )
    )
    if locale is None:
        return 0
    text = session.get(CardText, (card_id, locale))
    if text is not None and (text.question, text.answer, text.explanation) == (
        question,
        answer,
        explanation,
    ):
        return 0
    card_editing.set_card(
        session, deck, key, locale=locale, question=question, answer=answer,
        explanation=explanation, now=now, create=False,
    )  # fmt: skip
    return 1


def delete(
    session: Session, user_id: int, note_ids: Iterable[int], sent: set[int], now: datetime
) -> dict[int, int]:
    """Notes deleted on the device: each retires its card where the person may edit it, as
    retiring it on the web does (history kept). The note ids retired, each with our card;
    the others are sent again (a card changed here since the device's last sync, or one of
    a deck they study only)."""
    retired: dict[int, int] = {}
    note_ids = list(note_ids)
    ours = ids.cards_of(session, user_id, note_ids, notes=True)
    for nid in note_ids:
        if nid not in ours or nid in sent:
            continue
        editable = _editable(session, user_id, ours[nid])
        if editable is None:
            continue
        try:
            card_editing.retire_card(session, *editable, now=now)
        except FlashcardsError:
            continue  # a team deck's last card: kept, and sent again
        retired[nid] = ours[nid]
    return retired


def _editable(session: Session, user_id: int, card_id: int) -> tuple[Deck, str] | None:
    """The card's deck and key, if the person may edit it here (`edit_place`)."""
    place = edit_place(session, user_id, card_id)
    if place is None:
        return None
    return session.scalars(select(Deck).where(Deck.slug == place.slug)).one(), place.key


def add(
    session: Session,
    user_id: int,
    notes: list[list[object]],
    cards: list[list[int]],
    now: datetime,
) -> int:
    """Notes the device added (`parse_rows`), each a card of a deck the person may edit here,
    where they study it in its default language (a card is added there first): a card of
    that deck, under the note's and its card's ids. How many were taken; the others stay on
    the device alone, as do their answers."""
    nids = [n[0] for n in notes if isinstance(n[0], int)]
    placed = {nid: (cid, did) for cid, _queue, _flag, nid, did, *_ in cards}
    # Ours already (an edit), or kept as the device sent it (a note not taken when it was
    # new); ids any card here already has stay the device's alone: each is one card's.
    known = set(ids.cards_of(session, None, nids, notes=True)) | kept.kept_ids(
        session, user_id, snapshot.NOTE, nids
    )
    in_use = ids.cards_of(session, None, (cid for cid, _ in placed.values()), notes=False)
    taken = 0
    for nid, fields, guid, tags in notes:
        assert isinstance(nid, int) and isinstance(fields, list) and isinstance(guid, str)
        assert isinstance(tags, str)
        if nid in known or nid not in placed or placed[nid][0] in in_use:
            continue  # an edit, a note whose card this sync did not bring, or a clash
        cid, did = placed[nid]
        known.add(nid)  # a row sent twice, or two notes sharing a card id: one card
        in_use[cid] = 0
        deck = _deck_to_add_to(session, user_id, did)
        if deck is None:
            continue
        question, answer, explanation = texts_of(*fields)
        # Our export's own tags (`export_mark`) say where a note came from.
        own_tags = [t for t in tags.split() if t != LEECH_TAG and not export_mark(t, deck.slug)]
        key = card_editing.new_card_key(session, deck)
        try:
            card_editing.set_card(
                session, deck, key, locale=deck.default_locale, question=question,
                answer=answer, explanation=explanation, tags=own_tags, now=now,
            )  # fmt: skip
        except FlashcardsError:
            continue  # text or tags the web would refuse too: left on the device
        card = session.scalars(select(Card).where(Card.deck_id == deck.id, Card.key == key)).one()
        card.anki_note_id, card.anki_card_id = nid, cid
        text = session.get(CardText, (card.id, deck.default_locale))
        if text is not None:
            text.anki_guid = guid[:64]
        taken += 1
    return taken


def _deck_to_add_to(session: Session, user_id: int, anki_deck_id: int) -> Deck | None:
    deck_id = ids.deck_of(anki_deck_id)
    deck = None if deck_id is None else session.get(Deck, deck_id)
    if deck is None:  # one of the device's own decks, studied here too (`adopted`)
        deck = session.scalar(
            select(Deck).where(Deck.owner_user_id == user_id, Deck.anki_deck_id == anki_deck_id)
        )
    if deck is None or not may_edit_deck(session, user_id, deck.owner_user_id, deck.owner_team_id):
        return None
    locale = session.scalar(
        select(Subscription.locale).where(
            Subscription.user_id == user_id, Subscription.deck_id == deck.id
        )
    )
    return deck if locale == deck.default_locale else None
