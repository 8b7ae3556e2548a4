"""CSRF protection for the HTML pages: one random token per session, checked on every write.

Forms carry it as the `csrf_token` field, fetch() calls as the `X-CSRF-Token` header. The JSON
API under /api/ authenticates with bearer tokens, which a browser never sends on its own, so
it needs no CSRF token.
"""

from __future__ import annotations

import hmac
import secrets

from flask import Flask, abort, request, session

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
FIELD = "csrf_token"
HEADER = "X-CSRF-Token"
# Anki sync (/sync/, /msync/) signs each request with its host key.
EXEMPT_PREFIXES = ("/api/", "/static/", "/sync/", "/msync/")


def token() -> str:
    value = session.get(FIELD)
    if not isinstance(value, str):
        value = new_token()
    return value


def new_token() -> str:
    value = secrets.token_urlsafe(32)
    session[FIELD] = value
    return value


def _check() -> None:
    if request.method in SAFE_METHODS or request.path.startswith(EXEMPT_PREFIXES):
        return
    expected = session.get(FIELD)
    sent = request.headers.get(HEADER) or request.form.get(FIELD, "")
    if not isinstance(expected, str) or not hmac.compare_digest(
        expected.encode(), sent.encode("utf-8", "surrogatepass")
    ):
        abort(400, description="csrf")


def init_app(app: Flask) -> None:
    app.before_request(_check)
    app.jinja_env.globals["csrf_token"] = token
