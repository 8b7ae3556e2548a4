"""Security headers on every response (CSP without inline script, no framing, no sniffing),
and the signed session cookie's interface."""

from __future__ import annotations

from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
NO_SESSION_PREFIXES = ("/api/",)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def _add_headers(response: Response) -> Response:
    # One pass over the headers a view set: Headers.setdefault scans them once per name.
    present = {name.lower() for name, _value in response.headers}
    for name, value in HEADERS.items():
        if name.lower() not in present:
            response.headers.add(name, value)
    if response.mimetype == "text/html" and "cache-control" not in present:
        # Pages show personal data; a shared cache or the back button must not replay them stale.
        response.headers.add("Cache-Control", "no-store")
    return response


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie sessions, minus work that requests without a session do.

    The JSON API authenticates with bearer tokens and never reads the session, so its
    requests get Flask's null session: no cookie parsing, nothing to save. Elsewhere the
    signing serializer is built once per key; Flask builds it on every request.
    """

    _cached: tuple[Any, Any] | None = None

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if request.path.startswith(NO_SESSION_PREFIXES):
            return self.make_null_session(app)
        return super().open_session(app, request)

    def get_signing_serializer(self, app: Flask) -> Any:
        key = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        cached = self._cached
        if cached is None or cached[0] != key:
            cached = self._cached = (key, super().get_signing_serializer(app))
        return cached[1]


def init_app(app: Flask) -> None:
    app.session_interface = SessionInterface()
    app.after_request(_add_headers)
