"""A device's later changes to its decks studied here (`adopted`): notes edited there give
their cards new texts, renames go both ways, deletions retire cards, an upload replaces
what devices share. No Flask."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ..anki.errors import AnkiPackageError
from ..anki.export_notes import note_guid
from ..anki.importer import card_tags
from ..anki.names import deck_title
from ..anki.planning import plan_cards
from ..anki.reader import AnkiCard, Collection
from ..anki.timing import CRT
from ..decks import own_decks
from ..srs import card_moves
from ..srs.subscriptions import unsubscribe
from ..storage.models import Card, CardText, Deck, DeckText, Subscription, User
from . import adopted, ids, kept, snapshot
from . import device_rows_read as read
from .wire import is_whole

NOTE_MOD = kept.MOD_INDEX[snapshot.NOTE]


def delete_own_deck(session: Session, user_id: int, slug: str) -> None:
    """`own_decks.delete_own_deck`, and when the deck stands for a device's deck, that deck
    goes too (unless it has subdecks): devices delete it at their next sync, as they delete
    its notes and cards, which no collection built for them holds any more."""
    deck = own_decks.find_own_deck(session, user_id, slug)
    if deck.anki_deck_id is not None and not _has_subdecks(session, user_id, deck.anki_deck_id):
        kept.drop(session, user_id, snapshot.DECK, [deck.anki_deck_id])
    own_decks.delete_own_deck(session, user_id, slug)


def _has_subdecks(session: Session, user_id: int, anki_deck_id: int) -> bool:
    """Whether a device's deck has subdecks: deleting it alone would leave them out of
    Anki's deck list (it shows a deck under its parent), so it stays there, empty."""
    decks = kept.payloads(session, user_id, snapshot.DECK)
    name = (decks.get(anki_deck_id) or {}).get("name")
    if not isinstance(name, str):
        return False
    return any(
        isinstance(d, dict) and str(d.get("name", "")).startswith(f"{name}::")
        for oid, d in decks.items()
        if oid != anki_deck_id
    )


def retext(session: Session, user_id: int, note_rows: list[list[Any]], now: datetime) -> int:
    """Notes a device sent (schema-11 rows), or one edited here, that are of cards studied
    here: the cards take their new text and tags; how many changed. A note older than the
    one kept (edited here since) changes nothing: the kept one goes back to the device. A
    card whose note no longer makes it keeps its text."""
    sent = {n[0]: n for n in note_rows}
    if not sent:
        return 0
    if kept.holds_notes(session, user_id):
        held = kept.payloads(session, user_id, snapshot.NOTE, sent)
        sent = {nid: n for nid, n in sent.items() if not _older(n, held.get(nid))}
    mine = read.device_decks(user_id)  # a deck left here too: its texts stay the note's
    ours: list[Card] = []
    wanted = sorted(sent)
    for i in range(0, len(wanted), ids.BATCH):
        ours.extend(
            session.scalars(
                select(Card).where(
                    Card.anki_note_id.in_(wanted[i : i + ids.BATCH]),
                    Card.anki_ord.is_not(None),
                    Card.deck_id.in_(mine),
                )
            )
        )
    if not ours:
        return 0
    user = session.get(User, user_id)
    assert user is not None
    notes = {
        n.id: n
        for n in (read.note_of(sent[c.anki_note_id]) for c in ours if c.anki_note_id in sent)
        if n is not None
    }
    notetypes = read.notetypes(session, user_id, {n.mid for n in notes.values()})
    stand_ins = [
        AnkiCard(c.anki_card_id or 0, c.anki_note_id or 0, 0, c.anki_ord or 0,
                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {})
        for c in ours
    ]  # fmt: skip
    coll = Collection(CRT, {}, notetypes, {}, list(notes.values()), stand_ins)
    try:
        planner = plan_cards(coll, user.locale, Counter(), kept.LIMIT, by_template=True)
    except AnkiPackageError:
        return 0
    planned = {p.anki_cards[0].id: p for p in planner.planned.values() if len(p.anki_cards) == 1}
    texts: dict[int, CardText] = {}
    card_ids = [c.id for c in ours]
    for i in range(0, len(card_ids), ids.BATCH):
        texts.update(
            (t.card_id, t)
            for t in session.scalars(
                select(CardText)
                .join(Card, Card.id == CardText.card_id)
                .join(Deck, Deck.id == Card.deck_id)
                .where(
                    CardText.card_id.in_(card_ids[i : i + ids.BATCH]),
                    CardText.locale == Deck.default_locale,
                )
            )
        )
    changed = 0
    for card in ours:
        p = planned.get(card.anki_card_id or 0)
        text = texts.get(card.id)
        if p is None or len(p.texts) != 1 or text is None:
            continue
        question, answer, explanation = read.text_of(p)
        tags = card_tags(p)
        if (text.question, text.answer, text.explanation) != (question, answer, explanation):
            text.question, text.answer, text.explanation = question, answer, explanation
            text.updated_at = now
            card.updated_at = now
            changed += 1
        if list(card.tags) != tags:
            card.tags = tags
    return changed


