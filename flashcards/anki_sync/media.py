"""Anki's media sync (`/msync/`): the protocol over a person's media folder
(`people.media_folder`), so that the images and sounds of their notes travel between their
devices. No Flask; functions take a session and never commit.

A device asks for the changes after the last usn it has, fetches the files it lacks, and
sends its own changes as zips of at most 25 files. Limits are Anki's own server's: 100 MiB a
file, 25 files and a 50 KiB file list a zip.
"""

from __future__ import annotations

import io
import json
import zipfile
from http import HTTPStatus
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..people.media_folder import MAX_FILE_BYTES, Change, InvalidMediaName, check_name
from ..storage.models import MediaBlob, MediaFile
from .wire import Refused, bad_request

MAX_FILES_IN_ZIP = 25
MAX_LIST_BYTES = 50 * 1024
CHANGES_PER_ANSWER = 1000


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
            try:
                check_name(name)
            except InvalidMediaName as exc:
                raise bad_request(exc.detail) from None
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
