"""Security headers on every response (CSP without inline script, no framing, no sniffing),
and the signed session cookie's interface."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from flask import Flask, Request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "media-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
NO_SESSION_PREFIXES = ("/api/", "/sync/", "/msync/")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


_HEADERS_BY_KEY = [(name.lower(), (name, value)) for name, value in HEADERS.items()]


class SecurityHeaders:
    """WSGI middleware: adds `HEADERS` to every response, unless the app set one of them.

    At the WSGI edge rather than in an `after_request` hook: werkzeug checks each header added
    to a response object with a regular expression, a measurable share of the API's busiest
    requests for six constants; and responses made outside the request's handling get them too.
    """

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            present = {name.lower(): value for name, value in headers}
            added = [header for key, header in _HEADERS_BY_KEY if key not in present]
            if "cache-control" not in present:
                # Pages, API answers and downloads show personal data: a shared cache or the
                # back button must not replay them. Static files set their own caching.
                added.append(("Cache-Control", "no-store"))
            return start_response(status, headers + added, exc_info)

        return self.app(environ, start)


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie sessions, except on the JSON API: it authenticates with bearer
    tokens and never reads the session, so its requests get Flask's null session (no cookie
    parsing, nothing to save)."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if request.path.startswith(NO_SESSION_PREFIXES):
            return self.make_null_session(app)
        return super().open_session(app, request)


def init_app(app: Flask) -> None:
    app.session_interface = SessionInterface()
    app.wsgi_app = SecurityHeaders(app.wsgi_app)  # type: ignore[method-assign]
