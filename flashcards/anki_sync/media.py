"""Anki's media sync (`/msync/`): a person's media folder kept by the service, so that the
images and sounds of their notes travel between their devices. No Flask; functions take a
session and never commit.

Every change to a name (added, replaced, deleted) takes the person's next usn; a device asks
for the changes after the last usn it has, fetches the files it lacks, and sends its own
changes as zips of at most 25 files. Contents are stored once per person by SHA-1 (the digest
Anki's protocol names files by), and a deleted name keeps its row so that devices learn of
the deletion. Limits are Anki's own server's: 100 MiB a file, 25 files and a 50 KiB file
list a zip, names of at most 255 bytes in NFC without a path separator.
"""

from __future__ import annotations

import hashlib
import io
import json
import unicodedata
import zipfile
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from ..storage.models import MediaBlob, MediaFile, User
from .wire import Refused, bad_request

MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_FILES_IN_ZIP = 25
MAX_LIST_BYTES = 50 * 1024
MAX_NAME_BYTES = 255
CHANGES_PER_ANSWER = 1000
MiB = 1024 * 1024


class MediaQuotaExceeded(Exception):
    """An upload that would take the person's live media over their quota (nothing kept)."""

    def __init__(self, quota_mb: int) -> None:
        super().__init__(f"media quota of {quota_mb} MB reached")
        self.quota_mb = quota_mb


@dataclass(frozen=True)
class Change:
    """One entry of an uploaded zip: a file's new content, or its deletion (`data` None)."""

    name: str
    data: bytes | None


def last_usn(session: Session, user_id: int) -> int:
    """The usn of the person's latest media change (0: none yet)."""
    found = session.scalar(select(func.max(MediaFile.usn)).where(MediaFile.user_id == user_id))
    return found or 0


def changes_after(session: Session, user_id: int, usn: object) -> list[list[Any]]:
    """`mediaChanges`: [name, usn, sha1] of each change after `usn`, oldest first; the sha1
    is empty for a deletion."""
    if not isinstance(usn, int) or isinstance(usn, bool):
        raise bad_request("mediaChanges needs lastUsn, a whole number")
    rows = session.execute(
        select(MediaFile.name, MediaFile.usn, MediaFile.sha1, MediaFile.size)
        .where(MediaFile.user_id == user_id, MediaFile.usn > usn)
        .order_by(MediaFile.usn)
        .limit(CHANGES_PER_ANSWER)
    )
    return [[r.name, r.usn, r.sha1 if r.size > 0 else ""] for r in rows]


def sanity(session: Session, user_id: int, local: object) -> str:
    """`mediaSanity`: "OK" when the device holds as many files as the service."""
    if not isinstance(local, int) or isinstance(local, bool):
        raise bad_request("mediaSanity needs local, a whole number")
    count = session.scalar(
        select(func.count())
        .select_from(MediaFile)
        .where(MediaFile.user_id == user_id, MediaFile.size > 0)
    )
    return "OK" if count == local else "mediaSanity"


