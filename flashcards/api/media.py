"""GET /api/v1/media/<name>: a file of the caller's media folder, for a client showing the
images and sounds a card's text names as `[image:name]` and `[sound:name]`."""

from __future__ import annotations

from werkzeug.wrappers import Response

from ..http.media_files import media_response
from ..http.request_db import db
from . import bp
from .auth import current_user_id
from .openapi import Answer, documented

_BINARY = {"type": "string", "format": "binary"}


@bp.get("/media/<path:name>")
@documented(
    "getMediaFile",
    "A file of the caller's media folder: an image or sound their cards name.",
    {
        200: Answer(
            "The file, as its type (PNG, JPEG, GIF, WebP, AVIF, BMP; MP3, Ogg, WAV, MP4 "
            "audio, AAC, FLAC; MP4, WebM or Ogg video).",
            content={
                "image/*": {"schema": _BINARY},
                "audio/*": {"schema": _BINARY},
                "video/*": {"schema": _BINARY},
            },
            headers={"ETag": {"schema": {"type": "string"}}},
        ),
        304: Answer("Unchanged since the ETag sent in If-None-Match."),
        206: Answer(
            "The byte range asked for with Range (for players that seek).",
            content={"application/octet-stream": {"schema": _BINARY}},
        ),
    },
    description="A card's text names a file as `[image:name]` or `[sound:name]`; this "
    "answers the caller's own file by that name, as Anki's media sync and `.apkg` imports "
    "keep it. 404 for a name they have no file by, and for types never served (SVG and "
    "other documents that can carry script).",
)
def media_file(name: str) -> Response:
    return media_response(db(), current_user_id(), name)
