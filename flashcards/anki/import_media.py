"""The images and sounds an imported package's cards use, for the importing person's media
folder (`people.media_folder`). No Flask.

Only files a card imported names are kept: a package's other files would take room in the
folder (and on every device it syncs to) for nothing. A name the folder already holds with
other content is not overwritten (cards studied before show it): the package's file takes a
name of its own, `stem-<first 8 of its SHA-1>.ext`, and the imported cards name that, as
Anki's importer does with a name already taken. All of it is decided before the importer's
first write, quota included.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import unquote

from sqlalchemy.orm import Session

from ..people import media_folder
from . import media_refs
from .errors import AnkiPackageError
from .planning import PlannedCard
from .reader import Collection


@dataclass
class MediaPlan:
    changes: list[media_folder.Change] = field(default_factory=list)
    used: int = 0  # files the imported cards use (some perhaps in the folder already)
    unused: int = 0  # files in the package that no imported card uses


def plan(
    session: Session,
    user_id: int,
    coll: Collection,
    planned: list[PlannedCard],
    *,
    quota_mb: int,
) -> MediaPlan:
    """The files to add for the planned cards, whose texts are changed to name a file's new
    name where it needs one. `AnkiPackageError` ("media_quota") when they do not fit."""
    named = {n for p in planned for texts in p.texts.values() for n in media_refs.names(*texts)}
    # A name as the package has it; Anki's own fields sometimes hold it percent-encoded.
    found = {n: n if n in coll.media else unquote(n) for n in named}
    found = {n: f for n, f in found.items() if f in coll.media and media_refs.is_token_name(f)}
    digests = {f: hashlib.sha1(coll.media[f]).hexdigest() for f in set(found.values())}
    have = media_folder.live_files(
        session, user_id, [*digests, *(_own_name(f, d) for f, d in digests.items())]
    )
    result = MediaPlan(used=len(digests), unused=max(coll.media_files - len(digests), 0))
    final: dict[str, str] = {}  # the package's name -> the folder's
    for name, sha1 in digests.items():
        target = name if have.get(name, sha1) == sha1 else _own_name(name, sha1)
        final[name] = target
        if have.get(target) != sha1:
            result.changes.append(media_folder.Change(target, coll.media[name]))
    added = sum(len(c.data or b"") for c in result.changes)
    if media_folder.used_bytes(session, user_id) + added > quota_mb * media_folder.MiB:
        raise AnkiPackageError(
            f"this package's media would take you past your media quota of {quota_mb} MB",
            kind="media_quota",
            limit=quota_mb,
        )
    renames = {token: final[f] for token, f in found.items() if final[f] != token}
    _rewrite(planned, lambda text: media_refs.renamed(text, renames))
    return result


def text_only(planned: list[PlannedCard]) -> None:
    """The planned cards without images, for a deck that keeps no media."""
    _rewrite(planned, media_refs.without_images)


def _rewrite(planned: list[PlannedCard], change: Callable[[str], str]) -> None:
    for p in planned:
        p.texts = {loc: (change(q), change(a), change(e)) for loc, (q, a, e) in p.texts.items()}


def _own_name(name: str, sha1: str) -> str:
    path = PurePosixPath(name)
    own = f"{path.stem}-{sha1[:8]}{path.suffix}"
    # Within the folder's name limit: the stem is shortened, the suffix kept.
    while len(own.encode()) > media_folder.MAX_NAME_BYTES:
        path = PurePosixPath(path.stem[:-1] + path.suffix)
        own = f"{path.stem}-{sha1[:8]}{path.suffix}"
    return own