def read_upload(body: bytes, *, max_total: int) -> list[Change]:
    """An `uploadChanges` zip: its `_meta` list of [name, entry or null] and the entries it
    names, every limit checked before anything is written (400 otherwise)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        with archive.open("_meta") as listing:
            raw = listing.read(MAX_LIST_BYTES + 1)
        if len(raw) > MAX_LIST_BYTES:
            raise bad_request("the zip's file list is too long")
        entries = json.loads(raw)
        if not isinstance(entries, list) or len(entries) > MAX_FILES_IN_ZIP:
            raise bad_request(f"a zip holds a list of at most {MAX_FILES_IN_ZIP} files")
        total = 0
        changes: list[Change] = []
        for entry in entries:
            if not (isinstance(entry, list) and len(entry) == 2):
                raise bad_request("each file is [name, entry in the zip or null]")
            name, member = entry
            check_name(name)
            if member is None or member == "":  # older clients send "" for a deletion
                changes.append(Change(name, None))
                continue
            if not isinstance(member, str):
                raise bad_request("a file's entry in the zip is a string")
            with archive.open(member) as file:
                # Read up to one byte past the limit: the header's sizes are not trusted.
                data = file.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                raise bad_request(f"{name}: a media file is at most 100 MiB")
            if not data:
                raise bad_request(f"{name}: an empty file")
            total += len(data)
            if total > max_total:
                raise bad_request("the zip's files are over the body limit")
            changes.append(Change(name, data))
    except (zipfile.BadZipFile, KeyError, ValueError, EOFError, OSError) as exc:
        # KeyError: an entry the list names is missing; ValueError: JSON, or zip's own.
        raise bad_request(f"not a media zip: {exc}") from None
    names = [c.name for c in changes]
    if len(set(names)) != len(names):
        raise bad_request("a zip names a file twice")
    return changes


def check_name(name: object) -> str:
    """A media file's name as Anki's server takes it (400 otherwise)."""
    if not isinstance(name, str) or not name:
        raise bad_request("a media file's name is a non-empty string")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise bad_request(f"a media file's name is at most {MAX_NAME_BYTES} bytes")
    if not unicodedata.is_normalized("NFC", name):
        raise bad_request("a media file's name is in Unicode NFC")
    if any(c in name for c in "/\\\x00") or name in (".", ".."):
        raise bad_request("a media file's name is a name, not a path")
    if any(unicodedata.category(c) == "Cs" for c in name):
        raise bad_request("a media file's name is valid Unicode")
    return name


def apply_upload(
    session: Session, user_id: int, changes: list[Change], *, quota_mb: int, now: datetime
) -> tuple[int, int]:
    """`uploadChanges`: each change takes the next usn, unless it changes nothing (the same
    content again, or a name already gone). (files processed, the usn now). Raises
    MediaQuotaExceeded, before the caller commits, when the live files would pass the quota."""
    # One upload at a time per person, so that two of them never take the same usn (SQLite's
    # writers are one at a time already).
    session.execute(select(User.id).where(User.id == user_id).with_for_update())
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
        if change.data is None:
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
            session.add(
                MediaFile(
                    user_id=user_id,
                    name=change.name,
                    sha1=sha1,
                    size=len(change.data),
                    usn=usn,
                    mtime=now,
                )
            )
        else:
            if live:
                dropped.add(found.sha1)
            found.sha1, found.size, found.usn, found.mtime = sha1, len(change.data), usn, now
    session.flush()
    _drop_unused_blobs(session, user_id, dropped)
    used = session.scalar(
        select(func.coalesce(func.sum(MediaFile.size), 0)).where(MediaFile.user_id == user_id)
    )
    if (used or 0) > quota_mb * MiB:
        raise MediaQuotaExceeded(quota_mb)
    return len(changes), usn


def _keep_blob(session: Session, user_id: int, sha1: str, data: bytes, kept: set[str]) -> None:
    """The content stored, once: `kept` holds what this upload has added so far."""
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


def download_zip(session: Session, user_id: int, names: object) -> bytes:
    """`downloadFiles`: the named live files as a stored zip, entries "0", "1"... and a
    `_meta` map of entry to name. 409 for a name the person has no file by (as Anki's own
    server answers), 400 for more than a zip's worth of names."""
    if (
        not isinstance(names, list)
        or not all(isinstance(n, str) for n in names)
        or not 0 < len(names) <= MAX_FILES_IN_ZIP
    ):
        raise bad_request(f"downloadFiles needs files, 1 to {MAX_FILES_IN_ZIP} names")
    rows = {
        r.name: r.sha1
        for r in session.execute(
            select(MediaFile.name, MediaFile.sha1).where(
                MediaFile.user_id == user_id, MediaFile.size > 0, MediaFile.name.in_(names)
            )
        )
    }
    missing = [n for n in names if n not in rows]
    if missing:
        raise Refused(HTTPStatus.CONFLICT, f"no media file {missing[0]!r}")
    found = session.execute(
        select(MediaBlob.sha1, MediaBlob.data).where(
            MediaBlob.user_id == user_id, MediaBlob.sha1.in_(set(rows.values()))
        )
    )
    contents = {sha1: data for sha1, data in found}
    out = io.BytesIO()
    listing: dict[str, str] = {}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for index, name in enumerate(names):
            archive.writestr(str(index), contents[rows[name]])
            listing[str(index)] = name
        archive.writestr("_meta", json.dumps(listing))
    return out.getvalue()
