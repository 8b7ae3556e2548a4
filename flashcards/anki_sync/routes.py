"""The sync edge: `/sync/<method>` and `/msync/<method>` at the service's root, where Anki's
clients look for them under the address a person enters ("Self-hosted sync server").

No web session and no CSRF token (a client signs each request with its host key, which no
browser sends on its own); every answer is the protocol's: a zstd body with
`anki-original-size`, or a bare status (see `wire`). Each request is its own unit of work;
a refused one writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from http import HTTPStatus
from typing import Any

from flask import Blueprint, Flask, current_app, g, request
from flask_babel import force_locale, format_decimal
from flask_babel import gettext as _
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge
from werkzeug.wrappers import Response

from ..api.errors import UNAVAILABLE_RETRY_AFTER
from ..errors import FlashcardsError, NotAuthenticated, TooMuchContention
from ..http.request_db import begin_writing, db
from ..http.request_policies import signed_in, token_key, token_limiter
from ..people import media_folder
from ..people.ratelimit import RateLimited
from ..storage.engine import database_unavailable
from ..storage.models import User
from ..storage.schema import utcnow
from . import devices, download, media, normal, sessions, upload, wire
from .devices import Device

bp = Blueprint("anki_sync", __name__)
PREFIXES = ("/sync/", "/msync/")


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)


def _header() -> wire.SyncHeader:
    header: wire.SyncHeader | None = g.get("anki_sync_header")
    if header is None:
        header = g.anki_sync_header = wire.parse_header(request.headers.get(wire.HEADER))
    return header


def _body() -> bytes:
    limit = int(current_app.config["SYNC_MAX_BYTES"])
    # Above the site-wide body limit: werkzeug then cuts the stream at this one, with or
    # without a Content-Length, and `read_body` checks both sizes as it decompresses.
    request.max_content_length = limit
    try:
        return wire.read_body(request.stream, max_bytes=limit)
    except RequestEntityTooLarge:
        raise wire.Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body over the limit") from None


def _answer(data: bytes) -> Response:
    return _compressed(wire.compress(data), len(data))


def _compressed(body: bytes, size: int) -> Response:
    return Response(
        body, content_type="application/octet-stream", headers={wire.ORIGINAL_SIZE: str(size)}
    )


def _device(header: wire.SyncHeader) -> Device:
    found = devices.device_for_key(db(), header.key)
    if found is None:
        raise wire.Refused(HTTPStatus.FORBIDDEN, "unknown or revoked host key")
    return found


def host_key(header: wire.SyncHeader, body: bytes) -> Response:
    """Sign in with the account's email and password, counted as the web's and the API's
    sign-ins are; a wrong email and a wrong password are the same 403."""
    request_ = wire.json_object(body)
    email, password = request_.get("u"), request_.get("p")
    if not isinstance(email, str) or not isinstance(password, str):
        raise wire.bad_request("hostKey needs u and p")
    user = signed_in(email, password)
    # A device key is a token to the account: made no faster than the API's tokens.
    token_limiter().reserve(token_key(user.id))
    session = begin_writing()
    key = devices.issue_key(session, user.id, client_version=header.client, now=utcnow())
    session.commit()
    return _answer(wire.encode_json({"key": key}))


def meta(header: wire.SyncHeader, body: bytes) -> Response:
    wire.json_object(body)  # {"v": 11, "cv": ...}: the header already said both
    device = _device(header)
    session = begin_writing()
    now = utcnow()
    stamps = sessions.meta(session, device.user_id, now)
    sessions.begin(session, device, header.session, now)
    devices.mark_synced(session, device.id, client_version=header.client, now=now)
    session.commit()
    return _answer(wire.encode_json(stamps.as_json()))


def download_collection(header: wire.SyncHeader, body: bytes) -> Response:
    """The person's whole collection. Not tied to the sync's session: a client makes a new
    HTTP client, with a new session id, for a full sync; any sync of the device ends."""
    wire.json_object(body)
    device = _device(header)
    session = begin_writing()
    now = utcnow()
    made = download.collection_file(session, device.user_id, now=now)
    sessions.end(session, device)
    devices.mark_synced(session, device.id, client_version=header.client, now=now)
    session.commit()
    return _compressed(made.compressed, made.size)


def upload_collection(header: wire.SyncHeader, body: bytes) -> Response:
    """The device's whole collection, replacing what the person's devices share (`upload`).
    Read whole before anything is written; one transaction."""
    device = _device(header)
    uploaded = upload.read(body, utcnow())
    session = begin_writing()
    now = utcnow()
    upload.take(session, device, uploaded, now)
    devices.mark_synced(session, device.id, client_version=header.client, now=now)
    session.commit()
    return _answer(b"OK")


def _finish(
    session: Session, device: Device, session_key: str, body: dict[str, Any], now: datetime
) -> int:
    mod = normal.finish(session, device, session_key, now)
    devices.mark_synced(session, device.id, client_version=_header().client, now=now)
    return mod


def abort(header: wire.SyncHeader, body: bytes) -> Response:
    device = _device(header)
    session = begin_writing()
    sessions.current(session, device, header.session)
    sessions.end(session, device)
    session.commit()
    return _answer(b"null")


def _step(
    work: Callable[[Session, Device, str, dict[str, Any], datetime], Any],
) -> Callable[[wire.SyncHeader, bytes], Response]:
    """A step of a normal sync: the device's key, its sync under way (409 for another
    session id), the step's own work, committed as one transaction."""

    def handler(header: wire.SyncHeader, body: bytes) -> Response:
        request_ = wire.json_object(body)
        device = _device(header)
        session = begin_writing()
        result = work(session, device, header.session, request_, utcnow())
        session.commit()
        return _answer(wire.encode_json(result))

    return handler