def _older(row: list[Any], held: Any) -> bool:
    """Whether a note row is older than the kept one (by `mod`, as `kept.keep` decides)."""
    if not isinstance(held, list) or len(held) <= NOTE_MOD or len(row) <= NOTE_MOD:
        return False
    mod, kept_mod = row[NOTE_MOD], held[NOTE_MOD]
    return isinstance(mod, int | float) and isinstance(kept_mod, int | float) and mod < kept_mod


def move(
    session: Session, user_id: int, cards: list[list[int]], sent: set[int], now: datetime
) -> int:
    """Cards of a device's notes that it moved to another deck of its own (`device_marks`
    rows: id, queue, flag, note, deck): moved here too, to the deck standing for that one
    (made if need be), with their progress and history; how many. A card changed here since
    the device's last sync keeps its deck, as one moved into a filtered deck does."""
    wanted = {c[0]: c[4] for c in cards if c[0] not in sent}
    if not wanted:
        return 0
    user = session.get(User, user_id)
    assert user is not None
    found: list[tuple[int, int, int]] = []
    cids = sorted(wanted)
    for i in range(0, len(cids), ids.BATCH):
        found.extend(
            (card_id, cid, did)
            for card_id, cid, did in session.execute(
                select(Card.id, Card.anki_card_id, Deck.anki_deck_id)
                .join(Deck, Deck.id == Card.deck_id)
                .where(
                    Card.anki_card_id.in_(cids[i : i + ids.BATCH]),
                    Card.anki_ord.is_not(None),
                    Card.retired_at.is_(None),
                    Card.deck_id.in_(read.studied_decks(user_id)),
                )
            )
            if cid is not None and did is not None and wanted[cid] != did
        )
    if not found:
        return 0
    targets = kept.payloads(session, user_id, snapshot.DECK, {wanted[cid] for _, cid, _ in found})
    moved = 0
    for card_id, cid, _did in found:
        target = targets.get(wanted[cid])
        if not isinstance(target, dict) or target.get("dyn"):
            continue  # a filtered deck (the card's home is the same), or no deck we know
        deck = adopted.deck_for(session, user, wanted[cid], str(target.get("name", "")), now)
        if deck is not None:
            card_moves.move_card(session, card_id, deck, now=now)
            moved += 1
    return moved


