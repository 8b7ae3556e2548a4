"""What Anki sync keeps between requests: devices, collections, sessions and their objects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..schema import Base, utcnow


class AnkiDevice(Base):
    """An Anki client signed in to sync (`hostKey`): only the SHA-256 of its host key is
    stored. Deleting the row (the tokens page, or a new password with "sign out everywhere")
    ends the device's syncing."""

    __tablename__ = "anki_devices"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # What the client says it is ("anki,26.09.3 (abcdef),lin"), to tell devices apart.
    client_version: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_sync_at: Mapped[datetime | None] = mapped_column(default=None)


class AnkiCollection(Base):
    """What Anki's sync calls a person's collection's stamps. `scm` (milliseconds) is the
    collection's schema time: a device holding another one must make a full sync first."""

    __tablename__ = "anki_collections"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    scm: Mapped[int] = mapped_column(BigInteger)
    usn: Mapped[int] = mapped_column(Integer, default=0)
    # The `mod` devices were last given, and a fingerprint of what the collection held then:
    # while the fingerprint stays, a device with that `mod` has nothing to fetch.
    mod: Mapped[int] = mapped_column(BigInteger, default=0)
    fingerprint: Mapped[str] = mapped_column(String(64), default="")
    # For each usn a device may hold (its `minUsn`), the newest review-log row it has: the
    # answers written after it are the ones to send.
    log_marks: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)
    # The collection's creation time (seconds) its devices count days from: None for ours
    # (`anki.timing.CRT`); after a full upload, one that makes the device's own numbers true.
    crt: Mapped[int | None] = mapped_column(BigInteger, default=None)


class AnkiSyncSession(Base):
    """A device's sync under way, between its requests: in the database, so that its
    requests may reach different instances. One per device; a new sync replaces it, and a
    request naming another session id (`session_key`, the client's `s`) is refused."""

    __tablename__ = "anki_sync_sessions"

    device_id: Mapped[int] = mapped_column(
        ForeignKey("anki_devices.id", ondelete="CASCADE"), primary_key=True
    )
    session_key: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column()
    # What the protocol's next step needs (its cursor, the client's minimum usn...).
    state: Mapped[dict[str, object]] = mapped_column(JSON, default=dict)


class AnkiSyncObject(Base):
    """What devices last got of one object of a person's collection (a card, note, deck,
    options group or note type, by its Anki id): a digest of its content and the usn at
    which it changed. A sync compares the collection built from our data with these to find
    what changed since a device's `minUsn`; a NULL digest is a deletion (Anki's grave)."""

    __tablename__ = "anki_sync_objects"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    oid: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    usn: Mapped[int] = mapped_column(Integer)
    digest: Mapped[str | None] = mapped_column(String(40))


class AnkiCollectionFile(Base):
    """The last collection file a device downloaded, zstd-compressed, with what it was built
    from: while the person's collection and usn stay the same, the next device gets these
    bytes instead of a new build (as Anki's own server sends its stored file)."""

    __tablename__ = "anki_collection_files"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    fingerprint: Mapped[str] = mapped_column(String(64))
    usn: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer)  # uncompressed bytes
    # Megabytes: loaded only when asked for (`anki_sync.download.kept_data`).
    data: Mapped[bytes] = mapped_column(LargeBinary, deferred=True)


class AnkiKeptObject(Base):
    """An object a device made that the service does not model, kept as Anki sent it (its
    schema-11 wire form) and given back in every collection built for the person's devices
    (`anki_sync.kept`): a note type, deck or options group of its own, a note we did not take
    as a card (with its cards and answers). `usn`: the sync that last changed it."""

    __tablename__ = "anki_kept_objects"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    oid: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    usn: Mapped[int] = mapped_column(Integer)
    payload: Mapped[Any] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