METHODS: dict[str, Callable[[wire.SyncHeader, bytes], Response]] = {
    "hostKey": host_key,
    "meta": meta,
    "start": _step(lambda s, d, k, b, now: normal.start(s, d, k, b, now)),
    "applyGraves": _step(lambda s, d, k, b, now: normal.apply_graves(s, d, k, b, now)),
    "applyChanges": _step(lambda s, d, k, b, now: normal.apply_changes(s, d, k, b, now)),
    "chunk": _step(lambda s, d, k, b, now: normal.chunk(s, d, k, now)),
    "applyChunk": _step(lambda s, d, k, b, now: normal.apply_chunk(s, d, k, b, now)),
    "sanityCheck2": _step(lambda s, d, k, b, now: normal.sanity_check(s, d, k, b)),
    "finish": _step(_finish),
    "download": download_collection,
    "upload": upload_collection,
    "abort": abort,
}


@bp.post("/sync/<method>")
def sync(method: str) -> Response:
    header = _header()
    handler = METHODS.get(method)
    if handler is None:
        raise wire.Refused(HTTPStatus.NOT_FOUND, f"no sync method {method!r}")
    return handler(header, _body())


def _media_answer(data: Any) -> Response:
    return _answer(wire.encode_json({"data": data, "err": ""}))


def _media_begin(device: Device, header: wire.SyncHeader, body: bytes) -> Response:
    wire.json_object(body)
    # The host key again where older servers gave a session key (clients send it back).
    return _media_answer({"usn": media_folder.last_usn(db(), device.user_id), "sk": header.key})


def _media_changes(device: Device, header: wire.SyncHeader, body: bytes) -> Response:
    last = wire.json_object(body).get("lastUsn")
    return _media_answer(media.changes_after(db(), device.user_id, last))


def _media_sanity(device: Device, header: wire.SyncHeader, body: bytes) -> Response:
    local = wire.json_object(body).get("local")
    return _media_answer(media.sanity(db(), device.user_id, local))


def _media_download(device: Device, header: wire.SyncHeader, body: bytes) -> Response:
    names = wire.json_object(body).get("files")
    return _answer(media.download_zip(db(), device.user_id, names))


def _media_upload(device: Device, header: wire.SyncHeader, body: bytes) -> Response:
    limit = int(current_app.config["SYNC_MAX_BYTES"]) * wire.UNCOMPRESSED_FACTOR
    changes = media.read_upload(body, max_total=limit)
    session = begin_writing()
    quota = int(current_app.config["MEDIA_QUOTA_MB"])
    try:
        processed, usn = media_folder.apply_changes(
            session, device.user_id, changes, quota_mb=quota, now=utcnow()
        )
    except media_folder.MediaQuotaExceeded as exc:
        session.rollback()
        # Anki shows a media answer's `err` to the person as it is: in their language.
        user = session.get(User, device.user_id)
        with force_locale(user.locale if user is not None else "en"):
            message = _(
                "Your media files would take more than the %(quota)s MB this service keeps for "
                "you. Delete unused media (Tools > Check Media in Anki) and sync again.",
                quota=format_decimal(exc.quota_mb),
            )
        return _answer(wire.encode_json({"err": message}))
    session.commit()
    return _media_answer([processed, usn])


MEDIA_METHODS: dict[str, Callable[[Device, wire.SyncHeader, bytes], Response]] = {
    "begin": _media_begin,
    "mediaChanges": _media_changes,
    "uploadChanges": _media_upload,
    "downloadFiles": _media_download,
    "mediaSanity": _media_sanity,
}


@bp.post("/msync/<method>")
def media_sync(method: str) -> Response:
    header = _header()
    handler = MEDIA_METHODS.get(method)
    if handler is None:
        raise wire.Refused(HTTPStatus.NOT_FOUND, f"media method {method!r} is not served")
    device = _device(header)
    return handler(device, header, _body())


def _status(status: int, detail: str, headers: dict[str, str] | None = None) -> Response:
    current_app.logger.info("sync %s refused (%d): %s", request.path, status, detail)
    return Response(
        HTTPStatus(status).phrase,
        status=status,
        content_type="text/plain; charset=utf-8",
        headers=headers,
    )


@bp.errorhandler(wire.Refused)
def _refused(exc: wire.Refused) -> Response:
    return _status(exc.status, exc.detail)


@bp.errorhandler(RateLimited)
def _rate_limited(exc: RateLimited) -> Response:
    return _status(HTTPStatus.TOO_MANY_REQUESTS, exc.detail, {"Retry-After": str(exc.retry_after)})


@bp.errorhandler(TooMuchContention)
def _contention(exc: TooMuchContention) -> Response:
    headers = {"Retry-After": str(exc.retry_after)}
    return _status(HTTPStatus.SERVICE_UNAVAILABLE, exc.detail, headers)


@bp.errorhandler(NotAuthenticated)
def _not_authenticated(exc: NotAuthenticated) -> Response:
    return _status(HTTPStatus.FORBIDDEN, exc.detail)  # Anki: "sign in again"


@bp.errorhandler(FlashcardsError)
def _domain_error(exc: FlashcardsError) -> Response:
    return _status(HTTPStatus.BAD_REQUEST, exc.detail)


@bp.errorhandler(HTTPException)
def _http_error(exc: HTTPException) -> Response:
    return _status(exc.code or 500, exc.description or "")


@bp.errorhandler(DBAPIError)
def _database_error(exc: DBAPIError) -> Any:
    if not database_unavailable(exc):
        raise exc
    headers = {"Retry-After": str(UNAVAILABLE_RETRY_AFTER)}
    return _status(HTTPStatus.SERVICE_UNAVAILABLE, "database unavailable", headers)
