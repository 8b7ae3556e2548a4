"""Anki devices: the host key a client signs in for (`hostKey`), looked up on each request,
listed and revoked on the tokens page. No Flask.

A key is 32 random bytes in hex, shown to the device once; only its SHA-256 is stored, as an
API token's is.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ..people.token_hashes import token_hash
from ..storage.models import AnkiDevice
from ..storage.schema import MAX_ID

MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class Device:
    id: int
    user_id: int


@dataclass(frozen=True)
class DeviceInfo:
    id: int
    client_version: str
    created_at: datetime
    last_sync_at: datetime | None

    @property
    def client_name(self) -> str:
        return client_name(self.client_version)


def issue_key(session: Session, user_id: int, *, client_version: str, now: datetime) -> str:
    """A new device for the user: its host key, to be sent once."""
    key = secrets.token_hex(32)
    session.add(
        AnkiDevice(
            user_id=user_id,
            key_hash=token_hash(key),
            client_version=client_version[:200],
            created_at=now,
        )
    )
    session.flush()
    return key


def device_for_key(session: Session, key: str) -> Device | None:
    """The device signed in with this host key, or None (unknown, revoked, or no key)."""
    if not key or len(key) > MAX_KEY_LENGTH:
        return None
    row = session.execute(
        select(AnkiDevice.id, AnkiDevice.user_id).where(AnkiDevice.key_hash == token_hash(key))
    ).first()
    return None if row is None else Device(row.id, row.user_id)


def mark_synced(session: Session, device_id: int, *, client_version: str, now: datetime) -> None:
    session.execute(
        update(AnkiDevice)
        .where(AnkiDevice.id == device_id)
        .values(last_sync_at=now, client_version=client_version[:200])
    )


def list_devices(session: Session, user_id: int) -> list[DeviceInfo]:
    rows = session.execute(
        select(
            AnkiDevice.id, AnkiDevice.client_version, AnkiDevice.created_at, AnkiDevice.last_sync_at
        )
        .where(AnkiDevice.user_id == user_id)
        .order_by(AnkiDevice.created_at.desc(), AnkiDevice.id.desc())
    )
    return [DeviceInfo(r.id, r.client_version, r.created_at, r.last_sync_at) for r in rows]


def revoke_device(session: Session, user_id: int, device_id: int) -> bool:
    """Sign one of the user's own devices out; False if they have no device with that id."""
    if not 0 < device_id <= MAX_ID:
        return False
    result = session.execute(
        delete(AnkiDevice).where(AnkiDevice.id == device_id, AnkiDevice.user_id == user_id)
    )
    return bool(getattr(result, "rowcount", 0))


def revoke_all(session: Session, user_id: int) -> int:
    result = session.execute(delete(AnkiDevice).where(AnkiDevice.user_id == user_id))
    return int(getattr(result, "rowcount", 0))


def client_name(client_version: str) -> str:
    """A device's client as a person knows it: "anki,26.09.3 (abcdef),lin" is "Anki 26.09.3"."""
    parts = client_version.split(",")
    if len(parts) >= 2 and parts[0].strip():
        name = parts[0].strip()
        version = parts[1].split("(")[0].strip()
        label = {"anki": "Anki", "ankidroid": "AnkiDroid", "ankimobile": "AnkiMobile"}.get(
            name.lower(), name
        )
        return f"{label} {version}".strip()
    return client_version.strip()
