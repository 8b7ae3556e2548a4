"""A person's collection as Anki's sync sees it (`meta`), and a device's sync under way,
kept in the database between its requests. No Flask.

Anki's own server holds one transaction and one in-memory state from a sync's `start` to its
`finish`; several instances cannot, so the state is a row (`AnkiSyncSession`) keyed by the
device and the client's session id `s`, and each request is its own transaction.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from ..anki.tables import table
from ..anki.timing import CRT
from ..people import media_folder
from ..storage.models import (
    AnkiCollection,
    AnkiDevice,
    AnkiSyncSession,
    Card,
    CardMark,
    CardText,
    DeckText,
    ReviewLog,
    SchedulerSettings,
    Subscription,
    User,
)
from . import kept
from .devices import Device
from .wire import Refused


@dataclass(frozen=True)
class Meta:
    """The server's side of Anki's `meta` answer (see `as_json`)."""

    mod: int  # milliseconds: the latest change to what the person's collection holds
    scm: int  # milliseconds: the collection's schema time
    usn: int
    empty: bool
    now: datetime
    media_usn: int = 0  # the person's latest media change (`media_folder.last_usn`)

    def as_json(self) -> dict[str, Any]:
        return {
            "mod": self.mod,
            "scm": self.scm,
            "usn": self.usn,
            "ts": int(self.now.timestamp()),
            "msg": "",
            "cont": True,
            "hostNum": 0,
            "empty": self.empty,
            "media_usn": self.media_usn,
        }


def to_ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def collection(session: Session, user_id: int, now: datetime) -> AnkiCollection:
    """The person's collection stamps, made on first need: its schema time is then. Two
    devices of theirs asking at once make one row (the second insert does nothing)."""
    found = session.get(AnkiCollection, user_id)
    if found is not None:
        return found
    collections = table(AnkiCollection)
    insert = sqlite_insert if session.get_bind().dialect.name == "sqlite" else postgresql_insert
    session.execute(
        insert(collections)
        .values(user_id=user_id, scm=to_ms(now), usn=0, mod=0, fingerprint="", log_marks={})
        .on_conflict_do_nothing()
    )
    made = session.get(AnkiCollection, user_id)
    assert made is not None
    return made


def day_numbers(session: Session, user_id: int, now: datetime) -> tuple[int, dict[str, Any]]:
    """The `crt` and the settings (`creationOffset`, `rollover`) the person's devices count
    days with (`anki.timing`)."""
    crt = collection(session, user_id, now).crt
    user = session.get(User, user_id)
    rollover = user.day_start_hour if user is not None else 4
    return (CRT if crt is None else crt), {"creationOffset": 0, "rollover": rollover}


@dataclass(frozen=True)
class Fingerprint:
    """`fingerprint`'s parts: a digest of all but the answers (32 of its 64 hex digits), a
    digest of the answers' newest row id, count and latest time (8: an undone answer and a
    new one can leave the first two as they were, as SQLite gives a freed id again), and
    that newest id and count (12 each)."""

    rest: str
    answers: str
    newest_log: int
    logs: int

    @classmethod
    def parse(cls, text: str) -> Fingerprint | None:
        try:
            return cls(text[:32], text[32:40], int(text[40:52], 16), int(text[52:64], 16))
        except ValueError:
            return None


def fingerprint(session: Session, user_id: int) -> str:
    """What decides the person's collection: their answers, subscriptions (with their
    overrides and pace), settings, clock, and the cards and texts of the decks they study.
    Equal fingerprints, equal collections; a few indexed reads, not the collection. The
    answers' part is kept readable (`Fingerprint`): a collection that changed by new answers
    alone can be brought up to date card by card (`download`)."""
    subscribed = select(Subscription.deck_id).where(Subscription.user_id == user_id)
    # Three statements: each maximum is one step down its index, the count a scan of the
    # narrowest; a statement with all three reads every row's time.
    of_user = ReviewLog.user_id == user_id
    count = session.scalar(select(func.count()).select_from(ReviewLog).where(of_user)) or 0
    newest = session.scalar(select(func.max(ReviewLog.id)).where(of_user))
    latest = session.scalar(select(func.max(ReviewLog.reviewed_at)).where(of_user))
    parts: list[Any] = [
        session.execute(
            select(User.timezone, User.day_start_hour).where(User.id == user_id)
        ).one_or_none(),
        session.execute(
            select(SchedulerSettings).where(SchedulerSettings.user_id == user_id)
        ).scalar_one_or_none(),
        session.execute(
            select(
                Card.deck_id,
                func.count(Card.id),
                func.max(Card.updated_at),
                func.max(Card.retired_at),
                func.count(Card.retired_at),
            )
            .where(Card.deck_id.in_(subscribed))
            .group_by(Card.deck_id)
            .order_by(Card.deck_id)
        ).all(),
        session.scalar(
            select(func.max(CardText.updated_at))
            .join(Card, Card.id == CardText.card_id)
            .where(Card.deck_id.in_(subscribed))
        ),
        session.execute(
            select(DeckText.deck_id, DeckText.locale, DeckText.title, DeckText.description)
            .where(DeckText.deck_id.in_(subscribed))
            .order_by(DeckText.deck_id, DeckText.locale)
        ).all(),
        [
            {c.key: getattr(sub, c.key) for c in table(Subscription).columns}
            for sub in session.scalars(
                select(Subscription)
                .where(Subscription.user_id == user_id)
                .order_by(Subscription.deck_id)
            )
        ],
        # Suspended, buried and flagged cards go to devices as Anki keeps them (few rows).
        session.execute(
            select(table(CardMark)).where(CardMark.user_id == user_id).order_by(CardMark.card_id)
        ).all(),
        kept.fingerprint(session, user_id),
    ]
    settings = parts[1]
    if settings is not None:
        parts[1] = {c.key: getattr(settings, c.key) for c in table(SchedulerSettings).columns}
    rest = hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
    return f"{rest}{answers_digest(newest, count, latest)}{newest or 0:012x}{count:012x}"


def answers_digest(newest: int | None, count: int, latest: datetime | None) -> str:
    """The fingerprint's digest of the answers' newest row id, count and latest time."""
    return hashlib.sha256(repr((newest, count, latest)).encode()).hexdigest()[:8]


def has_cards(session: Session, user_id: int) -> bool:
    """Whether the collection holds a card: of a deck they study, or one a device made."""
    ours = session.scalar(
        select(Card.id)
        .join(Subscription, Subscription.deck_id == Card.deck_id)
        .where(Subscription.user_id == user_id, Card.retired_at.is_(None))
        .limit(1)
    )
    return ours is not None or kept.holds_cards(session, user_id)


def meta(session: Session, user_id: int, now: datetime) -> Meta:
    """The collection's stamps. Its `mod` is the one devices were last given while nothing
    changed since; after a change it is now, so that a device syncs to fetch it."""
    stamps = collection(session, user_id, now)
    mod = current_mod(stamps, fingerprint(session, user_id), now)
    return Meta(mod=mod, scm=stamps.scm, usn=stamps.usn, empty=not has_cards(session, user_id),
                now=now, media_usn=media_folder.last_usn(session, user_id))  # fmt: skip


def current_mod(stamps: AnkiCollection, print_: str, now: datetime) -> int:
    """The collection's `mod` (see `meta`), given its `fingerprint` now."""
    if stamps.mod and print_ == stamps.fingerprint:
        return stamps.mod
    return max(to_ms(now), stamps.mod + 1, stamps.scm)


