"""A file of a person's media folder as a response, for the web's `/media/<name>` and the
API's `/api/v1/media/<name>`: only the types `decks.media_refs` serves (never SVG or HTML),
sandboxed, and cached by its digest."""

from __future__ import annotations

import io

from flask import send_file
from sqlalchemy.orm import Session
from werkzeug.wrappers import Response

from ..decks import media_refs
from ..errors import NotFound
from ..people import media_folder

# A file is never a document: even opened on its own, it runs nothing and loads nothing.
FILE_CSP = "default-src 'none'; sandbox"


def media_response(session: Session, user_id: int, name: str) -> Response:
    """The person's file by this name (404 for none, or for a type never served)."""
    content_type = media_refs.served_type(name)
    found = media_folder.read_file(session, user_id, name) if content_type else None
    if found is None or content_type is None:
        raise NotFound("no such media file")
    sha1, data = found
    response = send_file(io.BytesIO(data), mimetype=content_type, etag=sha1, conditional=True)
    # Kept by the browser, and asked about again each time: a file a device replaces under
    # the same name shows at once, an unchanged one costs a 304 (its ETag is its digest).
    response.cache_control.public = False
    response.cache_control.private = True
    response.cache_control.no_cache = True
    response.headers["Content-Security-Policy"] = FILE_CSP
    return response
