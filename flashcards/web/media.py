"""A person's images and sounds on the pages: the `card_text` filter shows a card's media
tokens (`anki.media_refs`) as images and players, and `/media/<name>` serves the files from
the person's own media folder, from our origin, so the CSP stays as it is."""

from __future__ import annotations

import io

from flask import send_file, url_for
from markupsafe import Markup, escape
from werkzeug.wrappers import Response

from ..anki import media_refs
from ..errors import NotFound
from ..http.request_db import db
from ..people import media_folder
from . import bp
from .auth import login_required, user_id

# A file is named by its content's digest (its ETag): an hour's caching costs nothing when
# it changes, as its ETag does.
MAX_AGE = 3600
# A file is never a document: even opened on its own, it runs nothing and loads nothing.
FILE_CSP = "default-src 'none'; sandbox"


@bp.app_template_filter("card_text")
def card_text(text: str) -> Markup:
    """Card text, escaped, with its images and sounds shown. A token of a type browsers do
    not play safely (SVG, which can carry script) stays text."""
    if "[" not in text:
        return escape(text)
    out: list[str] = []
    for part in media_refs.split(text):
        if isinstance(part, str):
            out.append(escape(part))
            continue
        kind = media_refs.media_type(part)
        src = escape(url_for("web.media_file", name=part.name))
        if kind is None:
            out.append(escape(media_refs.token(part.kind, part.name)))
        elif part.kind == media_refs.IMAGE:
            out.append(f'<img class="card-media" src="{src}" alt="{escape(part.name)}">')
        elif kind.startswith("video/"):
            out.append(
                f'<video class="card-media" controls preload="metadata" src="{src}"></video>'
            )
        else:
            label = escape(part.name)
            out.append(f'<audio controls preload="none" src="{src}" aria-label="{label}"></audio>')
    return Markup("".join(out))


@bp.get("/media/<path:name>")
@login_required
def media_file(name: str) -> Response:
    content_type = media_refs.served_type(name)
    found = media_folder.read_file(db(), user_id(), name) if content_type else None
    if found is None or content_type is None:
        raise NotFound("no such media file")
    sha1, data = found
    response = send_file(
        io.BytesIO(data), mimetype=content_type, etag=sha1, max_age=MAX_AGE, conditional=True
    )
    response.cache_control.public = False
    response.cache_control.private = True
    response.headers["Content-Security-Policy"] = FILE_CSP
    return response