def retitle(session: Session, user_id: int, decks: Iterable[Any], sent: dict[int, Any]) -> None:
    """Decks a device sent (`applyChanges`' deck objects), before they are kept: those
    studied here that it renamed take the new name. A deck it sends unrenamed (its study
    counts changed) keeps a name given here, as does one renamed here since its last sync
    (`sent`: the names this sync gives it, by deck id)."""
    names = {
        d["id"]: d["name"]
        for d in decks
        # Before `kept.take_changes` checks them: anything else is its 400.
        if isinstance(d, dict)
        and is_whole(d.get("id"))
        and isinstance(d.get("name"), str)
        and d["name"].strip()
    }
    if not names:
        return
    before = kept.payloads(session, user_id, snapshot.DECK, names)
    found = session.scalars(
        select(Deck).where(Deck.owner_user_id == user_id, Deck.anki_deck_id.in_(list(names)))
    )
    for deck in found:
        assert deck.anki_deck_id is not None
        name = names[deck.anki_deck_id]
        held = before.get(deck.anki_deck_id)
        held_name = held.get("name") if isinstance(held, dict) else None
        if name == held_name:
            continue
        if deck.anki_deck_id in sent and sent[deck.anki_deck_id] != held_name:
            continue  # renamed here since: ours goes to the device
        text = session.get(DeckText, (deck.id, deck.default_locale))
        if text is not None:
            text.title = deck_title([name], name.strip())


def forget_decks(
    session: Session, user_id: int, deck_ids: Iterable[int], now: datetime
) -> set[int]:
    """A device deleted these decks (with their notes and cards): each of the person's decks
    standing for one retires the cards its notes made (history kept) and stands for no
    device deck any more: with cards added here it is an own deck as any other, which
    devices get again; without, the person stops studying it. The Anki card ids retired."""
    wanted = sorted(set(deck_ids))
    if not wanted:
        return set()
    found = session.scalars(
        select(Deck).where(Deck.owner_user_id == user_id, Deck.anki_deck_id.in_(wanted))
    ).all()
    retired: set[int] = set()
    for deck in found:
        live = session.execute(
            select(Card.id, Card.anki_card_id, Card.anki_ord).where(
                Card.deck_id == deck.id, Card.retired_at.is_(None)
            )
        ).all()
        theirs = [(card_id, cid) for card_id, cid, o in live if o is not None]
        for i in range(0, len(theirs), ids.BATCH):
            part = [card_id for card_id, _ in theirs[i : i + ids.BATCH]]
            session.execute(update(Card).where(Card.id.in_(part)).values(retired_at=now))
        if session.get(Subscription, (user_id, deck.id)) is not None:
            retired.update(cid for _, cid in theirs if cid is not None)
        deck.anki_deck_id = None
        if len(theirs) == len(live):
            unsubscribe(session, user_id, deck)
    return retired


def shown_notes(session: Session, user_id: int, note_ids: Iterable[int]) -> set[int]:
    """Which of these kept notes devices get: those with a card, ours or kept (`projection`
    leaves out a note with none, as Anki's own check deletes it)."""
    wanted = sorted(set(note_ids))
    shown: set[int] = set()
    for i in range(0, len(wanted), ids.BATCH):
        shown.update(
            nid
            for nid in session.scalars(
                select(Card.anki_note_id).where(
                    Card.anki_note_id.in_(wanted[i : i + ids.BATCH]),
                    Card.anki_ord.is_not(None),
                    Card.retired_at.is_(None),
                    Card.deck_id.in_(read.studied_decks(user_id)),
                )
            )
            if nid is not None
        )
    shown.update(row[1] for row in kept.cards_of_notes(session, user_id, wanted).values())
    return shown


def retire(
    session: Session, user_id: int, *, notes: Iterable[int], cards: Iterable[int], now: datetime
) -> dict[int, int]:
    """A device deleted these notes or cards: their cards here are retired (history kept);
    the note of each Anki card retired."""
    mine = read.studied_decks(user_id)
    retired: dict[int, int] = {}
    for column, oids in ((Card.anki_note_id, sorted(set(notes))),
                         (Card.anki_card_id, sorted(set(cards)))):  # fmt: skip
        for i in range(0, len(oids), ids.BATCH):
            found = session.execute(
                select(Card.id, Card.anki_card_id, Card.anki_note_id).where(
                    column.in_(oids[i : i + ids.BATCH]),
                    Card.deck_id.in_(mine),
                    Card.anki_ord.is_not(None),
                    Card.retired_at.is_(None),
                )
            ).all()
            if found:
                session.execute(
                    update(Card).where(Card.id.in_([c for c, _, _ in found])).values(retired_at=now)
                )
                retired.update((cid, nid) for _, cid, nid in found if cid and nid)
    return retired


