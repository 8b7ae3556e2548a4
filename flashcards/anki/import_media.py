"""The images and sounds an imported package's cards use, for the importing person's media
folder (`people.media_folder`). No Flask.

Only files a card imported names are kept: a package's other files would take room in the
folder (and on every device it syncs to) for nothing. A name the folder already holds with
other content is not overwritten (cards studied before show it): the package's file takes a
name of its own (`media_folder.place`), and the imported cards name that, as Anki's
importer does with a name already taken. An empty file is no image or sound: it is left
out. All of it is decided before the importer's first write, quota included, with the
person's media folder locked so that a media sync cannot take a name in between.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote

from sqlalchemy.orm import Session

from ..decks import media_refs
from ..people import media_folder
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
    name where it needs one (`media_folder.place`). `AnkiPackageError` ("media_quota") when
    they do not fit."""
    media_folder.lock(session, user_id)
    named = {n for p in planned for texts in p.texts.values() for n in media_refs.names(*texts)}
    # A name as the package has it; Anki's own fields sometimes hold it percent-encoded.
    found = {n: n if n in coll.media else unquote(n) for n in named}
    found = {
        n: f
        for n, f in found.items()
        if coll.media.get(f) and media_refs.is_local_name(f)  # an empty file is none
    }
    files = {f: coll.media[f] for f in sorted(set(found.values()))}
    refs = {
        media_refs.MediaRef(part.kind, part.name)
        for p in planned
        for texts in p.texts.values()
        for text in texts
        for part in media_refs.split(text)
        if isinstance(part, media_refs.MediaRef) and part.name in found
    }
    final: dict[str, str] = {}  # the package's name -> the folder's
    result = MediaPlan(
        unused=max(coll.media_files - len(files), 0),
        # Not in the package, nor in the folder already (media synced from Anki, and a
        # package exported without them).
        missing=sorted(
            named - found.keys() - media_folder.live_files(session, user_id, named).keys()
        ),
        not_shown=len({r.name for r in refs if media_refs.media_type(r) is None}),
    )
    for name, (target, new) in media_folder.place(session, user_id, files).items():
        final[name] = target
        if new:
            result.changes.append(media_folder.Change(target, files[name]))
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
