"""/api/v1/media/<name>: a file of the caller's media folder, for a client showing the images
and sounds a card's text names as `[image:name]` and `[sound:name]` (GET), or adding one
(POST), as a card's page does."""

from __future__ import annotations

from flask import current_app, request
from pydantic import Field
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response

from ..decks import media_refs
from ..errors import BodyTooLarge, InvalidInput
from ..http.media_files import media_response
from ..http.request_db import begin_writing, db
from ..people import media_folder
from ..storage.retry import retrying
from ..storage.schema import utcnow
from . import bp
from .auth import current_user_id
from .models import Reply, reply
from .openapi import Answer, documented


class StoredMedia(Reply):
    name: str = Field(
        description="The name the file has in the caller's media folder: the one asked for, "
        "or one of its own when that name holds other content. Cards name it as "
        "[image:name] or [sound:name]."
    )
    size: int = Field(ge=1, description="Bytes.")


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


@bp.post("/media/<path:name>")
@documented(
    "addMediaFile",
    "Add an image or a sound to the caller's media folder.",
    {200: Answer("Stored; the name it has.", StoredMedia)},
    413,
    422,
    description="The file is the raw request body (any Content-Type). Only the types the "
    "pages show are taken (PNG, JPEG, GIF, WebP, AVIF, BMP images; MP3, Ogg, WAV, M4A, AAC, "
    "FLAC sounds; MP4, WebM video), up to the upload limit and Anki's 100 MiB a file, within "
    "the caller's media quota (413 past either). A name that holds other content already "
    "is not replaced: the file gets a name of its own, which the answer gives. Devices "
    "fetch it at their next media sync.",
    body_content={"application/octet-stream": {"schema": _BINARY}},
)
def add_media_file(name: str) -> Response:
    user_id = current_user_id()
    media_refs.shown_kind(name)  # before the body is read
    limit = min(int(current_app.config["MAX_UPLOAD_BYTES"]), media_folder.MAX_FILE_BYTES)
    # Set before anything reads the body: Werkzeug then stops reading at the limit.
    request.max_content_length = limit
    try:
        data = request.get_data(cache=False)
    except RequestEntityTooLarge:
        raise BodyTooLarge(f"a media file is at most {limit} bytes") from None
    if not data:
        raise InvalidInput("send the file as the request body", field="body")
    session = begin_writing()
    quota = int(current_app.config["MEDIA_QUOTA_MB"])

    def store() -> str:
        return media_folder.add_file(session, user_id, name, data, quota_mb=quota, now=utcnow())

    stored = retrying(session, store)
    return reply(StoredMedia(name=stored, size=len(data)))
