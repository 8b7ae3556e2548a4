"""A person's media folder: the images and sounds their cards show, kept by name as Anki
keeps a collection's media folder. Anki's media sync (`anki_sync.media`), `.apkg` import and
export, and the web's `/media/<name>` all read and write it here. No Flask; functions take a
session and never commit.

Every change to a name (added, replaced, deleted) takes the person's next usn, which is what
devices ask for changes after. Contents are stored once per person by SHA-1 (the digest
Anki's protocol names files by), and a deleted name keeps its row so that devices learn of
the deletion. Names follow Anki's server: at most 255 bytes in NFC without a path separator.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ..errors import FlashcardsError, InvalidInput
from ..storage.models import MediaBlob, MediaFile, User

MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_NAME_BYTES = 255
MiB = 1024 * 1024


class MediaQuotaExceeded(FlashcardsError):
    """Changes that would take the person's live media over their quota (nothing kept)."""

    def __init__(self, quota_mb: int) -> None:
        super().__init__(f"media quota of {quota_mb} MB reached")
        self.quota_mb = quota_mb


class InvalidMediaName(InvalidInput):
    """A file name Anki's server would refuse (a path, not NFC, too long...)."""


@dataclass(frozen=True)
class Change:
    """A file's new content, or its deletion (`data` None)."""

    name: str
    data: bytes | None


def check_name(name: object) -> str:
    """A media file's name as Anki's server takes it (`InvalidMediaName` otherwise)."""
    if not isinstance(name, str) or not name:
        raise InvalidMediaName("a media file's name is a non-empty string")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise InvalidMediaName(f"a media file's name is at most {MAX_NAME_BYTES} bytes")
    if not unicodedata.is_normalized("NFC", name):
        raise InvalidMediaName("a media file's name is in Unicode NFC")
    if any(c in name for c in "/\\\x00") or name in (".", ".."):
        raise InvalidMediaName("a media file's name is a name, not a path")
    if any(unicodedata.category(c) == "Cs" for c in name):
        raise InvalidMediaName("a media file's name is valid Unicode")
    return name


def is_valid_name(name: str) -> bool:
    try:
        check_name(name)
    except InvalidMediaName:
        return False
    return True


def last_usn(session: Session, user_id: int) -> int:
    """The usn of the person's latest media change (0: none yet)."""
    found = session.scalar(select(func.max(MediaFile.usn)).where(MediaFile.user_id == user_id))
    return found or 0


def live_files(session: Session, user_id: int, names: Iterable[str]) -> dict[str, str]:
    """The SHA-1 of each of these names the person has a file by (deleted ones left out)."""
    wanted = sorted(set(names))
    found: dict[str, str] = {}
    for i in range(0, len(wanted), 500):
        rows = session.execute(
            select(MediaFile.name, MediaFile.sha1).where(
                MediaFile.user_id == user_id,
                MediaFile.size > 0,
                MediaFile.name.in_(wanted[i : i + 500]),
            )
        )
        found.update({name: sha1 for name, sha1 in rows})
    return found


def contents(session: Session, user_id: int, sha1s: Iterable[str]) -> dict[str, bytes]:
    """The stored content of each of these digests the person has."""
    wanted = set(sha1s)
    if not wanted:
        return {}
    rows = session.execute(
        select(MediaBlob.sha1, MediaBlob.data).where(
            MediaBlob.user_id == user_id, MediaBlob.sha1.in_(wanted)
        )
    )
    return {sha1: data for sha1, data in rows}


def read_file(session: Session, user_id: int, name: str) -> tuple[str, bytes] | None:
    """(SHA-1, content) of the person's file by this name, None if they have none."""
    # One read: every image and sound on a page is a request of its own.
    found = session.execute(
        select(MediaFile.sha1, MediaBlob.data)
        .join(
            MediaBlob,
            (MediaBlob.user_id == MediaFile.user_id) & (MediaBlob.sha1 == MediaFile.sha1),
        )
        .where(MediaFile.user_id == user_id, MediaFile.name == name, MediaFile.size > 0)
    ).first()
    return None if found is None else (found.sha1, found.data)


def used_bytes(session: Session, user_id: int) -> int:
    used = session.scalar(
        select(func.coalesce(func.sum(MediaFile.size), 0)).where(MediaFile.user_id == user_id)
    )
    return int(used or 0)


def names_for(name: str, sha1: str) -> Iterator[str]:
    """Names for a file of this content, in the order to try them: its own, then names of
    its own, `stem-<first 8 of its SHA-1>.ext` (with a number after it if that is taken
    too), within the folder's name limit; last the digest's own name."""
    yield name
    path = PurePosixPath(name)
    suffix = path.suffix if len(path.suffix) <= 16 else ""
    stem = name[: len(name) - len(suffix)] if suffix else name
    for n in range(1, 100):
        mark = f"-{sha1[:8]}" + (f"-{n}" if n > 1 else "")
        while len(f"{stem}{mark}{suffix}".encode()) > MAX_NAME_BYTES:
            stem = stem[:-1]
        yield f"{stem}{mark}{suffix}"
    yield f"{sha1}{suffix}"  # the content's own name: taken only by the same content


