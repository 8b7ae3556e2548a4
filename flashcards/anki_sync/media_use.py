"""Which of a person's media files are in use, and the rest deleted: Anki's Check Media, for
the folder the service keeps (`people.media_folder`). No Flask.

A file is in use when a card of a deck the person studies or owns names it (`decks.media_refs`), or
a note their devices made and the service keeps (`kept`) does, in its HTML; a name starting
with "_" (a note type's font) always is, as in Anki. Deleting the
others is a change like a device's: each takes a usn, so devices delete them at their next
media sync.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from ..anki.reader import names_in_fields
from ..decks import media_refs
from ..people import media_folder
from ..storage.models import AnkiKeptObject, Card, CardText, Deck, MediaFile, Subscription
from . import snapshot
from .device_notes import FIELDS


@dataclass(frozen=True)
class FileUse:
    name: str
    size: int
    used: bool


@dataclass(frozen=True)
class MediaUse:
    files: list[FileUse]  # by name

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def unused(self) -> list[FileUse]:
        return [f for f in self.files if not f.used]


def media_use(session: Session, user_id: int) -> MediaUse:
    used = used_names(session, user_id)
    rows = session.execute(
        select(MediaFile.name, MediaFile.size)
        .where(MediaFile.user_id == user_id, MediaFile.size > 0)
        .order_by(MediaFile.name)
    )
    # As Anki's Check Media: a name starting with "_" is a note type's (a font its templates
    # load), never unused.
    return MediaUse(
        [FileUse(name, size, name in used or name.startswith("_")) for name, size in rows]
    )


def used_names(session: Session, user_id: int) -> set[str]:
    """Every file name the person's cards and their devices' kept notes name."""
    columns = (CardText.question, CardText.answer, CardText.explanation)
    # The decks they study, and their own ones even if they study them no more.
    theirs = or_(
        Card.deck_id.in_(select(Subscription.deck_id).where(Subscription.user_id == user_id)),
        Card.deck_id.in_(select(Deck.id).where(Deck.owner_user_id == user_id)),
    )
    texts = session.execute(
        select(*columns)
        .join(Card, Card.id == CardText.card_id)
        .where(
            theirs,
            Card.retired_at.is_(None),
            or_(*(column.contains("[") for column in columns)),
        )
    )
    names = {name for row in texts for name in media_refs.names(*row)}
    notes = session.scalars(
        select(AnkiKeptObject.payload).where(
            AnkiKeptObject.user_id == user_id, AnkiKeptObject.kind == snapshot.NOTE
        )
    )
    names |= names_in_fields(
        payload[FIELDS]
        for payload in notes
        if isinstance(payload, list) and len(payload) > FIELDS and isinstance(payload[FIELDS], str)
    )
    return names


def delete_unused(session: Session, user_id: int, *, now: datetime) -> int:
    """Delete the files nothing uses; how many."""
    media_folder.lock(session, user_id)
    unused = media_use(session, user_id).unused
    changes = [media_folder.Change(f.name, None) for f in unused]
    if changes:
        # Deletions only: the quota can only be further off.
        media_folder.apply_changes(session, user_id, changes, quota_mb=1 << 30, now=now)
    return len(changes)