def made_here(session: Session, user_id: int, device_usn: int) -> dict[int, int]:
    """The live cards added here to decks standing for a device's (`note_edits.add_card`:
    their kept note has the guid our export gives the card) that a device whose collection
    is at `device_usn` never got (sent later, or not yet), by our id, with their Anki card
    id. Read before an upload replaces the kept notes."""
    rows = session.execute(
        select(Card.id, Card.key, Card.anki_note_id, Card.anki_card_id, Deck.slug,
               Deck.default_locale)
        .join(Deck, Deck.id == Card.deck_id)
        .where(Deck.id.in_(read.studied_decks(user_id)), Card.anki_ord.is_not(None),
               Card.retired_at.is_(None))
    ).all()  # fmt: skip
    notes = kept.payloads(session, user_id, snapshot.NOTE, {r.anki_note_id for r in rows})
    sent = snapshot.recorded_of(
        session, user_id, oids={r.anki_card_id for r in rows if r.anki_card_id}, since=device_usn
    )
    made: dict[int, int] = {}
    for r in rows:
        note = notes.get(r.anki_note_id)
        ours = (
            isinstance(note, list)
            and len(note) > 1
            and note[1] == note_guid(r.slug, r.key, r.default_locale)
        )
        # Recorded as sent before the device's last sync: it got it. Forgotten since (a usn
        # below 0: another device's change) says nothing of this one: kept, as never got.
        got = sent.get((snapshot.CARD, r.anki_card_id or 0))
        never_got = got is None or got[1] < 0 or got[1] >= device_usn
        if ours and r.anki_card_id is not None and never_got:
            made[r.id] = r.anki_card_id
    return made


def match_upload(
    session: Session, user_id: int, decks: set[int], present: set[int], now: datetime,
    made: dict[int, int] | None = None,
) -> None:  # fmt: skip
    """A device uploaded its whole collection, which its devices now share: decks studied
    here it no longer holds (`decks`: its deck ids) are forgotten (`forget_decks`), cards of
    its notes it no longer holds (`present`: its card ids) retired, as deleted there, and
    retired ones it holds again live again. Cards added here that it never got (`made`,
    `made_here`) stay, as cards of ours."""
    stay = [card_id for card_id, cid in (made or {}).items() if cid not in present]
    for i in range(0, len(stay), ids.BATCH):
        session.execute(
            update(Card)
            .where(Card.id.in_(stay[i : i + ids.BATCH]))
            .values(anki_note_id=None, anki_card_id=None, anki_ord=None)
        )
    mine = read.studied_decks(user_id)
    gone_decks = session.scalars(
        select(Deck.anki_deck_id).where(Deck.id.in_(mine), Deck.anki_deck_id.not_in(decks))
    ).all()
    forget_decks(session, user_id, [d for d in gone_decks if d is not None], now)
    found = session.execute(
        select(Card.id, Card.anki_card_id, Card.retired_at).where(
            Card.deck_id.in_(mine), Card.anki_ord.is_not(None)
        )
    ).all()
    gone = [i for i, cid, retired in found if retired is None and cid not in present]
    back = [i for i, cid, retired in found if retired is not None and cid in present]
    for card_ids, value in ((gone, now), (back, None)):
        for i in range(0, len(card_ids), ids.BATCH):
            part = card_ids[i : i + ids.BATCH]
            session.execute(update(Card).where(Card.id.in_(part)).values(retired_at=value))