def place(
    session: Session, user_id: int, files: dict[str, bytes], placed: dict[str, str] | None = None
) -> dict[str, tuple[str, bool]]:
    """Where each file goes: its name, unless the folder (or an earlier file of `placed`, a
    name to the digest given it) holds other content there, then a name of its own
    (`names_for`); never over another file, as Anki's importer does. Each file's name and
    whether it is new there. Call it with the folder locked (`lock`)."""
    placed = {} if placed is None else placed
    digests = {name: hashlib.sha1(data).hexdigest() for name, data in files.items()}
    # Most names are free or hold this content already: their first two candidates are read
    # in one go, and a file's later candidates only if both are taken by other content.
    have = live_files(
        session, user_id, [c for f, d in digests.items() for c in list(names_for(f, d))[:2]]
    )
    out: dict[str, tuple[str, bool]] = {}
    for name, sha1 in digests.items():
        candidates = list(names_for(name, sha1))
        if all(placed.get(c, have.get(c, sha1)) != sha1 for c in candidates[:2]):
            have.update(live_files(session, user_id, candidates[2:]))
        target = next(
            (c for c in candidates if placed.get(c, have.get(c, sha1)) == sha1), candidates[-1]
        )
        placed[target] = sha1
        out[name] = (target, have.get(target) != sha1)
    return out


def add_file(
    session: Session, user_id: int, name: str, data: bytes, *, quota_mb: int, now: datetime
) -> str:
    """One file into the folder (`place`d: a name holding other content is not taken over);
    the name it has there. `InvalidMediaName`, `MediaQuotaExceeded`."""
    check_name(name)
    if not data:
        raise InvalidMediaName("an empty file is no image or sound")
    if len(data) > MAX_FILE_BYTES:  # what no Anki device would take
        raise InvalidMediaName("a media file is at most 100 MiB")
    lock(session, user_id)
    target, new = place(session, user_id, {name: data})[name]
    if new:
        apply_changes(session, user_id, [Change(target, data)], quota_mb=quota_mb, now=now)
    return target


def lock(session: Session, user_id: int) -> None:
    """The person's media folder, for this transaction alone: one writer at a time per
    person, so that two never take the same usn or the same name (SQLite's writers are one
    at a time already)."""
    session.execute(select(User.id).where(User.id == user_id).with_for_update())


def apply_changes(
    session: Session, user_id: int, changes: list[Change], *, quota_mb: int, now: datetime
) -> tuple[int, int]:
    """Each change takes the next usn, unless it changes nothing (the same content again, or
    a name already gone). (files processed, the usn now). Raises `MediaQuotaExceeded`, before
    the caller commits, when the live files would pass the quota."""
    lock(session, user_id)
    usn = last_usn(session, user_id)
    names = [c.name for c in changes]
    existing = {
        f.name: f
        for f in session.scalars(
            select(MediaFile).where(MediaFile.user_id == user_id, MediaFile.name.in_(names))
        )
    }
    dropped: set[str] = set()
    kept: set[str] = set()
    for change in changes:
        found = existing.get(change.name)
        live = found is not None and found.size > 0
        if not change.data:  # a deletion (an empty file is none either)
            if found is None or not live:
                continue
            usn += 1
            dropped.add(found.sha1)
            found.size, found.usn, found.mtime = 0, usn, now
            continue
        sha1 = hashlib.sha1(change.data).hexdigest()
        if found is not None and live and found.sha1 == sha1:
            continue
        usn += 1
        _keep_blob(session, user_id, sha1, change.data, kept)
        if found is None:
            found = MediaFile(user_id=user_id, name=change.name, sha1=sha1, usn=usn, mtime=now)
            found.size = len(change.data)
            session.add(found)
            existing[change.name] = found
        else:
            if live:
                dropped.add(found.sha1)
            found.sha1, found.size, found.usn, found.mtime = sha1, len(change.data), usn, now
    session.flush()
    _drop_unused_blobs(session, user_id, dropped)
    if used_bytes(session, user_id) > quota_mb * MiB:
        raise MediaQuotaExceeded(quota_mb)
    return len(changes), usn


def _keep_blob(session: Session, user_id: int, sha1: str, data: bytes, kept: set[str]) -> None:
    """The content stored, once: `kept` holds what these changes have added so far."""
    if sha1 not in kept and session.get(MediaBlob, (user_id, sha1)) is None:
        session.add(MediaBlob(user_id=user_id, sha1=sha1, data=data))
    kept.add(sha1)


def _drop_unused_blobs(session: Session, user_id: int, sha1s: set[str]) -> None:
    if not sha1s:
        return
    still_used = set(
        session.scalars(
            select(MediaFile.sha1).where(
                MediaFile.user_id == user_id, MediaFile.size > 0, MediaFile.sha1.in_(sha1s)
            )
        )
    )
    unused = sha1s - still_used
    if unused:
        session.execute(
            delete(MediaBlob).where(MediaBlob.user_id == user_id, MediaBlob.sha1.in_(unused))
        )
