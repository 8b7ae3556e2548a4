"""A request body the server cannot read is the client's error (400), not the app's (500).

With `Transfer-Encoding: chunked` the server decodes the chunks while the app reads the body,
so a malformed chunk size surfaces inside the app as the server's own exception: gunicorn's
`ParseException`s (`InvalidChunkSize`), `NoMoreData` and werkzeug's dev server's `OSError`.
Reads of such a body go through `GuardedInput`, which turns them into werkzeug's
`BadRequest`, answered like any other 400 (problem+json on the API, the error page on the
web). A body with a Content-Length is read by werkzeug itself, which already answers a short
one with a 400.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING

from gunicorn.http.errors import ParseException
from werkzeug.exceptions import BadRequest

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

# What a server's reader of a chunked body raises for a body that is not one.
BODY_ERRORS = (OSError, ParseException)
MALFORMED = "the request body is malformed: its chunked transfer encoding cannot be read"


class GuardedInput:
    """`wsgi.input` whose read errors are a 400."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def read(self, size: int | None = -1) -> bytes:
        try:
            return self.stream.read(-1 if size is None else size)
        except BODY_ERRORS:
            raise BadRequest(MALFORMED) from None

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return self.stream.readline(-1 if size is None else size)
        except BODY_ERRORS:
            raise BadRequest(MALFORMED) from None

    def readlines(self, hint: int = -1) -> list[bytes]:
        try:
            return self.stream.readlines(hint)
        except BODY_ERRORS:
            raise BadRequest(MALFORMED) from None

    def __iter__(self) -> Iterator[bytes]:
        while line := self.readline():
            yield line


class ChunkedBodyGuard:
    """WSGI middleware: a chunked request's `wsgi.input` becomes a `GuardedInput`."""

    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            environ["wsgi.input"] = GuardedInput(environ["wsgi.input"])
        return self.app(environ, start_response)
