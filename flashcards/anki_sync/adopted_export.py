"""A deck standing for a device's (`adopted`) as an Anki package: its notes as Anki made them
(their note types, fields, templates and styling) under the device's ids, its cards with
the person's progress if asked, so that Anki takes the package for the same notes (its own
collection updates them instead of finding them in conflict) and a fresh collection gets
them as they were. No Flask."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from ..anki import schema
from ..anki.collection_file import Collection
from ..anki.export import (
    ExportedPackage,
    Progress,
    collection_conf,
    deck_rows,
    export_deck,
    package,
    scheduling_context,
)
from ..anki.import_rows import title_of
from ..errors import NotFound
from ..storage.models import Deck
from . import adopted, kept, snapshot

PACKAGE_USN = -1  # "not yet synced", as a package's rows are


def export_any_deck(
    session: Session,
    deck_id: int,
    *,
    locales: list[str] | None,
    user_id: int | None = None,
    with_scheduling: bool = False,
    now: datetime,
    progress: Progress | None = None,
) -> ExportedPackage:
    """`anki.export_deck`, and a deck standing for a device's as its notes were made there."""
    deck = session.get(Deck, deck_id)
    if deck is None:
        raise NotFound("no such deck")
    owner = deck.owner_user_id
    if deck.anki_deck_id is None or owner is None or locales not in (None, [deck.default_locale]):
        return export_deck(session, deck_id, locales=locales, user_id=user_id,
                           with_scheduling=with_scheduling, now=now, progress=progress)  # fmt: skip
    mod_ms = int(now.timestamp() * 1000)
    chosen = [deck.default_locale]
    sched = scheduling_context(session, deck, user_id, chosen, now) if with_scheduling else None
    cards, revlog, _ = adopted.card_rows(session, deck, sched, usn=PACKAGE_USN, only=None)
    held = kept.payloads(session, owner, snapshot.NOTE, {c[1] for c in cards})
    notes = [_unsynced(n) for n in held.values() if isinstance(n, list)]
    present = {n[0] for n in notes}
    cards = [c for c in cards if c[1] in present]  # a card whose note is gone: none to show
    shown = {c[0] for c in cards}
    revlog = [r for r in revlog if r[1] in shown]
    notetypes: list[dict[str, Any]] = [
        t
        for t in kept.payloads(session, owner, snapshot.NOTETYPE, {n[2] for n in notes}).values()
        if isinstance(t, dict)
    ]
    card_count = len(cards)
    added = adopted.added_here(session, deck, None)
    if added:
        # Cards added here as notes of ours (`note_edits.add_card` with an explanation).
        rows = deck_rows(
            session, deck, locales=chosen, scheduling=(lambda _chosen: sched) if sched else None,
            mod_ms=mod_ms, deck_id_base=deck.anki_deck_id - 1,
            conf_id=schema.PACKAGE_CONFIG_ID, only=added, siblings=True,
        )  # fmt: skip
        notes += rows.notes
        cards += rows.cards
        revlog += rows.revlog
        notetypes += rows.notetypes
        card_count += rows.card_count
    title = title_of(session, deck)
    decks = [
        schema.deck(schema.DEFAULT_DECK_ID, "Default", mod_ms // 1000),
        schema.deck(deck.anki_deck_id, title, mod_ms // 1000, "", schema.PACKAGE_CONFIG_ID),
    ]
    collection = Collection(collection_conf(card_count, sched), decks, [], mod_ms, notes, cards,
                            revlog, notetypes=notetypes)  # fmt: skip
    return package(session, [deck], f"{deck.slug}-{deck.default_locale}.apkg", sched, mod_ms,
                   collection)  # fmt: skip


def _unsynced(note: list[Any]) -> tuple[Any, ...]:
    return (*note[: snapshot.NOTE_USN], PACKAGE_USN, *note[snapshot.NOTE_USN + 1 :])