def begin(session: Session, device: Device, session_key: str, now: datetime) -> None:
    """A sync of the device begins (`meta`): any other of its syncs is abandoned."""
    if not session_key:
        raise Refused(HTTPStatus.BAD_REQUEST, "missing session id")
    row = session.get(AnkiSyncSession, device.id)
    if row is None:
        session.add(
            AnkiSyncSession(
                device_id=device.id,
                session_key=session_key,
                started_at=now,
                updated_at=now,
                state={},
            )
        )
    else:
        row.session_key = session_key
        row.started_at = row.updated_at = now
        row.state = {}
    session.flush()


def current(session: Session, device: Device, session_key: str) -> AnkiSyncSession:
    """The device's sync under way named by `session_key`; a 409 (Anki's "another sync is
    running") when it has none or another one, whoever's that session id is."""
    row = session.get(AnkiSyncSession, device.id, with_for_update=True)
    if row is None or not session_key or row.session_key != session_key:
        raise Refused(HTTPStatus.CONFLICT, "no sync under way with that session id")
    return row


def end_all(session: Session, user_id: int) -> None:
    """Every sync of the person's devices under way ends (a full upload replaced what they
    were syncing)."""
    mine = select(AnkiDevice.id).where(AnkiDevice.user_id == user_id)
    session.execute(delete(AnkiSyncSession).where(AnkiSyncSession.device_id.in_(mine)))


def end(session: Session, device: Device) -> None:
    row = session.get(AnkiSyncSession, device.id)
    if row is not None:
        session.delete(row)
        session.flush()
