"""The images and sounds an imported package's cards use, for the importing person's media
folder (`people.media_folder`). No Flask.

Only files a card imported names are kept: a package's other files would take room in the
folder (and on every device it syncs to) for nothing. A name the folder already holds with
other content is not overwritten (cards studied before show it): the package's file takes a
name of its own, `stem-<first 8 of its SHA-1>.ext` (with a number after it in the rare case
that is taken too), and the imported cards name that, as Anki's importer does with a name
already taken. An empty file is no image or sound: it is left out. All of it is decided
before the importer's first write, quota included, with the person's media folder locked
so that a media sync cannot take a name in between.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
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
    unused: int = 0  # files in the package that no imported card uses
    missing: list[str] = field(default_factory=list)  # names cards use that it lacks
    not_shown: int = 0  # files kept for Anki that the pages do not show (SVG...)


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
    media_folder.lock(session, user_id)
    named = {n for p in planned for texts in p.texts.values() for n in media_refs.names(*texts)}
    # A name as the package has it; Anki's own fields sometimes hold it percent-encoded.
    found = {n: n if n in coll.media else unquote(n) for n in named}
    found = {
        n: f
        for n, f in found.items()
        if coll.media.get(f) and media_refs.is_local_name(f)  # an empty file is none
    }
    digests = {f: hashlib.sha1(coll.media[f]).hexdigest() for f in sorted(set(found.values()))}
    refs = {
        media_refs.MediaRef(part.kind, part.name)
        for p in planned
        for texts in p.texts.values()
        for text in texts
        for part in media_refs.split(text)
        if isinstance(part, media_refs.MediaRef) and part.name in found
    }
    result = MediaPlan(
        unused=max(coll.media_files - len(digests), 0),
        missing=sorted(named - found.keys()),
        not_shown=len({r.name for r in refs if media_refs.media_type(r) is None}),
    )
    # Most names are free or hold this content already: their first two candidates are read
    # in one go, and a file's later candidates only if both are taken by other content.
    have = media_folder.live_files(
        session, user_id, [c for f, d in digests.items() for c in list(_names_for(f, d))[:2]]
    )
    placed: dict[str, str] = {}  # a name in the folder -> the digest this import gives it
    final: dict[str, str] = {}  # the package's name -> the folder's
    for name, sha1 in digests.items():
        candidates = list(_names_for(name, sha1))
        if all(placed.get(c, have.get(c, sha1)) != sha1 for c in candidates[:2]):
            have.update(media_folder.live_files(session, user_id, candidates[2:]))
        target = next(
            (c for c in candidates if placed.get(c, have.get(c, sha1)) == sha1), candidates[-1]
        )
        final[name], placed[target] = target, sha1
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


def text_only(planned: list[PlannedCard]) -> int:
    """The planned cards without images, for a deck that keeps no media; a card whose
    question was an image alone is left out. How many were."""
    _rewrite(planned, media_refs.without_images)
    kept = [p for p in planned if all(texts[0] for texts in p.texts.values())]
    dropped = len(planned) - len(kept)
    planned[:] = kept
    return dropped


def _rewrite(planned: list[PlannedCard], change: Callable[[str], str]) -> None:
    for p in planned:
        p.texts = {loc: (change(q), change(a), change(e)) for loc, (q, a, e) in p.texts.items()}


def _names_for(name: str, sha1: str) -> Iterator[str]:
    """The file's own name, then names of its own, shortened to the folder's limit."""
    yield name
    path = PurePosixPath(name)
    suffix = path.suffix if len(path.suffix) <= 16 else ""
    stem = name[: len(name) - len(suffix)] if suffix else name
    for n in range(1, 100):
        mark = f"-{sha1[:8]}" + (f"-{n}" if n > 1 else "")
        while len(f"{stem}{mark}{suffix}".encode()) > media_folder.MAX_NAME_BYTES:
            stem = stem[:-1]
        yield f"{stem}{mark}{suffix}"
    yield f"{sha1}{suffix}"  # the content's own name: taken only by the same content
