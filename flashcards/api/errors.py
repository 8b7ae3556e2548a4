"""Every API error as application/problem+json (RFC 9457), and strict request-body parsing.

FlashcardsError subclasses carry their status and title; Werkzeug's HTTP errors (routing 404
and 405, 413 from MAX_CONTENT_LENGTH) become problems too when the URL is under /api/. The
request's session is closed without commit by teardown, so nothing partial is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from flask import Response, current_app, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from ..errors import (
    BadRequest,
    FlashcardsError,
    InvalidInput,
    Unauthorized,
    UnsupportedMediaType,
)
from ..storage.engine import database_unavailable
from . import bp

PROBLEM_MIMETYPE = "application/problem+json"
API_PREFIX = "/api/"
# What a client waits before retrying when the database is out of reach (a restart, a
# failover): long enough not to pile on, short enough for a person at the keyboard.
UNAVAILABLE_RETRY_AFTER = 5


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status}
    body["detail"] = detail
    if field is not None:
        body["field"] = field
    response = Response(
        json.dumps(body, ensure_ascii=False), status=status, mimetype=PROBLEM_MIMETYPE
    )
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


@bp.errorhandler(FlashcardsError)
def _flashcards_error(exc: FlashcardsError) -> Response:
    headers: dict[str, str] = {}
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = 'Bearer realm="flashcards"'
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        headers["Retry-After"] = str(int(retry_after))
    return problem(exc.status, exc.title, exc.detail, field=exc.field, headers=headers)


def http_problem(exc: HTTPException) -> Response:
    status = exc.code or 500
    headers = {}
    if isinstance(exc, MethodNotAllowed) and exc.valid_methods:
        headers["Allow"] = ", ".join(sorted(exc.valid_methods))
    detail = exc.description or exc.name
    if exc.code == 413:
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        detail = f"the request body is larger than the limit of {limit} bytes"
    return problem(status, exc.name, detail, headers=headers)


@bp.errorhandler(HTTPException)
def _api_http_error(exc: HTTPException) -> Response:
    return http_problem(exc)


@bp.errorhandler(Exception)
def _unexpected(exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        return http_problem(exc)
    if database_unavailable(exc):
        current_app.logger.error(
            "database unavailable on %s %s", request.method, request.path, exc_info=exc
        )
        return problem(
            503,
            "Service unavailable",
            "the database cannot be reached right now; retry after Retry-After seconds",
            headers={"Retry-After": str(UNAVAILABLE_RETRY_AFTER)},
        )
    current_app.logger.exception("unhandled error on %s %s", request.method, request.path)
    return problem(500, "Internal server error", "an unexpected error occurred; it has been logged")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# Built once: `json.loads` given an option builds a decoder (and its scanner) on every call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _loads(data: bytes) -> Any:
    """`json.loads(data, parse_constant=_reject_constant)`, decoding the bytes as it does."""
    return _DECODER.decode(data.decode(json.detect_encoding(data), "surrogatepass"))


def _has_lone_surrogate(body: Any) -> bool:
    # json accepts "\\ud800" alone; the database driver would then fail to encode it (a 500).
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_nul(body: Any) -> bool:
    pending = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return True
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def json_body() -> dict[str, Any]:
    """The request body as a JSON object, or a 400/413/415/422 problem saying what is wrong."""
    mimetype = request.mimetype
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise UnsupportedMediaType(
            "the request body must be JSON, sent with Content-Type: application/json"
        )
    data = request.get_data(cache=True)  # raises 413 above MAX_CONTENT_LENGTH
    try:
        body = _loads(data)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError and undecodable bytes.
        raise BadRequest(f"the request body is not valid JSON: {exc}") from None
    if (b"\\ud" in data or b"\\uD" in data) and _has_lone_surrogate(body):
        raise BadRequest("the request body has a lone UTF-16 surrogate escape, which is not text")
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object")
    if b"\\u0000" in data:
        # No text column takes it: PostgreSQL refuses NUL in text (a 500 if it got there).
        for name, value in body.items():
            if _has_nul(value) or "\x00" in name:
                raise InvalidInput(f"{name} must not contain NUL characters", field=name)
    return body


def reject_unknown(body: dict[str, Any], allowed: Iterable[str]) -> None:
    allowed = set(allowed)
    for name in body:
        if name not in allowed:
            raise InvalidInput(
                f"unknown field {name!r}; allowed: {', '.join(sorted(allowed))}", field=name
            )


def string_field(
    body: dict[str, Any],
    name: str,
    *,
    required: bool = True,
    default: str = "",
    max_length: int = 1000,
) -> str:
    """A string member of the body; a missing or mistyped one is a 422 naming the field."""
    if name not in body:
        if required:
            raise InvalidInput(f"{name} is required", field=name)
        return default
    value = body[name]
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string", field=name)
    if len(value) > max_length:
        raise InvalidInput(f"{name} may have at most {max_length} characters", field=name)
    return value
